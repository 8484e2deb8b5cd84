// A lane's part of a committed group's batch: events (sequences continue the partition's), their transitions and
// the catch-up and re-evaluation ones in the global transitions log with the reactions' outbox (commit-log.ts;
// catch-ups logged `replay: true`, server/backfill/README.md), the deadline index (D36), the size counter deltas per
// cohort generation (D19; their writes are added at write time, tick.ts) and the snapshots now due (encoded by the
// owners, tick.ts `snapshotDue`); plus each user's next cache entry.

import type { BatchOp } from '../../store/contract.js';
import { partitionSeqOps, pushEventOps, pushEventRunOps } from '../../domain/events/index.js';
import type { LoggedTransition, StoredEvent } from '../../domain/events/index.js';
import type { CommitLog } from './commit-log.js';
import type { Lane, LaneItem } from '../lanes/lane.js';
import { userSnapshotOps } from '../state/load.js';
import { toMemberCodes, type CachedUser } from '../state/cache.js';
import type { PlanInfo } from '../plan-info.js';
import { SizeDeltas } from './sizes.js';
import type { Step, StepOf, TickEnv, UserWork } from './tick.js';

export function buildOps(
  env: TickEnv,
  lane: Lane,
  items: readonly LaneItem[],
  stepOf: StepOf,
  users: Map<string, UserWork>,
  plans: ReadonlyMap<string, PlanInfo>,
  log: CommitLog,
): { ops: BatchOp[]; seq: number; deltas: SizeDeltas } {
  const partition = lane.partition;
  const ops: BatchOp[] = [];

  let seq = lane.lastSeq;
  const seqOf = new Map<UserWork, number>();
  const freshCount = new Map<UserWork, number>();
  const logged = new Set<UserWork>();
  // Users with a quiet item (issue 15): everything logged for them this tick repeats an earlier owner's log.
  const quietWork = new Set<UserWork>();
  for (const item of items) {
    if ((item.kind === 'append' && item.request.quiet === true) || (item.kind === 'catchup' && item.quiet === true)) quietWork.add((stepOf.get(item) as { work: UserWork }).work);
  }
  for (const item of items) {
    const { work, index } = stepOf.get(item) as { work: UserWork; index: number };
    const step = work.steps[index] as Step;
    const result = work.result?.steps[index];
    // A catch-up's changes come first: they precede the tick's events of the user.
    const caughtUp = work.result?.caughtUp;
    if (caughtUp !== undefined && caughtUp.length > 0 && !logged.has(work)) {
      logged.add(work);
      log.transitions(work.org, work.user, null, caughtUp, true, quietWork.has(work));
    }
    if (item.kind === 'append') {
      for (const transition of result?.transitions ?? []) {
        step.fresh[transition.eventIndex]?.transitions.push({ cohort: transition.cohort, kind: transition.kind, time: transition.time });
      }
      // D37 every_time: who the user was in before each event (before the step, then each event's transitions).
      const quiet = item.request.quiet === true;
      const member = !quiet && log.wantsPageviews(work.org)
        ? new Set(index === 0 ? (work.result?.current ?? []) : (work.result?.steps[index - 1]?.memberships ?? []))
        : undefined;
      // An append of several events stores them as blocks (domain/events/blocks.ts), one alone as its record.
      const run: StoredEvent[] | undefined = step.fresh.length > 1 ? [] : undefined;
      for (const fresh of step.fresh) {
        fresh.seq = ++seq;
        const stored = fresh.toStored();
        if (run !== undefined) run.push(stored);
        else pushEventOps(ops, work.org, stored);
        if (member !== undefined) log.pageview(work.org, work.user, stored.name, stored.id, stored.timeMs, member);
        log.transitions(work.org, work.user, stored.id, fresh.transitions, quiet, quiet);
        if (member === undefined) continue;
        for (const t of fresh.transitions) {
          if (t.kind === 'entered') member.add(t.cohort);
          else member.delete(t.cohort);
        }
      }
      if (run !== undefined) pushEventRunOps(ops, work.org, run);
      if (step.fresh.length > 0) {
        seqOf.set(work, seq);
        freshCount.set(work, (freshCount.get(work) ?? 0) + step.fresh.length);
      }
      if (item.request.extraOps !== undefined) ops.push(...item.request.extraOps);
    } else if (item.kind === 'evaluate' && work.result !== undefined && work.result.count > 0) {
      work.evaluated = true;
      const transitions = (result?.transitions ?? []).map((t): LoggedTransition => ({ cohort: t.cohort, kind: t.kind, time: t.time }));
      log.transitions(work.org, work.user, null, transitions);
    }
  }

  const deltas = new SizeDeltas();
  const now = env.now();
  for (const work of users.values()) {
    const result = work.result;
    // D36: the deadline index follows the state (and the entries this tick's deadline items came from are done).
    const due = dueKeys(work);
    if (result === undefined || result.count === 0) {
      for (const key of due) ops.push({ type: 'del', key });
      continue;
    }
    log.deadline(partition, work.org, work.user, result.deadlineBefore, result.deadline, due);
    const plan = plans.get(work.org) as PlanInfo;
    const genOf = (code: number): number => plan.gens.get(code) ?? 0;
    const decision = work.decision;
    const memberships = result.steps[result.steps.length - 1]?.memberships ?? result.current;
    // D19 per generation: a stale cohort never counted this user in its generation, so it starts from "not in".
    const stale = decision?.kind === 'inline' ? new Set(decision.stale) : undefined;
    const before = stale === undefined ? result.previous : result.previous.filter((code) => !stale.has(code));
    deltas.addDifference(work.org, before, memberships, genOf);
    const mark = decision !== undefined && decision.kind !== 'defer' && decision.kind !== 'park' ? decision.mark : work.base.mark;
    const added = freshCount.get(work) ?? 0;
    const changed = added > 0 || work.evaluated || work.replay.length > 0 || stale !== undefined;
    const wasDirty = work.base.dirty;
    let dirty = wasDirty || changed;
    let unsnapshotted = work.base.unsnapshotted + added;
    const dirtySince = wasDirty ? work.base.dirtySince : now;
    const userSeq = Math.max(seqOf.get(work) ?? 0, work.base.seq);
    const fold = added > 0 ? (env.folder?.due(work.base.count, result.count) ?? 0) : 0;
    if (fold > 0) work.fold = { throughSeq: userSeq, events: fold };
    if (dirty && work.due) {
      if (result.state === undefined) throw new Error('a due snapshot was not encoded by its owner');
      ops.push(...userSnapshotOps(work.org, work.user, userSeq, result.state, result.count, mark));
      work.snapshotted = true;
      dirty = false;
      unsnapshotted = 0;
    }
    work.next = {
      org: work.org,
      user: work.user,
      partition,
      size: result.bytes,
      memberships: toMemberCodes(memberships),
      seq: userSeq,
      count: result.count,
      mark,
      dirty,
      unsnapshotted,
      dirtySince: dirty ? dirtySince : 0,
      ctxEpoch: -1,
      ctxVersion: -1,
    };
    holdContext(work.next, work, plan, added);
  }
  // Where the partition's sequences go on after a restart (events without transitions have no log entry).
  if (seq > lane.lastSeq) ops.push(...partitionSeqOps(partition, seq));
  // The size counters' writes are added by the group just before its write (tick.ts): from the committed counts.
  return { ops, seq, deltas };
}

const NO_KEYS: readonly string[] = Object.freeze([]);

/**
 * Notes in `next` (CachedUser.ctxEpoch, none: -1) which captured context the owner's state holds after the tick: the
 * one sent, once the state was decided with it (events, a re-evaluation, a replay: the engine keeps the constant
 * context it decided with); else, for a resident user, the one it held before (none for a state loaded in this tick).
 * Written into the entry, not returned: it runs for every user of every group.
 */
function holdContext(next: CachedUser, work: UserWork, plan: PlanInfo, added: number): void {
  const decided = added > 0 || work.evaluated || work.replay.length > 0;
  if (work.ctx !== null && decided) {
    if (work.ctxEpoch < 0) return;
    next.ctxEpoch = work.ctxEpoch;
    next.ctxVersion = plan.version;
  } else if (work.resident) {
    next.ctxEpoch = work.base.ctxEpoch;
    next.ctxVersion = work.base.ctxVersion;
  }
}

/** The deadline index entries of the user's evaluate items (usually none). */
function dueKeys(work: UserWork): readonly string[] {
  let due: string[] | undefined;
  for (const step of work.steps) if (step.item.kind === 'evaluate' && step.item.due !== undefined) (due ??= []).push(step.item.due);
  return due ?? NO_KEYS;
}
