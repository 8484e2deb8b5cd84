// A tick's resident-state I/O (server/ingest/README.md "Resident states"): where each user's state is (resident in
// its owner, or loaded from the store), which states are due for a snapshot (decided before the compute, so the
// owners encode only those), and the snapshots of the asks a group carried (written first, or forgotten if it failed).

import type { BatchOp } from '../../store/contract.js';
import type { Lane } from '../lanes/lane.js';
import type { PlanInfo } from '../plan-info.js';
import { userKey } from '../state/cache.js';
import { loadStoredState, userSnapshotOps } from '../state/load.js';
import type { CarriedAsks } from './compute.js';
import type { TickEnv, UserWork } from './tick.js';

/** Each user's state: resident in its owner (the cache, or an ask not sent yet names it), else loaded from the store. */
export async function loadStates(env: TickEnv, lane: Lane, users: Map<string, UserWork>): Promise<void> {
  // Resident users (the usual case) are settled here and now: only the loads wait, so a group of resident users
  // makes no promise per user.
  const loads: Promise<void>[] = [];
  for (const work of users.values()) {
    let resident = env.cache.get(work.key);
    if (resident === undefined) {
      resident = env.residents.reclaim(lane.partition, work.key);
      // Back in the cache, which says what the owners hold (a user whose items leave the tick stays resident).
      if (resident !== undefined) env.cache.set(resident);
    }
    if (resident !== undefined) {
      work.base = { ...resident };
      work.resident = true;
    } else loads.push(loadState(env, work));
  }
  if (loads.length > 0) await Promise.all(loads);
}

async function loadState(env: TickEnv, work: UserWork): Promise<void> {
  const loaded = await loadStoredState(env.store, work.org, work.user);
  const dirty = loaded.replay.length > 0;
  work.base = {
    size: 0,
    memberships: '',
    seq: loaded.seq,
    count: loaded.count,
    mark: loaded.mark,
    dirty,
    unsnapshotted: loaded.replay.length,
    dirtySince: dirty ? env.now() : 0,
    ctxEpoch: -1,
    ctxVersion: -1,
  };
  work.loaded = loaded.bytes;
  work.replay = loaded.replay;
}

/**
 * Whether the user's state, if newer than its last snapshot after the tick, is snapshotted with the tick's batch:
 * after `snapshotEvery` events or `snapshotAfterMs`, and always after a re-evaluation or a catch-up (they change
 * state without an event) and for a user's first state when a cohort has a generation (it carries its mark):
 * recovery then neither loses nor repeats a count. Decided before the compute, which encodes only those states.
 */
export function snapshotDue(env: TickEnv, work: UserWork, plan: PlanInfo, now: number): boolean {
  const added = work.steps.reduce((sum, step) => sum + step.fresh.length, 0);
  const evaluates = work.steps.some((step) => step.item.kind === 'evaluate');
  const first = work.base.count === 0 && plan.maxGen > 0;
  const since = work.base.dirty ? work.base.dirtySince : now;
  return (
    evaluates ||
    work.decision?.kind === 'inline' ||
    first ||
    work.base.unsnapshotted + added >= env.snapshotEvery ||
    now - since >= env.snapshotAfterMs
  );
}

/** The snapshot ops of the asks a group carried: stamped with what each entry covered when it was asked. */
export function carriedSnapshotOps(carried: readonly CarriedAsks[]): BatchOp[] {
  const ops: BatchOp[] = [];
  for (const { taken, bytes } of carried) {
    taken.entries.forEach((entry, i) => {
      const state = bytes[i];
      if (state != null) ops.push(...userSnapshotOps(entry.org, entry.user, entry.seq, state, entry.count, entry.mark));
    });
  }
  return ops;
}

/** How many snapshots the asks a group carried wrote (an owner that no longer held a state answered none for it). */
export function carriedSnapshots(carried: readonly CarriedAsks[]): number {
  let count = 0;
  for (const { bytes } of carried) for (const state of bytes) if (state != null) count++;
  return count;
}

/** A failed group's asks: states it made its owner forget stay forgotten; the others are dirty again. */
export function forgetCarried(env: TickEnv, carried: readonly CarriedAsks[]): void {
  const now = env.now();
  for (const { taken } of carried) {
    taken.entries.forEach((entry, i) => {
      const key = userKey(entry.org, entry.user);
      if (taken.snapshots[i]?.drop === true) env.residents.invalidate(entry.partition, key);
      else if (env.cache.peek(key) === entry && !entry.dirty) {
        entry.dirty = true;
        entry.dirtySince = now;
      }
    });
  }
}

