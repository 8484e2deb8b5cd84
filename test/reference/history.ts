// The reference evaluator's view of a user's event prefix: effective times (E1), session keys and runs (E2),
// view keys and runs (E3), re-evaluation points (E20). Recomputed from the list for every step; nothing is carried.

import type { EngineEvent } from '../../engine/api.js';

export const SESSION_GAP_MS = 1_800_000;

/**
 * A point of the user's timeline: an event, or a re-evaluation without an event (E20). A re-evaluation appears in
 * the history as an event named REEVALUATION (a name no query can name) with no properties, at its effective now.
 */
export type HistoryPoint = { readonly event: EngineEvent } | { readonly reevaluateAt: number };

/** The name of a re-evaluation point in `History.events`: not a valid event name (D29), so no clause counts it. */
export const REEVALUATION = '(re-evaluation)';

/** Everything a step needs to know about points[0..current]. */
export interface History {
  /** Per point: its event, or for a re-evaluation an event named REEVALUATION with no properties. */
  readonly events: readonly EngineEvent[];
  /** Effective time of each point (E1, E20). */
  readonly times: readonly number[];
  readonly sessionKeys: readonly string[];
  readonly viewKeys: readonly string[];
  /** Index of the current (last) point: "now" is its effective time. */
  readonly current: number;
  readonly now: number;
  /** First index of the current session run / view run (E2, E3). */
  readonly sessionRunStart: number;
  readonly viewRunStart: number;
}

/** Builds the history of events[0..current] (events only). */
export function describeHistory(allEvents: readonly EngineEvent[], current: number): History {
  return describePoints(allEvents.slice(0, current + 1).map((event) => ({ event })), current);
}

/** Builds the history of points[0..current]; the first point is an event (E5, E20: no re-evaluation before one). */
export function describePoints(allPoints: readonly HistoryPoint[], current: number): History {
  const points = allPoints.slice(0, current + 1);
  const events: EngineEvent[] = [];
  const times: number[] = [];
  const sessionKeys: string[] = [];
  const viewKeys: string[] = [];
  /** Effective time of the latest event point: E2's gap is measured from it (D31: "30 minutes without events"). */
  let lastEventTime: number | undefined;
  let lastEventIndex = -1;
  points.forEach((point, i) => {
    const previousTime = times[i - 1];
    if ('reevaluateAt' in point) {
      // E20: time moves on to max(now, previous), nothing is counted, the current runs continue.
      if (previousTime === undefined) throw new Error('reference: a re-evaluation before any event');
      const t = Number.isFinite(point.reevaluateAt) ? Math.max(point.reevaluateAt, previousTime) : previousTime;
      events.push({ name: REEVALUATION, time: t, properties: {} });
      times.push(t);
      // D36 + D31: 30 minutes after the last event a derived session has ended, so a re-evaluation then lies in a
      // new, empty session run (no event of it, only re-evaluation points); later re-evaluations continue that run.
      // A given session id never ends by the clock (the next event decides).
      const previousKey = sessionKeys[i - 1] as string;
      const derived = previousKey.startsWith('derived:') || previousKey.startsWith('timeout:');
      const timedOut = derived && lastEventTime !== undefined && t >= lastEventTime + SESSION_GAP_MS;
      sessionKeys.push(timedOut ? `timeout:${lastEventIndex}` : previousKey);
      viewKeys.push(viewKeys[i - 1] as string);
      return;
    }
    const event = point.event;
    events.push(event);
    const t = previousTime === undefined ? event.time : Math.max(event.time, previousTime);
    times.push(t);
    // E2: given id, else the previous key within 30 minutes of the previous event, else a fresh derived key
    if (event.session_id !== undefined && event.session_id !== null) sessionKeys.push(`given:${event.session_id}`);
    else if (lastEventTime !== undefined && t - lastEventTime < SESSION_GAP_MS) sessionKeys.push(sessionKeys[i - 1] as string);
    else sessionKeys.push(`derived:${i}`);
    lastEventTime = t;
    lastEventIndex = i;
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
