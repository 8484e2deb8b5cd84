// The clause kinds of the query format, evaluated naively over a history prefix from their raw JSON
// (spec "Cohort query format"; D32–D35; E4, E6–E9, E11, E13, E14).

import type { SegmentContext } from '../../engine/api.js';
import { holdsComparison, singleEntry } from './comparisons.js';
import { holdsWhere } from './conditions.js';
import { selectDuring, type ItemPlacement } from './during.js';
import { listViewRuns, type History } from './history.js';

const ENGAGEMENT = 'PageviewEngagement';
const AT_LEAST_ONCE = { greater_than_or_equal_to: 1 };

/** Membership of a cohort after event `index` (indices up to the current one are known when asked). */
export type MembershipLookup = (code: number, index: number) => boolean;

/** Whether one clause (raw JSON) holds at the current event of `history`. */
export function holdsClause(clause: unknown, history: History, ctx: SegmentContext, membership: MembershipLookup): boolean {
  const c = clause as Record<string, unknown>;
  if ('event' in c) return holdsExpression(c, history);
  const [kind, body] = singleEntry(c);
  const b = body as Record<string, unknown>;
  switch (kind) {
    case 'engaged_time':
      return holdsEngagedTime(b, history);
    case 'engaged_completion':
      return holdsEngagedCompletion(b, history);
    case 'engaged_views':
      return holdsEngagedViews(b, history);
    case 'has_entered':
    case 'has_not_entered':
    case 'has_exited':
    case 'has_not_exited':
      return holdsTransition(kind, b, history, membership);
    case 'in_third_party_segment':
    case 'not_in_third_party_segment':
    case 'in_second_party_segment':
    case 'not_in_second_party_segment': {
      const member = ctx.inImportedSegment(kind.includes('third') ? '3rd' : '2nd', b['provider'] as string, b['segment'] as string);
      return kind.startsWith('not_') ? !member : member;
    }
    case 'in_connections_import_segment':
    case 'not_in_connections_import_segment': {
      const holds = holdsConnections(b, history, ctx);
      return kind.startsWith('not_') ? !holds : holds;
    }
    default:
      throw new Error(`reference: unknown clause ${kind}`);
  }
}

/** Where event `index` sits relative to the current runs. */
function placeEvent(history: History, index: number): ItemPlacement {
  return {
    time: history.times[index] as number,
    inSession: index >= history.sessionRunStart,
    inView: index >= history.viewRunStart,
  };
}

const matchesEventWhere = (history: History, where: unknown, index: number): boolean =>
  where === undefined || holdsWhere(where, { properties: history.events[index]?.properties });

const indicesNamed = (history: History, name: string): number[] =>
  history.events.flatMap((event, i) => (event.name === name ? [i] : []));

/** E4 / D33. */
function holdsExpression(clause: Record<string, unknown>, history: History): boolean {
  const population = indicesNamed(history, clause['event'] as string);
  const selected = selectDuring(population, clause['during'], history.now, (i) => placeEvent(history, i));
  const count = selected.filter((i) => matchesEventWhere(history, clause['where'], i)).length;
  return holdsComparison(clause['frequency'] ?? AT_LEAST_ONCE, count);
}

/** E6: an engagement event's seconds. */
function secondsOf(history: History, index: number): number {
  const value = history.events[index]?.properties['engaged_time'];
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 0;
}

/** E6: an engagement event's completion, when it has one. */
function completionOf(history: History, index: number): number | undefined {
  const value = history.events[index]?.properties['completion'];
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/** E9 (as E8): the largest completion among the events that carry one, as given (even < 0 or > 1); 0 when none does. */
function largestCompletion(history: History, indices: readonly number[]): number {
  let largest: number | undefined;
  for (const i of indices) {
    const completion = completionOf(history, i);
    if (completion !== undefined && (largest === undefined || completion > largest)) largest = completion;
  }
  return largest ?? 0;
}

/** E7. */
function holdsEngagedTime(body: Record<string, unknown>, history: History): boolean {
  const population = indicesNamed(history, ENGAGEMENT);
  const selected = selectDuring(population, body['during'], history.now, (i) => placeEvent(history, i));
  const total = selected.filter((i) => matchesEventWhere(history, body['where'], i)).reduce((sum, i) => sum + secondsOf(history, i), 0);
  return holdsComparison(body['seconds'], total);
}

/** E8. */
function holdsEngagedCompletion(body: Record<string, unknown>, history: History): boolean {
  let largest: number | undefined;
  for (let i = history.viewRunStart; i <= history.current; i++) {
    if (history.events[i]?.name !== ENGAGEMENT || !matchesEventWhere(history, body['where'], i)) continue;
    const completion = completionOf(history, i);
    if (completion !== undefined && (largest === undefined || completion > largest)) largest = completion;
  }
  return holdsComparison(body['completion'], largest ?? 0);
}

/** E9: views are view runs; a view counts when its matching engagement meets the per-view threshold. */
function holdsEngagedViews(body: Record<string, unknown>, history: History): boolean {
  const measure = 'engaged_time' in body ? 'engaged_time' : 'completion';
  const threshold = body[measure];
  const views = listViewRuns(history).flatMap((run) => {
    const matching: number[] = [];
    for (let i = run.start; i <= run.end; i++) {
      if (history.events[i]?.name === ENGAGEMENT && matchesEventWhere(history, body['where'], i)) matching.push(i);
    }
    if (matching.length === 0) return [];
    const total =
      measure === 'engaged_time'
        ? matching.reduce((sum, i) => sum + secondsOf(history, i), 0)
        : largestCompletion(history, matching);
    const first = matching[0] as number;
    const last = matching[matching.length - 1] as number;
    const placement: ItemPlacement = {
      time: history.times[last] as number,
      inSession: first >= history.sessionRunStart, // every matching event lies in the current session run
      inView: run.start === history.viewRunStart,
    };
    return [{ placement, qualifies: holdsComparison(threshold, total) }];
  });
  const selected = selectDuring(views, body['during'], history.now, (view) => view.placement);
  return holdsComparison(body['times'], selected.filter((view) => view.qualifies).length);
}

/** E10, E11: entries / exits of another cohort, taken from its membership after each event. */
function holdsTransition(kind: string, body: Record<string, unknown>, history: History, membership: MembershipLookup): boolean {
  const code = body['segment'] as number;
  const wantEntry = kind === 'has_entered' || kind === 'has_not_entered';
  const population: number[] = [];
  for (let i = 0; i <= history.current; i++) {
    const before = i > 0 && membership(code, i - 1);
    const after = membership(code, i);
    if (wantEntry ? after && !before : before && !after) population.push(i);
  }
  const selected = selectDuring(population, body['during'], history.now, (i) => placeEvent(history, i));
  const happened = selected.some((i) => matchesEventWhere(history, body['where'], i));
  return kind.startsWith('has_not_') ? !happened : happened;
}

/** E14: rows of a connections import, ordered by time (ties keep the order ctx gives). */
function holdsConnections(body: Record<string, unknown>, history: History, ctx: SegmentContext): boolean {
  const rows = [...ctx.connectionRows(body['provider'] as string)].sort((a, b) => a.time - b.time);
  const sessionStart = history.times[history.sessionRunStart] as number;
  const viewStart = history.times[history.viewRunStart] as number;
  const selected = selectDuring(rows, body['during'], history.now, (row) => ({
    time: row.time,
    inSession: row.time >= sessionStart && row.time <= history.now,
    inView: row.time >= viewStart && row.time <= history.now,
  }));
  const filters = body['filters'];
  const count = selected.filter((row) => filters === undefined || holdsWhere(filters, row.properties)).length;
  return holdsComparison(body['frequency'] ?? AT_LEAST_ONCE, count);
}
