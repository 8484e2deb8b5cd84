// The pure segment step: (plan, state, events, ctx) -> (state', transitions, memberships). Per event: advance the
// trackers, reset run-scoped slots, age timed slots, update the slots the event's name can change (one `where`
// evaluation per group), then re-evaluate the cohorts whose inputs changed in dependency order (E5, E12, E19).

import type { EngineEvent, SegmentContext, Transition } from '../api.js';
import type { ClauseTest, CompiledCohort, FilterGroup, Plan } from '../plan/plan.js';
import type { SlotDef, TransitionSlotDef } from './slots/types.js';
import { SESSION_CHANGED, VIEW_CHANGED, advanceTrackers } from './trackers.js';
import { bindState, membershipsOf, noteTransition, type UserState } from './user-state.js';

export interface SegmentResult {
  readonly state: UserState;
  readonly transitions: Transition[];
  /** Sorted codes of the cohorts the user is in after the last event. */
  readonly memberships: number[];
}

/** Runs `events` (in arrival order) through `plan`. Mutates and returns `state`. */
/** Which clauses (and their cohorts) read a slot whose value may have changed at this event. */
interface Dirty {
  readonly clauses: Uint8Array;
  readonly cohorts: Uint8Array;
  readonly clauseCohort: Int32Array;
}

/**
 * Scratch flags reused across calls (every flag is cleared as its cohort is visited, so they are clean between
 * events); a nested call (from a context callback) gets its own, and a throw clears them.
 */
let scratch: Dirty = { clauses: new Uint8Array(256), cohorts: new Uint8Array(64), clauseCohort: new Int32Array(0) };
let scratchBusy = false;

/** Runs `events` (in arrival order) through `plan`. Mutates and returns `state`. */
export function segment(plan: Plan, state: UserState, events: readonly EngineEvent[], ctx: SegmentContext): SegmentResult {
  bindState(state, plan);
  const clauses = plan.clauseTests.length;
  const cohorts = plan.cohorts.length;
  if (scratchBusy) {
    const own: Dirty = { clauses: new Uint8Array(clauses), cohorts: new Uint8Array(cohorts), clauseCohort: plan.clauseCohort };
    const transitions = run(plan, state, events, ctx, own);
    return { state, transitions, memberships: membershipsOf(state) };
  }
  if (scratch.clauses.length < clauses || scratch.cohorts.length < cohorts || scratch.clauseCohort !== plan.clauseCohort) {
    scratch = {
      clauses: scratch.clauses.length < clauses ? new Uint8Array(clauses * 2) : scratch.clauses,
      cohorts: scratch.cohorts.length < cohorts ? new Uint8Array(cohorts * 2) : scratch.cohorts,
      clauseCohort: plan.clauseCohort,
    };
  }
  scratchBusy = true;
  try {
    const transitions = run(plan, state, events, ctx, scratch);
    return { state, transitions, memberships: membershipsOf(state) };
  } catch (error) {
    scratch.clauses.fill(0);
    scratch.cohorts.fill(0);
    throw error;
  } finally {
    scratchBusy = false;
  }
}

function touch(readers: Int32Array, dirty: Dirty): void {
  for (let k = 0; k < readers.length; k++) {
    const clause = readers[k] as number;
    dirty.clauses[clause] = 1;
    dirty.cohorts[dirty.clauseCohort[clause] as number] = 1;
  }
}

function run(plan: Plan, state: UserState, events: readonly EngineEvent[], ctx: SegmentContext, dirty: Dirty): Transition[] {
  const transitions: Transition[] = [];
  const cohorts = plan.cohorts;
  const defs = plan.slots;
  const dependents = plan.dependents;
  const tests = plan.clauseTests;
  const clauseVolatile = plan.clauseVolatile;
  const volatile = plan.volatile;
  // Membership by cohort position, then clause results at `base + clause`.
  const flags = state.flags;
  const base = cohorts.length;
  const dirtyClauses = dirty.clauses;
  const dirtyCohorts = dirty.cohorts;

  for (let e = 0; e < events.length; e++) {
    const event = events[e] as EngineEvent;
    const changes = advanceTrackers(state, event);
    if ((changes & SESSION_CHANGED) !== 0) {
      const list = plan.sessionSlots;
      for (let k = 0; k < list.length; k++) {
        const index = list[k] as number;
        if ((defs[index] as SlotDef).onSessionStart(state)) touch(dependents[index] as Int32Array, dirty);
      }
    }
    if ((changes & VIEW_CHANGED) !== 0) {
      const list = plan.viewSlots;
      for (let k = 0; k < list.length; k++) {
        const index = list[k] as number;
        if ((defs[index] as SlotDef).onViewStart(state)) touch(dependents[index] as Int32Array, dirty);
      }
    }
    // Timed slots are aged only when one of them can have expired (their earliest expiry is tracked).
    if (state.time >= state.nextExpiry) {
      const timed = plan.timedSlots;
      const nums = state.nums;
      const expiryBase = plan.expiryBase;
      let next = Number.POSITIVE_INFINITY;
      for (let k = 0; k < timed.length; k++) {
        if (state.time >= (nums[expiryBase + k] as number)) {
          const index = timed[k] as number;
          const def = defs[index] as SlotDef;
          if (def.refresh(state)) touch(dependents[index] as Int32Array, dirty);
          nums[expiryBase + k] = def.expiry(state);
        }
        if ((nums[expiryBase + k] as number) < next) next = nums[expiryBase + k] as number;
      }
      state.nextExpiry = next;
    }

    const groups = plan.byEvent.get(event.name);
    if (groups !== undefined) {
      for (let g = 0; g < groups.length; g++) {
        const group = groups[g] as FilterGroup;
        const matched = group.test === undefined || group.test(event.properties);
        const list = group.slots;
        for (let k = 0; k < list.length; k++) {
          const index = list[k] as number;
          const def = defs[index] as SlotDef;
          if ((matched || def.needsUnmatched) && def.onEvent(state, matched)) touch(dependents[index] as Int32Array, dirty);
        }
      }
    }

    const all = state.evaluateAll;
    state.evaluateAll = false;
    const firstTransition = transitions.length;
    for (let p = 0; p < cohorts.length; p++) {
      if (!all && dirtyCohorts[p] === 0 && volatile[p] === 0) continue;
      dirtyCohorts[p] = 0;
      const cohort = cohorts[p] as CompiledCohort;
      // Only clauses whose slots may have changed, or that read the context, are re-evaluated (E5 holds: the
      // others would answer the same).
      for (let c = cohort.start; c < cohort.end; c++) {
        if (!all && dirtyClauses[c] === 0 && clauseVolatile[c] === 0) continue;
        dirtyClauses[c] = 0;
        flags[base + c] = (tests[c] as ClauseTest)(state, ctx) ? 1 : 0;
      }
      const holds = cnfHolds(flags, base, cohort) ? 1 : 0;
      if (holds === flags[p]) continue;
      flags[p] = holds;
      noteTransition(state, cohort.code, holds === 1);
      transitions.push({ cohort: cohort.code, kind: holds === 1 ? 'entered' : 'exited', time: state.time, eventIndex: e });
      // E12: cohorts naming this one see the transition within this same event (they come later in the order).
      const hearing = (holds === 1 ? plan.entered : plan.exited)[p] as Int32Array;
      for (let k = 0; k < hearing.length; k++) {
        const index = hearing[k] as number;
        const def = defs[index] as TransitionSlotDef;
        const matched = def.matches === undefined || def.matches(event.properties);
        if (def.onTransition(state, matched)) touch(dependents[index] as Int32Array, dirty);
      }
    }
    // E19: within an event, transitions are ordered by cohort code.
    if (transitions.length - firstTransition > 1) sortTail(transitions, firstTransition);
  }
  return transitions;
}

/** CNF over the cohort's clause results: every group has a clause that holds. */
function cnfHolds(flags: Uint8Array, base: number, cohort: CompiledCohort): boolean {
  const ends = cohort.groupEnds;
  let c = cohort.start;
  for (let g = 0; g < ends.length; g++) {
    const end = ends[g] as number;
    let any = false;
    while (c < end) {
      if (flags[base + c] === 1) any = true;
      c++;
      if (any) break;
    }
    if (!any) return false;
    c = end;
  }
  return true;
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
