// Catch-ups inside a tick (server/backfill/README.md): which users of the tick are behind the plan (cohorts newer than their
// mark), and for each one whether it is caught up in this tick (history short enough, within the tick's budget),
// deferred to the next tick (budget spent), or parked while its long history is replayed off the lane.

import type { Store } from '../store/contract.js';
import { readHistoryChunk, type HistoryChunk } from '../ingest/state/load.js';
import type { AdoptItem, CatchUpItem, Lane, LaneItem } from '../ingest/lanes/lane.js';
import { staleCodes, type PlanInfo } from '../ingest/plan-info.js';
import type { CatchUp } from '../ingest/worker/work.js';

/** What the planner needs of a tick's user. */
export interface CatchUpCandidate {
  readonly org: string;
  readonly user: string;
  readonly key: string;
  readonly items: readonly LaneItem[];
  readonly count: number;
  readonly mark: number;
  /** The last log sequence of the user's stored events. */
  readonly seq: number;
}

export interface CatchUpLimits {
  /** The longest history caught up inside a tick (events); longer ones are replayed off the lane. */
  readonly inline: number;
  /** Events of history replayed inside one tick in all (the first catch-up of a tick always runs). */
  readonly budget: number;
  /** History events per task to an owner: a group with more goes to its owner as several (tick/compute.ts). */
  readonly taskEvents: number;
}

export type CatchUpDecision =
  | { readonly kind: 'none'; readonly mark: number }
  | { readonly kind: 'inline'; readonly mark: number; readonly catchup: CatchUp; readonly stale: readonly number[] }
  | { readonly kind: 'defer' }
  | { readonly kind: 'park' };

/**
 * The decision for a user with nothing to catch up (undefined when some cohort is newer than its mark): a user
 * without history is evaluated from its first event under this plan (E5), and a mark at the plan's largest
 * generation has seen every cohort. Decided without a read (the tick's usual case).
 */
export function upToDate(plan: PlanInfo, count: number, mark: number): CatchUpDecision | undefined {
  return count === 0 || plan.maxGen <= mark ? { kind: 'none', mark: Math.max(mark, plan.version) } : undefined;
}

/** Decides every candidate's catch-up and reads the histories of the inline ones. */
export async function planCatchUps(
  store: Store,
  limits: CatchUpLimits,
  candidates: readonly CatchUpCandidate[],
  plans: { planOf(org: string): PlanInfo },
): Promise<Map<string, CatchUpDecision>> {
  const decisions = new Map<string, CatchUpDecision>();
  // Module functions, not callbacks per candidate: closures made per call lose their optimized code at each
  // collection (docs/performance.md).
  const readKeys: string[] = [];
  const reads: Promise<CatchUpDecision>[] = [];
  let budget = limits.budget;
  let first = true;
  for (const candidate of candidates) {
    const plan = plans.planOf(candidate.org);
    const none = upToDate(plan, candidate.count, candidate.mark);
    if (none !== undefined) {
      decisions.set(candidate.key, none);
      continue;
    }
    const stale = staleCodes(plan, candidate.mark);
    const mark = Math.max(candidate.mark, plan.version);
    const adopt = candidate.items.find((item): item is AdoptItem => item.kind === 'adopt' && item.version === plan.version);
    if (adopt !== undefined) {
      readKeys.push(candidate.key);
      reads.push(adoptionDecision(store, candidate, adopt, limits.inline, mark, stale));
      continue;
    }
    if (candidate.count > limits.inline) {
      decisions.set(candidate.key, { kind: 'park' });
      continue;
    }
    if (!first && candidate.count > budget) {
      decisions.set(candidate.key, { kind: 'defer' });
      continue;
    }
    first = false;
    budget -= candidate.count;
    readKeys.push(candidate.key);
    reads.push(inlineDecision(store, candidate, mark, stale));
  }
  const read = await Promise.all(reads);
  for (let i = 0; i < read.length; i++) decisions.set(readKeys[i] as string, read[i] as CatchUpDecision);
  return decisions;
}

/** A user adopting a state sent for `adopt`: caught up inline from its tail when the tail is within `inline`. */
async function adoptionDecision(store: Store, candidate: CatchUpCandidate, adopt: AdoptItem, inline: number, mark: number, stale: readonly number[]): Promise<CatchUpDecision> {
  const tail = await readHistoryChunk(store, candidate.org, candidate.user, adopt.seq, inline + 1, candidate.seq);
  return tail.done ? { kind: 'inline', mark, stale, catchup: { source: adopt.source, events: tail.events, stale } } : { kind: 'park' };
}

/** A user caught up inline from its whole history. */
async function inlineDecision(store: Store, candidate: CatchUpCandidate, mark: number, stale: readonly number[]): Promise<CatchUpDecision> {
  const history = await historyOf(store, candidate);
  return { kind: 'inline', mark, stale, catchup: { source: null, events: history.events, stale } };
}

/**
 * The candidate's whole history up to its last sequence: the one its catch-up item brought (read ahead) when that
 * still ends there with as many events as the user's state has seen (no event of the user was stored since: a
 * user's events are stored in sequence order, one group at a time, so the same last sequence is the same events),
 * else read now.
 */
function historyOf(store: Store, candidate: CatchUpCandidate): Promise<HistoryChunk> {
  for (const item of candidate.items) {
    const ahead = item.kind === 'catchup' ? item.history : undefined;
    if (ahead !== undefined && ahead.done && ahead.lastSeq === candidate.seq && ahead.events.count === candidate.count) return Promise.resolve(ahead);
  }
  return readHistoryChunk(store, candidate.org, candidate.user, 0, candidate.count + 1, candidate.seq);
}

/** The weight of an item in a lane's backpressure measure. */
export function weightOf(item: LaneItem): number {
  return item.kind === 'append' ? Math.max(1, item.request.events.length) : 1;
}

/** Hands a deferred user's items back to the front of their queues, ahead of the user's later items. */
export function handBack(lane: Lane, deferred: readonly LaneItem[]): void {
  const live = deferred.filter((item) => item.kind !== 'catchup' && item.kind !== 'adopt');
  const background = deferred.filter((item): item is CatchUpItem => item.kind === 'catchup');
  lane.queue = [...live, ...lane.queue];
  lane.background = [...background, ...lane.background];
  for (const item of live) lane.queued += weightOf(item);
}
