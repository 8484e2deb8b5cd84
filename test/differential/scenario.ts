// A differential scenario (cohorts, one user's events, imported data) built from a seed, and its printable
// reproduction: what a failing test shows so that a mismatch can be replayed by hand.

import type { EngineEvent } from '../../engine/api.js';
import type { ReferenceCohort } from '../reference/index.js';
import { createRng, randomContext, randomEvents, randomClause, randomFlappyQuery, randomQuery, randomTransition, type RandomContext } from './generate.js';

export interface Scenario {
  readonly seed: number;
  readonly cohorts: readonly ReferenceCohort[];
  readonly events: readonly EngineEvent[];
  readonly ctx: RandomContext;
}

export interface ScenarioSize {
  readonly cohorts: number;
  readonly events: number;
  /** Cohort 1 flips often and the others mostly name lower cohorts in transition clauses (E10–E12). */
  readonly transitionHeavy?: boolean;
}

/** Cohorts with codes 1..k (transition clauses name lower codes), a stream of events and a fixed context. */
export function buildScenario(seed: number, size: ScenarioSize): Scenario {
  const rng = createRng(seed);
  const events = randomEvents(rng, size.events);
  const instants = effectiveTimes(events);
  const ctx = randomContext(rng, instants);
  const cohorts = Array.from({ length: size.cohorts }, (_, i) => {
    const options = { code: i + 1, instants };
    if (size.transitionHeavy !== true) return { code: i + 1, query: randomQuery(rng, options) };
    if (i === 0) return { code: 1, query: randomFlappyQuery(rng) };
    const query = rng.chance(0.6) ? randomTransition(rng, options) : { and: [randomTransition(rng, options), randomClause(rng, options)] };
    return { code: i + 1, query };
  });
  return { seed, cohorts, events, ctx };
}

function effectiveTimes(events: readonly EngineEvent[]): number[] {
  let last = -Infinity;
  return events.map((event) => (last = Math.max(last, event.time)));
}

/** JSON of a scenario with ISO times beside epoch ms, for a failure message. */
export function describeScenario(scenario: Scenario): string {
  const events = scenario.events.map((event, index) => ({ index, iso: new Date(event.time).toISOString(), ...event }));
  const lines = [
    `seed ${scenario.seed}`,
    `cohorts:`,
    ...scenario.cohorts.map((cohort) => `  ${cohort.code}: ${JSON.stringify(cohort.query)}`),
    `events:`,
    ...events.map((event) => `  ${JSON.stringify(event)}`),
    `ctx: imported segments ${JSON.stringify(scenario.ctx.segments)}; connection rows ${JSON.stringify(scenario.ctx.rows)}`,
  ];
  return lines.join('\n');
}
