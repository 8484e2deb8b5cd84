// In-process benchmark of the segment step: events/s on one thread with 100 mixed cohorts and 10,000 users, the
// per-event cost with long vs short history, encoded state size, and the same work through the reference evaluator
// (ratio). Seeded, fixed settings; JSON to stdout.
// Run: npm run build && node dist/bench/engine.js

import { loadavg } from 'node:os';
import { pathToFileURL } from 'node:url';
import {
  compilePlan,
  decodeState,
  encodeState,
  newUserState,
  segment,
  type CohortDefinition,
  type EngineEvent,
  type Plan,
  type SegmentContext,
  type UserState,
} from '../engine/index.js';
import { SampleGenerator } from '../test/support/sample-cohorts.js';
import { ReferenceRun } from '../test/reference/index.js';
import { PROVIDERS, toWireQuery } from './workload/cohorts.js';
import { heapAllocated } from './allocated.js';

export interface EngineBenchOptions {
  readonly seed: number;
  readonly cohorts: number;
  readonly users: number;
  /** Events per user in each throughput run (one event per segment call, users interleaved). */
  readonly eventsPerUser: number;
  readonly runs: number;
  /** The large working set: the same throughput measurement with this many users (0 skips it). */
  readonly largeUsers: number;
  /** Events per user in each of its runs (its users x this per run; fewer per user, so a run stays seconds long). */
  readonly largeEventsPerUser: number;
  readonly longHistory: number;
  readonly shortHistory: number;
  /** Users and repetitions of the history comparison (each repetition: 10 events per user from a restored state). */
  readonly historyUsers: number;
  readonly historyRepetitions: number;
  /** Reference ratio: users with `referenceHistory` prior events, `referenceEvents` new events timed per user. */
  readonly referenceHistory: number;
  readonly referenceUsers: number;
  readonly referenceEvents: number;
}

export const DEFAULT_ENGINE_BENCH: EngineBenchOptions = {
  seed: 42,
  cohorts: 100,
  users: 10_000,
  eventsPerUser: 30,
  runs: 3,
  largeUsers: 100_000,
  largeEventsPerUser: 5,
  longHistory: 100_000,
  shortHistory: 10,
  historyUsers: 10,
  historyRepetitions: 100,
  referenceHistory: 10_000,
  referenceUsers: 2,
  referenceEvents: 3,
};

export interface EngineBenchResult {
  readonly settings: EngineBenchOptions;
  readonly clauseKinds: Record<string, number>;
  readonly slots: number;
  /** Wall clock, median of the runs; target >= 300,000. */
  readonly eventsPerSecond: number;
  readonly eventsPerSecondRuns: number[];
  /** The same runs measured in this process's CPU time (less sensitive to other load on the machine). */
  readonly eventsPerCpuSecond: number;
  /**
   * Bytes the timed runs allocated on the V8 heap per event, garbage included (bench/allocated.ts: about; what the
   * young generation's collections are paid for). Absent in results of older runs.
   */
  readonly heapBytesPerEvent?: number;
  /**
   * A new plan's first events, which a server meets after each plan change: its generated code is compiled and
   * thrown away again as its branches are first reached (engine/PERFORMANCE.md). Wall clock over the throughput
   * streams' first `1 + eventsPerUser` rounds from fresh states, through a plan compiled again from the same cohorts
   * (`cold`, the engine's own code already warm) and through the measured plan (`warm`), alternated twice; medians.
   * Absent in results of older runs.
   */
  readonly newPlan?: { readonly coldEventsPerSecond: number; readonly warmEventsPerSecond: number; readonly coldRuns: number[]; readonly warmRuns: number[] };
  /**
   * The same measurement with `largeUsers` users (a working set far beyond the CPU caches: each user's state is
   * usually out of cache at its next event): wall clock median, the runs, CPU-time median. Undefined when skipped.
   */
  readonly largeWorkingSet?: { readonly users: number; readonly eventsPerSecond: number; readonly eventsPerSecondRuns: number[]; readonly eventsPerCpuSecond: number };
  /**
   * The same streams with each event decoded per call from its JSON (fresh property objects, as the ingest pipeline
   * hands them over, instead of the pool's shared, cache-warm ones): one run after the timed ones, in CPU time.
   * `engine` excludes the decode (measured alone over the same sequence and subtracted); `withDecode` includes it.
   */
  readonly decodedEventsPerCpuSecond: { readonly engine: number; readonly withDecode: number; readonly decodeNsPerEvent: number };
  /** 1-minute load average before / after the runs (the machine may be shared). */
  readonly loadAverage: [number, number];
  readonly nsPerEventShortHistory: number;
  readonly nsPerEventLongHistory: number;
  /** long / short; target <= 1.2. */
  readonly historyCostRatio: number;
  readonly stateBytesPerUser: number;
  readonly stateBytesPerUserPerCohort: number;
  readonly longHistoryStateBytes: number;
  /** One more event at `referenceHistory` prior events, all cohorts (transition clauses included). */
  readonly engineNsPerEventAtReferenceHistory: number;
  readonly referenceNsPerEvent: number;
  /** reference / engine; target >= 1000. */
  readonly referenceRatio: number;
  /** Whether the reference's memberships after the timed events equal the engine's (a check on the comparison). */
  readonly referenceAgrees: boolean;
}

const EVENTS_PER_REPETITION = 10;

/** The bench's workload: its cohorts and their plan, the users' contexts (one of 64 per user) and the event pool. */
export interface EngineWorkload {
  readonly cohorts: CohortDefinition[];
  readonly plan: Plan;
  readonly contexts: SegmentContext[];
  readonly pool: EngineEvent[];
}

export function engineWorkload(seed: number, cohortCount: number): EngineWorkload {
  const gen = new SampleGenerator(seed);
  const cohorts = gen.cohorts(cohortCount);
  const plan = compilePlan(cohorts, 1);
  const contexts = Array.from({ length: 64 }, () => gen.context());
  const pool = gen.events(5_000);
  return { cohorts, plan, contexts, pool };
}

export function runEngineBench(overrides: Partial<EngineBenchOptions> = {}): EngineBenchResult {
  const settings = { ...DEFAULT_ENGINE_BENCH, ...overrides };
  const { cohorts, plan, contexts, pool } = engineWorkload(settings.seed, settings.cohorts);
  const clauseKinds: Record<string, number> = {};
  for (const c of cohorts) for (const group of c.query.and) for (const clause of group.or) clauseKinds[clause.kind] = (clauseKinds[clause.kind] ?? 0) + 1;

  // Throughput: steady state (every user already has state), one event per call, users interleaved (a partition
  // owner's worst case for locality). The warm-up round creates the users; each run continues their streams.
  const loadBefore = loadavg()[0] as number;
  const main = measureThroughput(plan, pool, contexts, settings.users, settings.eventsPerUser, settings.runs, 1);
  const { schedule, states } = main;
  const eventsPerSecondRuns = main.wallRates;
  const loadAfter = loadavg()[0] as number;
  const decoded = decodedThroughput(plan, pool, schedule, states, contexts, settings, settings.runs + 1);
  const newPlan = newPlanThroughput(plan, cohorts, schedule, contexts, settings.eventsPerUser);
  let bytes = 0;
  for (const state of states) bytes += encodeState(state).length;
  const stateBytesPerUser = bytes / states.length;

  // The large working set, after the main figures (its states are dropped before the history runs).
  const large = largeWorkingSet(plan, pool, contexts, settings);

  // History: the same work from states with short vs long history.
  const short = historyCost(plan, pool, contexts, settings, settings.shortHistory);
  const long = historyCost(plan, pool, contexts, settings, settings.longHistory);
  const reference = referenceCost(plan, cohorts, pool, contexts, settings);

  return {
    settings,
    clauseKinds,
    slots: plan.slotKeys.length,
    eventsPerSecond: median(eventsPerSecondRuns),
    eventsPerSecondRuns,
    eventsPerCpuSecond: median(main.cpuRates),
    heapBytesPerEvent: main.heapBytesPerEvent,
    newPlan,
    ...(large === undefined ? {} : { largeWorkingSet: large }),
    decodedEventsPerCpuSecond: decoded,
    loadAverage: [loadBefore, loadAfter],
    nsPerEventShortHistory: short.nsPerEvent,
    nsPerEventLongHistory: long.nsPerEvent,
    historyCostRatio: long.nsPerEvent / short.nsPerEvent,
    stateBytesPerUser,
    stateBytesPerUserPerCohort: stateBytesPerUser / settings.cohorts,
    longHistoryStateBytes: long.stateBytes,
    engineNsPerEventAtReferenceHistory: reference.engineNs,
    referenceNsPerEvent: reference.referenceNs,
    referenceRatio: reference.referenceNs / reference.engineNs,
    referenceAgrees: reference.agrees,
  };
}

/**
 * Steady-state throughput over `users` interleaved users, one event per segment call: a warm-up round that creates
 * every user's state, then `runs` timed rounds of `eventsPerUser` events per user; the streams hold `extraRounds`
 * more rounds for later runs. Rates in events per wall-clock second and per CPU second.
 */
function measureThroughput(
  plan: Plan,
  pool: readonly EngineEvent[],
  contexts: readonly SegmentContext[],
  users: number,
  eventsPerUser: number,
  runs: number,
  extraRounds: number,
): { schedule: Schedule; states: UserState[]; wallRates: number[]; cpuRates: number[]; heapBytesPerEvent: number } {
  const rounds = eventsPerUser * (runs + 1 + extraRounds);
  const schedule = scheduleOf(pool, users, rounds);
  const states: UserState[] = Array.from({ length: users }, () => newUserState());
  const cpuRates: number[] = [];
  const throughput = (run: number): number => {
    const cpu = process.cpuUsage();
    const start = process.hrtime.bigint();
    segmentRounds(plan, states, schedule, contexts, run * eventsPerUser, (run + 1) * eventsPerUser);
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    const used = process.cpuUsage(cpu);
    cpuRates.push((users * eventsPerUser) / ((used.user + used.system) / 1e6));
    return (users * eventsPerUser) / seconds;
  };
  throughput(0); // warm-up: creates every user's state
  cpuRates.length = 0;
  const timed = heapAllocated(() => Array.from({ length: runs }, (_, run) => throughput(run + 1)));
  const heapBytesPerEvent = timed.bytes / (runs * users * eventsPerUser);
  return { schedule, states, wallRates: timed.value, cpuRates, heapBytesPerEvent };
}

/** The throughput figure at `largeUsers` users (undefined when 0). */
function largeWorkingSet(
  plan: Plan,
  pool: readonly EngineEvent[],
  contexts: readonly SegmentContext[],
  settings: EngineBenchOptions,
): EngineBenchResult['largeWorkingSet'] {
  if (settings.largeUsers <= 0) return undefined;
  const run = measureThroughput(plan, pool, contexts, settings.largeUsers, settings.largeEventsPerUser, settings.runs, 0);
  return { users: settings.largeUsers, eventsPerSecond: median(run.wallRates), eventsPerSecondRuns: run.wallRates, eventsPerCpuSecond: median(run.cpuRates) };
}

/**
 * One more round of `eventsPerUser` events per user, each decoded per call from the JSON of its pool entry (the
 * stream's time kept), in CPU time; then the decode alone over the same sequence. Streams hold rounds for it.
 */
function decodedThroughput(
  plan: Plan,
  pool: readonly EngineEvent[],
  schedule: Schedule,
  states: readonly UserState[],
  contexts: readonly SegmentContext[],
  settings: EngineBenchOptions,
  run: number,
): { engine: number; withDecode: number; decodeNsPerEvent: number } {
  const wire = pool.map((event) => JSON.stringify(event));
  const from = run * settings.eventsPerUser;
  const to = from + settings.eventsPerUser;
  const decode = (user: number, round: number): EngineEvent => {
    const event = JSON.parse(wire[(user * 7919 + round) % wire.length] as string) as { time: number };
    event.time = (schedule.events[round * schedule.users + user] as EngineEvent).time;
    return event as EngineEvent;
  };
  let cpu = process.cpuUsage();
  for (let round = from; round < to; round++) {
    for (let user = 0; user < settings.users; user++) {
      segment(plan, states[user] as UserState, [decode(user, round)], contexts[user % contexts.length] as SegmentContext);
    }
  }
  let used = process.cpuUsage(cpu);
  const total = (used.user + used.system) / 1e6;
  let sink = 0;
  cpu = process.cpuUsage();
  for (let round = from; round < to; round++) for (let user = 0; user < settings.users; user++) sink += decode(user, round).time;
  used = process.cpuUsage(cpu);
  const decodeOnly = (used.user + used.system) / 1e6 + (sink === 0 ? 1e-9 : 0);
  const events = settings.users * settings.eventsPerUser;
  return { engine: events / Math.max(total - decodeOnly, 1e-9), withDecode: events / total, decodeNsPerEvent: (decodeOnly / events) * 1e9 };
}

/** EngineBenchResult.newPlan: a plan compiled again per cold pass, each followed by a pass through the warm `plan`. */
function newPlanThroughput(
  plan: Plan,
  cohorts: readonly CohortDefinition[],
  schedule: Schedule,
  contexts: readonly SegmentContext[],
  eventsPerUser: number,
): NonNullable<EngineBenchResult['newPlan']> {
  const users = schedule.users;
  const rounds = 1 + eventsPerUser;
  const pass = (through: Plan): number => {
    const states = Array.from({ length: users }, () => newUserState());
    const start = process.hrtime.bigint();
    segmentRounds(through, states, schedule, contexts, 0, rounds);
    return (rounds * users) / (Number(process.hrtime.bigint() - start) / 1e9);
  };
  const coldRuns: number[] = [];
  const warmRuns: number[] = [];
  for (let k = 1; k <= 2; k++) {
    coldRuns.push(pass(compilePlan(cohorts, plan.version + k)));
    warmRuns.push(pass(plan));
  }
  return { coldEventsPerSecond: median(coldRuns), warmEventsPerSecond: median(warmRuns), coldRuns, warmRuns };
}

/** Rounds [from, to) of the schedule through `plan`, one event per segment call, users interleaved. */
export function segmentRounds(plan: Plan, states: readonly UserState[], schedule: Schedule, contexts: readonly SegmentContext[], from: number, to: number): void {
  const users = schedule.users;
  const events = schedule.events;
  for (let round = from; round < to; round++) {
    for (let user = 0; user < users; user++) {
      segment(plan, states[user] as UserState, [events[round * users + user] as EngineEvent], contexts[user % contexts.length] as SegmentContext);
    }
  }
}

/** Every user's stream, round by round: user u's is `streamOf(pool, u * 7919, rounds, 2026-01-01 plus u seconds)`. */
export interface Schedule {
  readonly users: number;
  /** User u's event of round r at r * users + u. */
  readonly events: EngineEvent[];
}

/**
 * The throughput streams, each event allocated in the order the loop reads them (round by round, users interleaved),
 * as a server's events are: decoded just before their step, next to the one before. Allocated user by user, each
 * read was a cache miss of the bench's own (a profile put ~11 % of the throughput loop's samples on its event loads).
 */
export function scheduleOf(pool: readonly EngineEvent[], users: number, rounds: number): Schedule {
  const next = Array.from({ length: users }, (_, user) => ({ k: (user * 7919) % pool.length, t: Date.UTC(2026, 0, 1) + user * 1000 }));
  const events: EngineEvent[] = [];
  for (let round = 0; round < rounds; round++) {
    for (let user = 0; user < users; user++) events.push(nextOf(pool, next[user] as { k: number; t: number }));
  }
  return { users, events };
}

/** The stream's next event: pool[k] at t advanced by the pool's own gap (clamped); k and t move on. */
function nextOf(pool: readonly EngineEvent[], at: { k: number; t: number }): EngineEvent {
  const event = pool[at.k] as EngineEvent;
  const previous = pool[(at.k + pool.length - 1) % pool.length] as EngineEvent;
  at.t += Math.max(-300_000, Math.min(event.time - previous.time, 7_200_000));
  at.k = (at.k + 1) % pool.length;
  return { ...event, time: at.t };
}

/** A user's events: pool entries (shared properties) at offset `from`, with the pool's time gaps, from `start`. */
function streamOf(pool: readonly EngineEvent[], from: number, count: number, start: number): EngineEvent[] {
  const at = { k: from % pool.length, t: start };
  return Array.from({ length: count }, () => nextOf(pool, at));
}

/** ns per event for EVENTS_PER_REPETITION events per user, from a state with `history` prior events, restored each time. */
function historyCost(
  plan: Plan,
  pool: readonly EngineEvent[],
  contexts: readonly SegmentContext[],
  settings: EngineBenchOptions,
  history: number,
): { nsPerEvent: number; stateBytes: number } {
  const users = settings.historyUsers;
  const snapshots: Uint8Array[] = [];
  const next: EngineEvent[][][] = [];
  for (let user = 0; user < users; user++) {
    // The history differs in length only; the measured events are the same for every history length.
    const past = streamOf(pool, user * 104_729, history, Date.UTC(2026, 0, 1));
    const ctx = contexts[user % contexts.length] as SegmentContext;
    const state = newUserState();
    for (let i = 0; i < history; i += 100) segment(plan, state, past.slice(i, i + 100), ctx);
    snapshots.push(encodeState(state));
    const resume = ((past[past.length - 1] as EngineEvent | undefined)?.time ?? Date.UTC(2026, 0, 1)) + 60_000;
    const measured = streamOf(pool, 2_000 + user * 97, EVENTS_PER_REPETITION, resume);
    next.push(Array.from({ length: settings.historyRepetitions }, () => measured));
  }
  let elapsed = 0n;
  let events = 0;
  for (let rep = -1; rep < settings.historyRepetitions; rep++) {
    const states = snapshots.map((bytes) => decodeState(bytes));
    // Bind outside the timed region (no events: nothing is evaluated).
    states.forEach((state, user) => segment(plan, state, [], contexts[user % contexts.length] as SegmentContext));
    const start = process.hrtime.bigint();
    for (let i = 0; i < EVENTS_PER_REPETITION; i++) {
      for (let user = 0; user < users; user++) {
        const batch = (next[user] as EngineEvent[][])[Math.max(rep, 0)] as EngineEvent[];
        segment(plan, states[user] as UserState, [batch[i] as EngineEvent], contexts[user % contexts.length] as SegmentContext);
      }
    }
    if (rep >= 0) {
      elapsed += process.hrtime.bigint() - start;
      events += EVENTS_PER_REPETITION * users;
    }
  }
  const stateBytes = snapshots.reduce((sum, bytes) => sum + bytes.length, 0) / snapshots.length;
  return { nsPerEvent: Number(elapsed) / events, stateBytes };
}

/**
 * The same work through the reference evaluator (test/reference), which recomputes every cohort over the whole
 * history at each event. Its history is seeded with the engine's memberships after each prior event (the
 * differential test holds them equal), so only the timed steps are evaluated from scratch; the engine's figure is
 * the same events from a restored state (decoded and bound outside the timing, averaged over repetitions).
 */
function referenceCost(
  plan: Plan,
  cohorts: readonly CohortDefinition[],
  pool: readonly EngineEvent[],
  contexts: readonly SegmentContext[],
  settings: EngineBenchOptions,
): { engineNs: number; referenceNs: number; agrees: boolean } {
  const wire = cohorts.map((c) => ({ code: c.code, query: toWireQuery(c.query) }));
  let engineNs = 0;
  let engineEvents = 0;
  let referenceNs = 0;
  let referenceEvents = 0;
  let agrees = true;
  for (let user = 0; user < settings.referenceUsers; user++) {
    const ctx = contexts[user % contexts.length] as SegmentContext;
    const events = streamOf(pool, user * 611, settings.referenceHistory + settings.referenceEvents, Date.UTC(2026, 0, 1));
    const run = new ReferenceRun(wire, wireContext(ctx));
    const state = newUserState();
    for (let i = 0; i < settings.referenceHistory; i++) {
      const event = events[i] as EngineEvent;
      run.seed(event, segment(plan, state, [event], ctx).memberships);
    }
    const snapshot = encodeState(state);
    const measured = events.slice(settings.referenceHistory);
    const expected = measured.map((event) => JSON.stringify(segment(plan, state, [event], ctx).memberships));
    for (let rep = 0; rep < 200; rep++) {
      const restored = decodeState(snapshot);
      segment(plan, restored, [], ctx);
      const start = process.hrtime.bigint();
      for (const event of measured) segment(plan, restored, [event], ctx);
      engineNs += Number(process.hrtime.bigint() - start);
      engineEvents += measured.length;
    }
    measured.forEach((event, k) => {
      const start = process.hrtime.bigint();
      const step = run.step(event);
      referenceNs += Number(process.hrtime.bigint() - start);
      referenceEvents++;
      if (JSON.stringify(step.memberships) !== expected[k]) agrees = false;
    });
  }
  return { engineNs: engineNs / engineEvents, referenceNs: referenceNs / referenceEvents, agrees };
}

/** The context as the wire cohorts ask it: their imported-segment providers are the workload's import codes. */
function wireContext(ctx: SegmentContext): SegmentContext {
  const sampleProvider = (provider: string): string => (provider === PROVIDERS.third || provider === PROVIDERS.second ? 'p' : provider);
  return {
    inImportedSegment: (relation, provider, segment) => ctx.inImportedSegment(relation, sampleProvider(provider), segment),
    connectionRows: (provider) => ctx.connectionRows(provider),
  };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

function printTable(result: EngineBenchResult): void {
  const rows: [string, string][] = [
    ['cohorts / slots', `${result.settings.cohorts} / ${result.slots}`],
    ['clause kinds', Object.entries(result.clauseKinds).map(([k, n]) => `${k} ${n}`).join(', ')],
    ['events/s (median)', `${Math.round(result.eventsPerSecond).toLocaleString('en')} (runs: ${result.eventsPerSecondRuns.map((v) => Math.round(v).toLocaleString('en')).join(', ')})`],
    ['events/CPU-second (median)', Math.round(result.eventsPerCpuSecond).toLocaleString('en')],
    ['V8 heap bytes allocated per event', Math.round(result.heapBytesPerEvent ?? 0).toLocaleString('en')],
    [
      'a new plan\'s first events/s (warm plan)',
      result.newPlan === undefined ? '-' : `${Math.round(result.newPlan.coldEventsPerSecond).toLocaleString('en')} (${Math.round(result.newPlan.warmEventsPerSecond).toLocaleString('en')})`,
    ],
    ...(result.largeWorkingSet === undefined
      ? []
      : ([
          [
            `events/s at ${result.largeWorkingSet.users.toLocaleString('en')} users (median)`,
            `${Math.round(result.largeWorkingSet.eventsPerSecond).toLocaleString('en')} (runs: ${result.largeWorkingSet.eventsPerSecondRuns.map((v) => Math.round(v).toLocaleString('en')).join(', ')}; ${Math.round(result.largeWorkingSet.eventsPerCpuSecond).toLocaleString('en')} per CPU-second)`,
          ],
        ] as [string, string][])),
    [
      'events/CPU-second, decoded per call',
      `${Math.round(result.decodedEventsPerCpuSecond.engine).toLocaleString('en')} engine, ${Math.round(result.decodedEventsPerCpuSecond.withDecode).toLocaleString('en')} with decode (${result.decodedEventsPerCpuSecond.decodeNsPerEvent.toFixed(0)} ns/event)`,
    ],
    ['load average before / after', result.loadAverage.map((v) => v.toFixed(2)).join(' / ')],
    [`ns/event, ${result.settings.shortHistory} prior events`, result.nsPerEventShortHistory.toFixed(0)],
    [`ns/event, ${result.settings.longHistory.toLocaleString('en')} prior events`, result.nsPerEventLongHistory.toFixed(0)],
    ['long / short ratio (target <= 1.2)', result.historyCostRatio.toFixed(2)],
    ['state bytes per user', result.stateBytesPerUser.toFixed(0)],
    ['state bytes per user per cohort', result.stateBytesPerUserPerCohort.toFixed(1)],
    ['state bytes, long-history user', result.longHistoryStateBytes.toFixed(0)],
    [`engine ns/event at ${result.settings.referenceHistory.toLocaleString('en')} prior events`, result.engineNsPerEventAtReferenceHistory.toFixed(0)],
    ['reference ns/event (same work)', result.referenceNsPerEvent.toFixed(0)],
    ['reference / engine (target >= 1000)', `${result.referenceRatio.toFixed(0)}${result.referenceAgrees ? '' : ' (memberships DIFFER)'}`],
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  process.stderr.write(`${rows.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join('\n')}\n`);
}

/** `--name value` overrides of the numeric settings (e.g. `--users 1000 --largeUsers 0`); `--help` lists them. */
function parseOverrides(argv: readonly string[]): Partial<EngineBenchOptions> | undefined {
  const out: Record<string, number> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const name = arg.replace(/^--/, '');
    if (arg === '--help' || !arg.startsWith('--') || !(name in DEFAULT_ENGINE_BENCH)) {
      const known = Object.entries(DEFAULT_ENGINE_BENCH).map(([k, v]) => `  --${k} ${v}`).join('\n');
      process.stderr.write(`usage: node dist/bench/engine.js [--setting number]...; settings and defaults:\n${known}\n`);
      if (arg !== '--help') process.exitCode = 2;
      return undefined;
    }
    const value = Number(argv[++i]);
    if (!Number.isFinite(value) || value < 0) throw new Error(`${arg} needs a number >= 0`);
    out[name] = value;
  }
  return out as Partial<EngineBenchOptions>;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const overrides = parseOverrides(process.argv.slice(2));
  if (overrides === undefined) process.exit();
  const result = runEngineBench(overrides);
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  printTable(result);
}
