// The reference evaluator's view of a user's event prefix: effective times (E1), session keys and runs (E2),
// view keys and runs (E3). Recomputed from the list for every step; nothing is carried between steps.

import type { EngineEvent } from '../../engine/api.js';

export const SESSION_GAP_MS = 1_800_000;

/** Everything a step needs to know about events[0..current]. */
export interface History {
  readonly events: readonly EngineEvent[];
  /** Effective time of each event (E1). */
  readonly times: readonly number[];
  readonly sessionKeys: readonly string[];
  readonly viewKeys: readonly string[];
  /** Index of the current (last) event: "now" is its effective time. */
  readonly current: number;
  readonly now: number;
  /** First index of the current session run / view run (E2, E3). */
  readonly sessionRunStart: number;
  readonly viewRunStart: number;
}

/** Builds the history of events[0..current]. */
export function describeHistory(allEvents: readonly EngineEvent[], current: number): History {
  const events = allEvents.slice(0, current + 1);
  const times: number[] = [];
  const sessionKeys: string[] = [];
  const viewKeys: string[] = [];
  events.forEach((event, i) => {
    const previousTime = times[i - 1];
    const t = previousTime === undefined ? event.time : Math.max(event.time, previousTime);
    times.push(t);
    // E2: given id, else the previous key within 30 minutes, else a fresh derived key
    if (event.session_id !== undefined && event.session_id !== null) sessionKeys.push(`given:${event.session_id}`);
    else if (previousTime !== undefined && t - previousTime < SESSION_GAP_MS) sessionKeys.push(sessionKeys[i - 1] as string);
    else sessionKeys.push(`derived:${i}`);
    // E3: given id, else a fresh key at a Pageview, else the previous key ("none" before any view)
    if (event.view_id !== undefined && event.view_id !== null) viewKeys.push(`given:${event.view_id}`);
    else if (event.name === 'Pageview') viewKeys.push(`derived:${i}`);
    else viewKeys.push(i === 0 ? 'none' : (viewKeys[i - 1] as string));
  });
  return {
    events,
    times,
    sessionKeys,
    viewKeys,
    current,
    now: times[current] as number,
    sessionRunStart: runStart(sessionKeys, current),
    viewRunStart: runStart(viewKeys, current),
  };
}

/** Start index of the maximal run of equal keys that ends at `end`. */
function runStart(keys: readonly string[], end: number): number {
  let start = end;
  while (start > 0 && keys[start - 1] === keys[end]) start--;
  return start;
}

/** The maximal runs of equal view keys over the whole prefix, as [start, end] index pairs (E9). */
export function listViewRuns(history: History): Array<{ start: number; end: number }> {
  const runs: Array<{ start: number; end: number }> = [];
  history.viewKeys.forEach((key, i) => {
    const last = runs[runs.length - 1];
    if (last !== undefined && history.viewKeys[last.end] === key) last.end = i;
    else runs.push({ start: i, end: i });
  });
  return runs;
}
