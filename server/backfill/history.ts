// Users' stored histories replayed into fresh states off the lanes (server/backfill/README.md): in chunks of a bounded number of
// events read from the store and sent to the executor with the state so far, many users per task. Used for the
// source of a long catch-up (the user's items wait, parked) and for offline cohorts (D20).

import type { CohortDefinition, SegmentContext } from '../../engine/api.js';
import type { Store } from '../store/contract.js';
import { captureContext, hasProbes, probesOf, EMPTY_CONTEXT_DATA, type ContextData } from '../ingest/tick/context.js';
import type { Executor } from '../ingest/worker/executor.js';
import { readHistoryChunk } from '../ingest/state/load.js';
import type { ReplayGroup, ReplayItem, ReplayResult } from '../ingest/worker/work.js';

export interface HistoryDeps {
  readonly store: Store;
  readonly executor: Executor;
  contextOf(org: string, user: string): SegmentContext | Promise<SegmentContext>;
  /** Events per chunk (per user per executor task). */
  readonly chunk: number;
}

/** A plan to replay through: `key` names it in the executor's plan cache (an organization or a pseudo one). */
export interface ReplayPlan {
  readonly key: string;
  readonly version: number;
  readonly cohorts: readonly CohortDefinition[];
  readonly inactive?: readonly number[];
}

export interface ReplayedUser {
  readonly user: string;
  /** The encoded state after the user's history (or null when the user has no events). */
  readonly state: Uint8Array | null;
  /** The sequence of the last event replayed (0 without events). */
  readonly seq: number;
  readonly count: number;
  readonly memberships: readonly number[];
}

/**
 * Replays each user's stored events (after sequence 0, up to `untilSeq` when given) through `plan`. A round reads
 * the next chunk of every unfinished user and runs them all in one executor task; `shouldStop` ends early.
 */
export async function replayHistories(
  deps: HistoryDeps,
  plan: ReplayPlan,
  org: string,
  users: readonly string[],
  options: { readonly untilSeq?: number; readonly shouldStop?: () => boolean } = {},
): Promise<ReplayedUser[]> {
  const probes = probesOf(plan.cohorts);
  const contexts = await Promise.all(
    users.map(async (user): Promise<ContextData> => (hasProbes(probes) ? captureContext(await deps.contextOf(org, user), probes) : EMPTY_CONTEXT_DATA)),
  );
  const progress = users.map((user, i) => ({
    user,
    ctx: contexts[i] ?? EMPTY_CONTEXT_DATA,
    state: null as Uint8Array | null,
    seq: 0,
    count: 0,
    memberships: [] as readonly number[],
    done: false,
  }));
  while (progress.some((entry) => !entry.done)) {
    if (options.shouldStop?.() === true) throw new Error('the history replay was stopped');
    const open = progress.filter((entry) => !entry.done);
    const chunks = await Promise.all(open.map((entry) => readHistoryChunk(deps.store, org, entry.user, entry.seq, deps.chunk, options.untilSeq)));
    const items: ReplayItem[] = [];
    const fed: (typeof open)[number][] = [];
    open.forEach((entry, i) => {
      const chunk = chunks[i];
      if (chunk === undefined) return;
      entry.done = chunk.done;
      if (chunk.events.count === 0) return;
      entry.seq = chunk.lastSeq;
      items.push({ source: entry.state, events: chunk.events, ctx: entry.ctx });
      fed.push(entry);
    });
    if (items.length === 0) continue;
    const results = await runReplays(deps.executor, plan, items);
    fed.forEach((entry, i) => {
      const result = results[i] as ReplayResult;
      entry.state = result.state;
      entry.count = result.count;
      entry.memberships = result.memberships;
    });
  }
  return progress.map(({ user, state, seq, count, memberships }) => ({ user, state, seq, count, memberships }));
}

/** One executor task of replays; a worker lacking the plan asks for it and gets it attached. */
async function runReplays(executor: Executor, plan: ReplayPlan, items: readonly ReplayItem[]): Promise<readonly ReplayResult[]> {
  let group: ReplayGroup = { org: plan.key, version: plan.version, items };
  for (let attempt = 0; attempt < 3; attempt++) {
    const reply = await executor.run({ groups: [], replays: [group] });
    if (reply.lost !== undefined) throw new Error('a replay was answered as if it held resident states');
    if (reply.needPlan !== true) return reply.replays?.[0] ?? [];
    group = { ...group, cohorts: plan.cohorts, inactive: plan.inactive };
  }
  throw new Error('the executor kept asking for a plan it was sent');
}
