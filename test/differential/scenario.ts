// A differential scenario (cohorts, one user's events and re-evaluations, imported data) built from a seed, and its
// printable reproduction: what a failing test shows so that a mismatch can be replayed by hand.

import type { EngineEvent, SegmentContext } from '../../engine/api.js';
import { evaluateAt, newUserState, nextDeadline, segment } from '../../engine/index.js';
import { compileScenarioPlan } from './compare.js';
import { isReevaluation, type ReferenceCohort } from '../reference/index.js';
import { DAY, HOUR, MINUTE } from './events.js';
import {
  changeContext,
  createRng,
  randomContext,
  randomEvents,
  randomClause,
  randomFlappyQuery,
  randomQuery,
  randomTransition,
  type RandomContext,
  type Rng,
} from './generate.js';

/** E20: a re-evaluation at `evaluateAt` with the user's new imported data (which later events also see). */
export interface ScenarioReevaluation {
  readonly evaluateAt: number;
  readonly ctx: RandomContext;
}

export type ScenarioInput = EngineEvent | ScenarioReevaluation;

export interface Scenario {
  readonly seed: number;
  /** Cohorts marked `inactive` are not in the plan; they are passed as `inactive` codes (E21). */
  readonly cohorts: readonly ReferenceCohort[];
  readonly inputs: readonly ScenarioInput[];
  /** The imported data until the first re-evaluation. */
  readonly ctx: RandomContext;
}

export interface ScenarioSize {
  readonly cohorts: number;
  readonly events: number;
  /** Cohort 1 flips often and the others mostly name lower cohorts in transition clauses (E10–E12). */
  readonly transitionHeavy?: boolean;
  /** Chance, before each event (and once at the end), of a re-evaluation with changed imported data (E20, D27). */
  readonly reevaluations?: number;
  /** Chance that a cohort (other than the last) is inactive: in the registry, not in the plan (E21). */
  readonly inactive?: number;
  /**
   * D36: chance, before each event (and once at the end), of clock advances: re-evaluations keeping the same ctx, at
   * a random offset, after a long silence (> 30 min), or at the engine's `nextDeadline` exactly / one ms before it.
   * Cohort 1 is then often session-scoped (`this_session`), so the session timeout makes transitions.
   */
  readonly clock?: number;
  /** `first N` / `last N` of 33–80 (generate.ts QueryOptions.wideCounts): needs more events of a name than N. */
  readonly wideCounts?: boolean;
}

/** A clock advance still to be placed at the engine's next deadline (`offset` 0) or one ms before it (-1). */
interface DeadlineMarker {
  readonly deadline: 0 | -1;
}

type DraftInput = ScenarioInput | DeadlineMarker;

/** Cohorts with codes 1..k (transition clauses name lower codes), a stream of events and a fixed context. */
export function buildScenario(seed: number, size: ScenarioSize): Scenario {
  const rng = createRng(seed);
  const events = randomEvents(rng, size.events);
  const instants = effectiveTimes(events);
  const ctx = randomContext(rng, instants);
  const cohorts = Array.from({ length: size.cohorts }, (_, i) => {
    const options = { code: i + 1, instants, ...(size.wideCounts === true ? { wideCounts: true } : {}) };
    if (size.transitionHeavy !== true) return { code: i + 1, query: randomQuery(rng, options) };
    if (i === 0 && size.clock !== undefined && rng.chance(0.6)) return { code: 1, query: randomSessionQuery(rng) };
    if (i === 0) return { code: 1, query: randomFlappyQuery(rng) };
    const query = rng.chance(0.6) ? randomTransition(rng, options) : { and: [randomTransition(rng, options), randomClause(rng, options)] };
    return { code: i + 1, query };
  });
  // Re-evaluations and inactive cohorts draw from their own stream, so the seeds above keep their events.
  const extra = createRng(seed ^ 0xe20e20);
  const inactiveChance = size.inactive ?? 0;
  const marked = cohorts.map((cohort, i) => (i < cohorts.length - 1 && extra.chance(inactiveChance) ? { ...cohort, inactive: true } : cohort));
  const withData = size.reevaluations === undefined ? events : interleaveReevaluations(extra, events, ctx, instants, size.reevaluations);
  if (size.clock === undefined) return { seed, cohorts: marked, inputs: withData, ctx };
  // Clock advances draw from a third stream, so the runs above keep their inputs.
  const draft = interleaveClock(createRng(seed ^ 0xd36d36), withData, size.clock, ctx);
  return { seed, cohorts: marked, inputs: placeDeadlines(marked, draft, ctx), ctx };
}

/** Session-scoped queries (D31, D36) whose members leave when the session times out. */
function randomSessionQuery(rng: Rng): unknown {
  return rng.pick<unknown>([
    { event: rng.pick(['Click', 'Pageview', 'PageviewEngagement']), during: 'this_session' },
    { event: 'Pageview', during: 'this_session', frequency: { equal_to: 0 } },
    { event: 'Click', during: 'this_session', frequency: { less_than: 2 } },
    { engaged_time: { seconds: { greater_than_or_equal_to: rng.pick([0, 1, 5]) }, during: 'this_session' } },
    { engaged_views: { times: { greater_than_or_equal_to: 1 }, engaged_time: { greater_than_or_equal_to: 0 }, during: 'this_session' } },
    { and: [{ event: 'Pageview', during: { the_last: { value: rng.pick([1, 5, 31]), unit: 'minutes' } } }, { event: 'Click', during: 'this_session' }] },
  ]);
}

/** Clock advances after silences: random offsets, across the session timeout, far later, and at deadlines. */
const CLOCK_OFFSETS = [1, 1000, MINUTE, 5 * MINUTE, 30 * MINUTE - 1, 30 * MINUTE, 30 * MINUTE + 1, 31 * MINUTE, 45 * MINUTE, 2 * HOUR, DAY];

function interleaveClock(rng: Rng, inputs: readonly ScenarioInput[], chance: number, first: RandomContext): DraftInput[] {
  const draft: DraftInput[] = [];
  let latest = Number.NEGATIVE_INFINITY;
  let ctx = first;
  const advance = (): void => {
    if (!Number.isFinite(latest)) return;
    const roll = rng.next();
    if (roll < 0.3) draft.push({ deadline: 0 });
    else if (roll < 0.5) draft.push({ deadline: -1 });
    else {
      const evaluateAt = latest + rng.pick(CLOCK_OFFSETS);
      latest = evaluateAt;
      draft.push({ evaluateAt, ctx });
    }
  };
  for (const input of inputs) {
    while (rng.chance(chance)) advance();
    draft.push(input);
    if (isReevaluation(input)) {
      ctx = input.ctx as RandomContext;
      latest = Math.max(latest, input.evaluateAt);
    } else latest = Math.max(latest, input.time);
  }
  while (rng.chance(0.7)) advance();
  return draft;
}

/**
 * Replaces each deadline marker by a re-evaluation (same ctx as before it) at the engine's `nextDeadline` after the
 * inputs so far (or one ms before it); a marker with no deadline (+Infinity) becomes a long silence (2 hours).
 * Running the engine here fixes the instants, so the scenario stays a plain list of inputs (shrinkable, printable).
 */
function placeDeadlines(cohorts: readonly ReferenceCohort[], draft: readonly DraftInput[], first: RandomContext): ScenarioInput[] {
  const plan = compileScenarioPlan(cohorts);
  let state = newUserState();
  let ctx: SegmentContext = first;
  let latest = Number.NEGATIVE_INFINITY;
  const inputs: ScenarioInput[] = [];
  for (const input of draft) {
    let concrete: ScenarioInput;
    if ('deadline' in input) {
      if (!Number.isFinite(latest)) continue;
      const deadline = nextDeadline(plan, state);
      const evaluateAt = Number.isFinite(deadline) ? deadline + input.deadline : latest + 2 * HOUR;
      concrete = { evaluateAt, ctx: ctx as RandomContext };
    } else concrete = input;
    inputs.push(concrete);
    if (isReevaluation(concrete)) {
      ctx = concrete.ctx;
      state = evaluateAt(plan, state, concrete.evaluateAt, ctx).state;
      latest = Math.max(latest, concrete.evaluateAt);
    } else {
      state = segment(plan, state, [concrete], ctx).state;
      latest = Math.max(latest, concrete.time);
    }
  }
  return inputs;
}

/** Offsets of a re-evaluation's now from the latest effective time: late, equal, across window and session edges. */
const REEVALUATION_OFFSETS = [-HOUR, -MINUTE, 0, 0, 1, 1000, MINUTE, 2 * MINUTE, 30 * MINUTE - 1, 30 * MINUTE, 31 * MINUTE, HOUR, DAY, 8 * DAY, 31 * DAY];

function interleaveReevaluations(
  rng: Rng,
  events: readonly EngineEvent[],
  first: RandomContext,
  instants: readonly number[],
  chance: number,
): ScenarioInput[] {
  const inputs: ScenarioInput[] = [];
  let ctx = first;
  let latest = Number.NEGATIVE_INFINITY;
  const reevaluate = (): void => {
    const base = Number.isFinite(latest) ? latest : (events[0]?.time ?? 0);
    // Now and then exactly at a window edge of an earlier event's time.
    const evaluateAt = rng.chance(0.2) && instants.length > 0 ? rng.pick(instants) + rng.pick([MINUTE, 2 * MINUTE, HOUR, DAY]) : base + rng.pick(REEVALUATION_OFFSETS);
    ctx = changeContext(rng, ctx, instants);
    inputs.push({ evaluateAt, ctx });
    latest = Math.max(latest, evaluateAt);
  };
  for (const event of events) {
    while (rng.chance(chance)) reevaluate();
    inputs.push(event);
    latest = Math.max(latest, event.time);
  }
  if (rng.chance(0.5)) reevaluate();
  return inputs;
}

function effectiveTimes(events: readonly EngineEvent[]): number[] {
  let last = -Infinity;
  return events.map((event) => (last = Math.max(last, event.time)));
}

/** JSON of a scenario with ISO times beside epoch ms, for a failure message. */
export function describeScenario(scenario: Scenario): string {
  const describeContext = (ctx: RandomContext): string => `imported segments ${JSON.stringify(ctx.segments)}; connection rows ${JSON.stringify(ctx.rows)}`;
  const lines = [
    `seed ${scenario.seed}`,
    `cohorts:`,
    ...scenario.cohorts.map((cohort) => `  ${cohort.code}${cohort.inactive === true ? ' (inactive)' : ''}: ${JSON.stringify(cohort.query)}`),
    `ctx: ${describeContext(scenario.ctx)}`,
    `steps:`,
    ...scenario.inputs.map((input, index) =>
      isReevaluation(input)
        ? `  ${index} re-evaluate at ${input.evaluateAt} (${new Date(input.evaluateAt).toISOString()}) with ctx: ${describeContext(input.ctx as RandomContext)}`
        : `  ${index} ${JSON.stringify({ iso: new Date(input.time).toISOString(), ...input })}`,
    ),
  ];
  return lines.join('\n');
}
