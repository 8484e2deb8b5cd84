// The "x the reference" figure: the cost of one more event for a user with 10,000 events of history, in the engine
// (incremental state) and in the naive reference evaluator (test/reference: recomputes every cohort over the whole
// event list). Compared over the benchmark cohorts without transition clauses (see `runReferenceBench`).

import { compilePlan, decodeState, encodeState, newUserState, segment, type EngineEvent, type SegmentContext } from '../engine/index.js';
import { SampleGenerator } from '../test/support/sample-cohorts.js';
import { holdsClause } from '../test/reference/clauses.js';
import { describeHistory } from '../test/reference/history.js';
import { holdsQuery } from '../test/reference/index.js';
import { toWireQuery } from './workload/cohorts.js';
import { median } from './stats.js';

export interface ReferenceBenchOptions {
  readonly seed: number;
  readonly cohorts: number;
  readonly history: number;
  /** Users measured (each with its own history), and new events timed per user. */
  readonly users: number;
  readonly events: number;
}

export interface ReferenceBenchResult {
  readonly cohortsCompared: number;
  readonly history: number;
  /** Medians of the timed events' ns (each event timed alone: one GC pause in a mean of 30 moved it 4x). */
  readonly engineNsPerEvent: number;
  readonly referenceNsPerEvent: number;
  /** Events timed (absent in results of runs before the medians). */
  readonly timedEvents?: number;
  /** reference / engine; target >= 1000. */
  readonly ratio: number;
}

/**
 * Transition clauses are left out: the reference derives them from its membership log of every earlier prefix, so
 * a from-scratch recomputation would redo all 10,000 prefixes per event; timing only the last step without them
 * favours the reference. Everything else (windows, sessions, engagement, list summaries, imported membership,
 * connections) is compared.
 */
export function runReferenceBench(options: ReferenceBenchOptions): ReferenceBenchResult {
  const gen = new SampleGenerator(options.seed);
  const all = gen.cohorts(options.cohorts);
  const definitions = all.filter((c) => c.query.and.every((group) => group.or.every((clause) => clause.kind !== 'transition')));
  const wire = definitions.map((c) => ({ code: c.code, query: toWireQuery(c.query) }));
  const plan = compilePlan(definitions, 1);
  const ctx: SegmentContext = gen.context();
  const noTransitions = (): boolean => {
    throw new Error('no transition clause is compared');
  };

  const engineNs: number[] = [];
  const referenceNs: number[] = [];
  for (let user = 0; user < options.users; user++) {
    const events: EngineEvent[] = gen.events(options.history + options.events);
    const state = newUserState();
    for (let i = 0; i < options.history; i += 100) segment(plan, state, events.slice(i, Math.min(i + 100, options.history)), ctx);
    const snapshot = encodeState(state);
    for (let k = 0; k < options.events; k++) {
      const at = options.history + k;
      // Engine: from the state after events[0..at-1] (decoded outside the timing), one segment call.
      const restored = decodeState(snapshot);
      // Catch up to events[at-1] and bind the plan (no events: nothing evaluated), both outside the timing.
      segment(plan, restored, events.slice(options.history, at), ctx);
      let start = process.hrtime.bigint();
      segment(plan, restored, [events[at] as EngineEvent], ctx);
      engineNs.push(Number(process.hrtime.bigint() - start));
      // Reference: every cohort recomputed over events[0..at].
      start = process.hrtime.bigint();
      const history = describeHistory(events, at);
      let members = 0;
      for (const cohort of wire) if (holdsQuery(cohort.query, (clause) => holdsClause(clause, history, ctx, noTransitions))) members++;
      referenceNs.push(Number(process.hrtime.bigint() - start));
      if (members < 0) throw new Error('unreachable');
    }
  }
  // Medians, not means: an event is timed alone, and one GC pause or optimisation in the engine's few microseconds
  // (4 ms against a typical 6-50 µs, a throwaway probe of 2026-12-03) moved a mean of 30 by 4x between runs of the
  // same build (598-2,916x); the reference's ~120 ms per event hides such pauses. The first timed event of each
  // catch-up is the first after binding a decoded state (every cohort decided): one in `events`.
  const engineNsPerEvent = median(engineNs);
  const referenceNsPerEvent = median(referenceNs);
  return { cohortsCompared: definitions.length, history: options.history, engineNsPerEvent, referenceNsPerEvent, timedEvents: engineNs.length, ratio: referenceNsPerEvent / engineNsPerEvent };
}
