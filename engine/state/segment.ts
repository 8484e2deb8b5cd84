// The pure segment step: (plan, state, events, ctx) -> (state', transitions, memberships). Per event: advance the
// trackers, reset run-scoped slots, age timed slots, update the slots the event's name can change (one `where`
// evaluation per group), then re-evaluate the cohorts whose inputs changed in dependency order (E5, E12, E19).
// Also the re-evaluation without an event (E20): age, then re-evaluate.

import type { EngineEvent, SegmentContext, Transition } from '../api.js';
import type { ClauseTest, CompiledCohort, FilterGroup, Plan } from '../plan/plan.js';
import type { SlotDef, TransitionSlotDef } from './slots/types.js';
import { SESSION_CHANGED, SESSION_GAP_MS, VIEW_CHANGED, advanceTrackers } from './trackers.js';
import { CLAUSE_FINAL, CLAUSE_STALE, bindState, membershipsOf, setMembership, type UserState } from './user-state.js';

export interface SegmentResult {
  readonly state: UserState;
  readonly transitions: Transition[];
  /** Sorted codes of the cohorts the user is in after the last event. */
  readonly memberships: number[];
}

/** What a transition clause's `where` sees at a re-evaluation: an event with no properties (E20). */
const NO_PROPERTIES: Readonly<Record<string, unknown>> = Object.freeze({});

/** Runs `events` (in arrival order) through `plan`. Mutates and returns `state`. */
export function segment(plan: Plan, state: UserState, events: readonly EngineEvent[], ctx: SegmentContext): SegmentResult {
  bindState(state, plan);
  plan.contextMemo.startCall();
  try {
    const transitions = run(plan, state, events, ctx);
    // Only a call that evaluated decided anything with `ctx`.
    if (events.length > 0) decidedWith(state, ctx);
    return { state, transitions, memberships: membershipsOf(state) };
  } catch (error) {
    failed(state);
    throw error;
  }
}

/**
 * After a call that threw: every cohort is decided again at the next event (stale clauses stay stale, dirty marks
 * stay set), and no context counts as the one they were decided with.
 */
function failed(state: UserState): void {
  state.evaluateAll = true;
  state.context = undefined;
}

/**
 * E20: re-evaluates the user at `now` without an event (imported data changed, D27): time advances to
 * max(now, previous effective time), a derived session 30 minutes past its last event ends (D36 + D31), timed windows
 * age, context clauses read `ctx`; nothing new is counted. Its transitions have `eventIndex` -1 and time `now`. A user with no events is not evaluated (E5). Mutates `state`.
 */
export function evaluateAt(plan: Plan, state: UserState, now: number, ctx: SegmentContext): SegmentResult {
  bindState(state, plan);
  if (state.count === 0) return { state, transitions: [], memberships: membershipsOf(state) };
  plan.contextMemo.startCall();
  try {
    const transitions: Transition[] = [];
    // E1 / E20: the effective now never goes back; a non-finite now counts as the previous effective time.
    state.prevTime = state.time;
    if (Number.isFinite(now) && now > state.time) state.time = now;
    // D36 + D31: a derived session ends 30 minutes after its last event, even when the user is silent.
    if (sessionTimedOut(state)) endSession(plan, state);
    if (state.time >= state.nextExpiry) ageTimedSlots(plan, state);
    evaluateCohorts(plan, state, ctx, transitions, -1, NO_PROPERTIES, sameContext(state, ctx));
    decidedWith(state, ctx);
    return { state, transitions, memberships: membershipsOf(state) };
  } catch (error) {
    failed(state);
    throw error;
  }
}

/**
 * Whether the user's derived session (E2: no session_id, `sessionKey` null) has ended by the clock at `state.time`
 * and is still live in the state. A live session started at an event, so its start is at most the last event's time;
 * an ended one starts at the re-evaluation that ended it, later than every event (endSession), which is what keeps
 * the timeout idempotent without a new state field (and what encoded states carry, codec.ts). A session with a given
 * id never ends by the clock: the next event decides (D31 names no timeout for given ids).
 */
function sessionTimedOut(state: UserState): boolean {
  return state.sessionKey === null && state.sessionStartTime <= state.eventTime && state.time >= state.eventTime + SESSION_GAP_MS;
}

/**
 * D36 / D31: the derived session ended at the effective now of this re-evaluation: the current session run is now
 * empty (it holds no event: it starts at the next event's ordinal and at this now), and every session-scoped slot
 * resets as at a new session (E2), through the generated hook when there is one. The next event still starts a new
 * session by E2's gap, measured from the last event.
 */
function endSession(plan: Plan, state: UserState): void {
  state.sessionStartIndex = state.count;
  state.sessionStartTime = state.time;
  const hot = plan.hot;
  if (hot !== undefined) {
    hot.onSession(state);
    return;
  }
  const defs = plan.slots;
  const list = plan.sessionSlots;
  for (let k = 0; k < list.length; k++) {
    const index = list[k] as number;
    if ((defs[index] as SlotDef).onSessionStart(state)) touch(plan, state, index);
  }
}

/**
 * D36: the earliest instant t > state.time (epoch ms) at which `evaluateAt(plan, state, t, ctx)` could change a
 * membership with no event; +Infinity when none (also for a user with no events, E5). Never late; early only where a
 * timed slot's bound is conservative (a ring entry dropped by its cap, a transition's latest time replaced): one
 * wasted re-evaluation. Sources: the timed slots' expiry bound (`the_last` windows of expression, engagement and
 * transition slots) and, when the plan has session-scoped slots, the derived session's timeout (eventTime + 30 min).
 * Not covered: connections rows (E14) judged against now (`the_last`, `this_session`, `current_view` on rows): rows
 * are imported data read through `ctx`, not events (SEMANTICS.md E22). O(timed slots) at most, no allocation once the
 * state is bound to `plan` (binding it, when it is not, is what the next step would do anyway).
 */
export function nextDeadline(plan: Plan, state: UserState): number {
  if (state.count === 0) return Number.POSITIVE_INFINITY;
  bindState(state, plan);
  // Unknown after a binding (-Infinity): ageing at the same now drops nothing the last evaluation counted.
  if (!(state.nextExpiry > state.time)) ageTimedSlots(plan, state);
  let deadline = state.nextExpiry;
  if (plan.sessionSlots.length > 0 && state.sessionKey === null && state.sessionStartTime <= state.eventTime) {
    const end = state.eventTime + SESSION_GAP_MS;
    if (end < deadline) deadline = end;
  }
  // Only a state from before D36 can hold a session already past its timeout: it ends at the next re-evaluation.
  return deadline > state.time ? deadline : state.time + 1;
}

/**
 * Slot `slot` may have changed: the clauses reading it are stale (unless final) and their cohorts dirty (their bit
 * in the user's dirty words, plan.ts `dirtyBase`).
 */
function touch(plan: Plan, state: UserState, slot: number): void {
  // The generated code decides the readers with inline tests again at once (state/generated.ts, touchSource).
  const hot = plan.hot;
  if (hot !== undefined) {
    hot.touch(slot, state);
    return;
  }
  const flags = state.flags;
  const ints = state.ints;
  const base = plan.cohorts.length;
  const dirtyBase = plan.dirtyBase;
  const readers = plan.readers;
  const clauseCohort = plan.clauseCohort;
  const end = plan.readerStart[slot + 1] as number;
  for (let k = plan.readerStart[slot] as number; k < end; k++) {
    const clause = readers[k] as number;
    // A clause whose answer can no longer change (plan/sticky.ts) stays known.
    if ((flags[base + clause] as number) >= CLAUSE_FINAL) continue;
    flags[base + clause] = CLAUSE_STALE;
    const cohort = clauseCohort[clause] as number;
    ints[dirtyBase + (cohort >>> 5)] = (ints[dirtyBase + (cohort >>> 5)] as number) | (1 << (cohort & 31));
  }
}

/** Keeps the warming loads below alive (never read). */
let warmSink = 0;

/**
 * Loads one value per cache line of the user's numbers and flags, as independent loads: the memory system fetches
 * them in parallel, instead of one dependent miss at a time later (users' states rarely stay in cache between their
 * events).
 */
function warmState(state: UserState): void {
  const nums = state.nums;
  const flags = state.flags;
  let sum = 0;
  for (let i = 0; i < nums.length; i += 8) sum += nums[i] as number;
  for (let i = 0; i < flags.length; i += 64) sum += flags[i] as number;
  warmSink = sum;
}

/** The cohorts were just decided with `ctx`: remembered when it is constant (sameContext), else forgotten. */
function decidedWith(state: UserState, ctx: SegmentContext): void {
  state.context = ctx.constant === true ? ctx : undefined;
}

/** Whether the cohorts were last decided with `ctx` and it is constant: those reading it alone keep their decisions. */
function sameContext(state: UserState, ctx: SegmentContext): boolean {
  return ctx.constant === true && state.context === ctx;
}

function run(plan: Plan, state: UserState, events: readonly EngineEvent[], ctx: SegmentContext): Transition[] {
  const transitions: Transition[] = [];
  const defs = plan.slots;
  const hot = plan.hot;
  warmState(state);
  // After the first event the cohorts were decided with `ctx`: the same constant context for the rest of the call.
  let same = sameContext(state, ctx);
  const constant = ctx.constant === true;

  for (let e = 0; e < events.length; e++) {
    const event = events[e] as EngineEvent;
    const changes = advanceTrackers(state, event);
    if (hot !== undefined) {
      // The same steps through the plan's generated code (state/generated.ts).
      if ((changes & SESSION_CHANGED) !== 0) hot.onSession(state);
      if ((changes & VIEW_CHANGED) !== 0) hot.onView(state);
      if (state.time >= state.nextExpiry) ageTimedSlots(plan, state);
      const hook = hot.byEvent.get(event.name);
      if (hook !== undefined) hook(state, event.properties);
      evaluateCohorts(plan, state, ctx, transitions, e, event.properties, same);
      same = constant;
      continue;
    }
    if ((changes & SESSION_CHANGED) !== 0) {
      const list = plan.sessionSlots;
      for (let k = 0; k < list.length; k++) {
        const index = list[k] as number;
        if ((defs[index] as SlotDef).onSessionStart(state)) touch(plan, state, index);
      }
    }
    if ((changes & VIEW_CHANGED) !== 0) {
      const list = plan.viewSlots;
      for (let k = 0; k < list.length; k++) {
        const index = list[k] as number;
        if ((defs[index] as SlotDef).onViewStart(state)) touch(plan, state, index);
      }
    }
    // Timed slots are aged only when one of them can have expired (their earliest expiry is tracked).
    if (state.time >= state.nextExpiry) ageTimedSlots(plan, state);

    const groups = plan.byEvent.get(event.name);
    if (groups !== undefined) {
      for (let g = 0; g < groups.length; g++) {
        const group = groups[g] as FilterGroup;
        const matched = group.test === undefined || group.test(event.properties);
        const list = group.slots;
        for (let k = 0; k < list.length; k++) {
          const index = list[k] as number;
          const def = defs[index] as SlotDef;
          if ((matched || def.needsUnmatched) && def.onEvent(state, matched)) touch(plan, state, index);
        }
      }
    }
    evaluateCohorts(plan, state, ctx, transitions, e, event.properties, same);
    same = constant;
  }
  return transitions;
}

/** Drops what left the timed slots' windows at `state.time` and recomputes their expiry bounds. */
function ageTimedSlots(plan: Plan, state: UserState): void {
  const defs = plan.slots;
  const timed = plan.timedSlots;
  const nums = state.nums;
  const expiryBase = plan.expiryBase;
  let next = Number.POSITIVE_INFINITY;
  for (let k = 0; k < timed.length; k++) {
    if (state.time >= (nums[expiryBase + k] as number)) {
      const index = timed[k] as number;
      const def = defs[index] as SlotDef;
      if (def.refresh(state)) touch(plan, state, index);
      nums[expiryBase + k] = def.expiry(state);
    }
    if ((nums[expiryBase + k] as number) < next) next = nums[expiryBase + k] as number;
  }
  state.nextExpiry = next;
}

/**
 * Re-evaluates, in dependency order (E12), the cohorts whose clauses' slots changed plus every context-reading one
 * (all of them after a new binding), and appends their transitions (at `eventIndex`, ordered by code, E19).
 * `properties` are what a transition clause's `where` sees: the event's, or none for a re-evaluation (E20).
 * `sameContext`: the last decisions were made with this same constant `ctx` (api.ts): a cohort decided by it alone
 * (CompiledCohort.timeless: not in plan.changingMask) with no clause gone stale keeps its decision.
 */
function evaluateCohorts(
  plan: Plan,
  state: UserState,
  ctx: SegmentContext,
  transitions: Transition[],
  eventIndex: number,
  properties: Readonly<Record<string, unknown>>,
  sameContext: boolean,
): void {
  const cohorts = plan.cohorts;
  const defs = plan.slots;
  // Membership by cohort position at flags[p]; the decision state as bits (plan.ts): dirty and recheck words.
  const flags = state.flags;
  const ints = state.ints;
  const dirtyBase = plan.dirtyBase;
  const recheckBase = plan.recheckBase;
  // With the same constant context, a recheck cohort decided by it alone (not in changingMask) keeps its decision.
  const recheckMask = sameContext ? plan.changingMask : plan.cohortMask;
  const all = state.evaluateAll;
  state.evaluateAll = false;
  const firstTransition = transitions.length;
  for (let w = 0; w < plan.cohortWords; w++) {
    // The cohorts of this word still to visit are at bits >= `from`; re-read at each step, since a transition makes
    // the cohorts naming its cohort dirty within this event (E12: they come later in the order).
    let from = 0;
    while (from < 32) {
      const dirtyWord = ints[dirtyBase + w] as number;
      const recheckWord = ints[recheckBase + w] as number;
      let pending = all ? (plan.cohortMask[w] as number) : dirtyWord | (recheckWord & (recheckMask[w] as number));
      pending &= -1 << from;
      if (pending === 0) break;
      const bit = 31 - Math.clz32(pending & -pending);
      const mask = 1 << bit;
      const p = w * 32 + bit;
      // Not dirty, last decided by the context: the context alone can change its decision.
      const byContext = !all && (dirtyWord & mask) === 0 && (recheckWord & mask) !== 0;
      const decision = byContext ? decideByContext(plan, state, ctx, p) : decideCohort(plan, state, ctx, p);
      ints[dirtyBase + w] = (ints[dirtyBase + w] as number) & ~mask;
      ints[recheckBase + w] = (decision & SETTLED) !== 0 ? recheckWord & ~mask : recheckWord | mask;
      from = bit + 1;
      const holds = decision & HOLDS;
      if (holds === flags[p]) continue;
      setMembership(plan, state, p, holds);
      const code = (cohorts[p] as CompiledCohort).code;
      transitions.push({ cohort: code, kind: holds === 1 ? 'entered' : 'exited', time: state.time, eventIndex });
      // E12: cohorts naming this one see the transition within this same event (they come later in the order).
      const hearing = (holds === 1 ? plan.entered : plan.exited)[p] as Int32Array;
      for (let k = 0; k < hearing.length; k++) {
        const index = hearing[k] as number;
        const def = defs[index] as TransitionSlotDef;
        const matched = def.matches === undefined || def.matches(properties);
        if (def.onTransition(state, matched)) touch(plan, state, index);
      }
    }
  }
  // E19: within an event, transitions are ordered by cohort code.
  if (transitions.length - firstTransition > 1) sortTail(transitions, firstTransition);
}

/** decideCohort's answer: bit HOLDS = the cohort holds; bit SETTLED = no context clause was needed to decide. */
const HOLDS = 1;
const SETTLED = 2;

/**
 * The cohort's CNF now, reading as little as it can. Known clause results (not stale, not context-reading) first: a
 * group with a known true clause holds, a group of known false clauses fails the cohort. Then the stale slot clauses
 * of the undecided groups (stopping at the first that holds), and only then their context clauses. A clause
 * skipped stays stale; E5 holds: an evaluated clause answers what its slot says now, so evaluating fewer changes no
 * answer. The decision is SETTLED when no context clause was needed (it stands until a clause goes stale).
 */
function decideCohort(plan: Plan, state: UserState, ctx: SegmentContext, p: number): number {
  const flags = state.flags;
  const hot = plan.hot;
  const base = plan.cohorts.length;
  const volatile = plan.clauseVolatile;
  const tests = plan.clauseTests;
  const ends = plan.groupEnds;
  const first = plan.cohortGroups[p] as number;
  const last = plan.cohortGroups[p + 1] as number;
  const start = plan.cohortStart[p] as number;
  let open = 0;
  let c = start;
  for (let g = first; g < last; g++) {
    const end = ends[g] as number;
    let known = 0; // 0: every clause known false, 1: one known true, 2: undecided
    for (; c < end; c++) {
      // A context clause's flag is always CLAUSE_STALE (set at binding, never written): it reads as unknown.
      const f = flags[base + c] as number;
      if (f === CLAUSE_STALE) known = 2;
      else if ((f & 1) === 1) {
        known = 1;
        break;
      }
    }
    if (known === 0) return SETTLED;
    if (known === 2) open++;
    c = end;
  }
  if (open === 0) return HOLDS | SETTLED;
  // Stale slot clauses of the undecided groups; a group left without a true slot clause needs the context.
  let needsContext = 0;
  c = start;
  for (let g = first; g < last; g++) {
    const end = ends[g] as number;
    let holds = false;
    let hasContext = false;
    for (let k = c; k < end; k++) {
      let f = flags[base + k] as number;
      if (f === CLAUSE_STALE) {
        if (volatile[k] === 1) {
          hasContext = true;
          continue;
        }
        f = (hot !== undefined ? hot.clause(k, state, ctx) : (tests[k] as ClauseTest)(state, ctx)) ? 1 : 0;
        flags[base + k] = isFinal(plan, state, k, f) ? f | CLAUSE_FINAL : f;
      }
      if ((f & 1) === 1) {
        holds = true;
        break;
      }
    }
    if (!holds) {
      if (!hasContext) return SETTLED;
      needsContext++;
    }
    c = end;
  }
  if (needsContext === 0) return HOLDS | SETTLED;
  return decideByContext(plan, state, ctx, p);
}

/**
 * The last step of decideCohort: every group holds by a known true clause or by one of its context clauses. Alone,
 * it decides a cohort whose last decision read the context and none of whose clauses went stale since: that
 * decision evaluated every slot clause of the groups it left to the context, and none has changed.
 */
function decideByContext(plan: Plan, state: UserState, ctx: SegmentContext, p: number): number {
  const flags = state.flags;
  const base = plan.cohorts.length;
  const volatile = plan.clauseVolatile;
  const tests = plan.clauseTests;
  const ends = plan.groupEnds;
  const last = plan.cohortGroups[p + 1] as number;
  let c = plan.cohortStart[p] as number;
  for (let g = plan.cohortGroups[p] as number; g < last; g++) {
    const end = ends[g] as number;
    let holds = false;
    for (let k = c; k < end && !holds; k++) if (((flags[base + k] as number) & 1) === 1) holds = true;
    for (let k = c; k < end && !holds; k++) if (volatile[k] === 1 && (tests[k] as ClauseTest)(state, ctx)) holds = true;
    if (!holds) return 0;
    c = end;
  }
  return HOLDS;
}

/** Whether clause `k`'s fresh answer `f` can no longer change: its lasting answer, or its slot past the bound. */
function isFinal(plan: Plan, state: UserState, k: number, f: number): boolean {
  if (f === plan.clauseSticky[k]) return true;
  const above = plan.clauseFinalAbove[k] as number;
  return above !== Number.POSITIVE_INFINITY && (plan.slots[plan.clauseSlot[k] as number] as SlotDef).value(state) > above;
}

/** Insertion sort of the event's transitions by cohort code (few, nearly sorted). */
function sortTail(transitions: Transition[], from: number): void {
  for (let i = from + 1; i < transitions.length; i++) {
    const item = transitions[i] as Transition;
    let j = i - 1;
    while (j >= from && (transitions[j] as Transition).cohort > item.cohort) {
      transitions[j + 1] = transitions[j] as Transition;
      j--;
    }
    transitions[j + 1] = item;
  }
}
