// A group's compute (tick.ts): every user with work goes to its partition's owner, grouped by organization, ONE
// task per owner (all owners at once; a group heavy with catch-up histories in several, posted at once), carrying
// first what the owner is still to be told about its resident states (state/residents.ts). The plan's cohorts are attached for the organizations an owner asks for (needPlan) and the task
// is sent again. An owner that lost its states (its thread was replaced) makes the group fail, after the cache
// forgets every user of that owner (they are loaded from the store again).

import type { PlanInfo } from '../plan-info.js';
import type { TakenAsks } from '../state/residents.js';
import { userKey } from '../state/cache.js';
import { captureFor, needsCompute, type TickEnv, type UserWork } from './tick.js';
import type { WorkGroup, WorkStep, WorkTask, WorkUser } from '../worker/work.js';

/** The asks one task carried and the encoded states its owner answered (one per snapshot ask). */
export interface CarriedAsks {
  readonly taken: TakenAsks;
  bytes: readonly (Uint8Array | null)[];
}

/** Runs the users' steps on their owners and stores each user's result in `work.result`; `carried` gets the asks sent. */
export async function compute(env: TickEnv, users: Map<string, UserWork>, plans: Map<string, PlanInfo>, carried: CarriedAsks[]): Promise<void> {
  const { executor } = env;
  const byOwner: Map<string, UserWork[]>[] = Array.from({ length: executor.owners }, () => new Map());
  for (const work of users.values()) {
    if (!needsCompute(work)) continue;
    const byOrg = byOwner[executor.ownerOf(work.partition)] as Map<string, UserWork[]>;
    const list = byOrg.get(work.org) ?? [];
    list.push(work);
    byOrg.set(work.org, list);
  }
  const runs: Promise<void>[] = [];
  byOwner.forEach((byOrg, owner) => {
    const taken = env.residents.take(owner);
    const asks = taken.drops.length > 0 || taken.snapshots.length > 0;
    if (byOrg.size === 0 && !asks) return;
    const carry: CarriedAsks = { taken, bytes: [] };
    if (asks) carried.push(carry);
    // A group heavy with catch-ups goes as several tasks, queued at once: the owner replays the first while the main
    // thread packs the next, and the main thread reads a reply while the owner replays the next. The first carries
    // the asks; the others none.
    splitByHistory(byOrg, env.catchUp.taskEvents).forEach((part, i) => {
      runs.push(runOwner(env, owner, part, plans, i === 0 ? carry : { taken: NO_ASKS, bytes: [] }));
    });
  });
  await Promise.all(runs);
}

const NO_ASKS: TakenAsks = { drops: [], snapshots: [], entries: [] };

/**
 * The owner's users in parts of about `taskEvents` history events each (catch-ups' histories and replays), in order;
 * one part (the usual group: no history, or little) when they hold fewer.
 */
export function splitByHistory(byOrg: Map<string, UserWork[]>, taskEvents: number): Map<string, UserWork[]>[] {
  let total = 0;
  for (const users of byOrg.values()) for (const work of users) total += historyEvents(work);
  if (total < 2 * taskEvents) return [byOrg];
  const parts: Map<string, UserWork[]>[] = [];
  let part = new Map<string, UserWork[]>();
  let events = 0;
  for (const [org, users] of byOrg) {
    for (const work of users) {
      if (events >= taskEvents) {
        parts.push(part);
        part = new Map();
        events = 0;
      }
      const list = part.get(org) ?? [];
      list.push(work);
      part.set(org, list);
      events += historyEvents(work);
    }
  }
  if (part.size > 0) parts.push(part);
  return parts;
}

function historyEvents(work: UserWork): number {
  const catchup = work.decision?.kind === 'inline' ? work.decision.catchup.events.count : 0;
  return catchup + work.replay.length;
}

async function runOwner(env: TickEnv, owner: number, byOrg: Map<string, UserWork[]>, plans: Map<string, PlanInfo>, carry: CarriedAsks): Promise<void> {
  const orgs = [...byOrg.keys()];
  const attach = new Set<string>();
  // At most: the plans asked for, then contexts the owner no longer holds, then the run.
  for (let attempt = 0; attempt < 4; attempt++) {
    const groups: WorkGroup[] = orgs.map((org) => {
      const plan = plans.get(org) as PlanInfo;
      const group = { org, version: plan.version, users: (byOrg.get(org) as UserWork[]).map(toWorkUser) };
      return attach.has(org) ? { ...group, cohorts: plan.cohorts, inactive: plan.inactive } : group;
    });
    const task: WorkTask = { groups, drops: carry.taken.drops, snapshots: carry.taken.snapshots };
    const reply = await env.executor.run(task, owner);
    if (reply.needPlan === true) {
      for (const org of reply.orgs) attach.add(org);
      continue;
    }
    if (reply.lost !== undefined && reply.needContext === true) {
      await captureAgain(env, byOrg, plans, new Set(reply.lost));
      continue;
    }
    if (reply.lost !== undefined) {
      forgetOwner(env, owner);
      throw new Error(`the partition owner ${owner} lost ${reply.lost.length} resident state(s) (its thread was replaced)`);
    }
    carry.bytes = reply.snapshots ?? [];
    // Loops, not callbacks: closures made per reply lose their optimized code at each collection (docs/performance.md).
    for (let g = 0; g < orgs.length; g++) {
      const results = reply.groups[g] ?? [];
      const works = byOrg.get(orgs[g] as string) as UserWork[];
      for (let u = 0; u < works.length; u++) (works[u] as UserWork).result = results[u];
    }
    return;
  }
  throw new Error('the executor kept asking for plans or contexts it was sent');
}

/** The users `keys`, sent without their imported data, get it captured now (the owner kept no context for them). */
async function captureAgain(env: TickEnv, byOrg: Map<string, UserWork[]>, plans: Map<string, PlanInfo>, keys: ReadonlySet<string>): Promise<void> {
  const epoch = env.contextEpoch?.() ?? -1;
  const reads: Promise<void>[] = [];
  for (const [org, works] of byOrg) {
    for (const work of works) {
      if (!keys.has(work.key)) continue;
      const read = captureFor(env, work, plans.get(org) as PlanInfo, epoch);
      if (read !== undefined) reads.push(read);
    }
  }
  await Promise.all(reads);
}

/** Every cached user of the owner is loaded from the store again (snapshot + later events: the exact state). */
function forgetOwner(env: TickEnv, owner: number): void {
  for (const entry of [...env.cache.values()]) {
    if (env.executor.ownerOf(entry.partition) === owner) env.cache.delete(userKey(entry.org, entry.user));
  }
  env.residents.clear(owner);
}

function toWorkUser(work: UserWork): WorkUser {
  const steps = work.steps.map((step): WorkStep => {
    if (step.item.kind === 'append') return { kind: 'events', events: step.fresh.map((fresh) => fresh.engine) };
    if (step.item.kind === 'evaluate') return { kind: 'evaluate', now: step.item.now };
    return { kind: 'read' };
  });
  const user: WorkUser = {
    key: work.key,
    resident: work.resident,
    state: work.loaded,
    replay: work.replay,
    snapshot: work.due,
    steps,
    ctx: work.ctx,
  };
  return work.decision?.kind === 'inline' ? { ...user, catchup: work.decision.catchup } : user;
}
