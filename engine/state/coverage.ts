// Which slots of a plan a user's state is not up to date for (new or changed clauses after the user had history),
// and adopting them from a state rebuilt by replaying the user's history (the backfill issue builds on these).

import type { Plan } from '../plan/plan.js';
import type { SlotDef } from './slots/types.js';
import { bindState, forgetClauseResults, setMembership, type UserState } from './user-state.js';

/** Canonical keys of the plan's slots the state lacks (or holds only partially). Binds the state to `plan`. */
export function missingSlots(plan: Plan, state: UserState): string[] {
  bindState(state, plan);
  // The common case (every slot up to date) asks nothing of the plan's slots (an owner asks for every user it runs).
  if (state.fresh.size === 0) return [];
  return plan.slots.filter((slot) => state.fresh.has(slot.id)).map((slot) => slot.key);
}

/**
 * Copies the data of the slots `keys` (and the memberships of cohorts `cohorts`) from `source` — typically
 * `segment(plan, newUserState(), history, ctx).state` over the same events `target` has seen — into `target`,
 * and marks them up to date. Every cohort is re-evaluated at the target's next event.
 */
export function adoptSlots(plan: Plan, target: UserState, source: UserState, keys: readonly string[], cohorts: readonly number[] = []): void {
  bindState(target, plan);
  bindState(source, plan);
  const fresh = new Set(target.fresh);
  for (const key of keys) {
    const index = plan.slotIndexOfKey.get(key);
    if (index === undefined) continue;
    const slot = plan.slots[index] as SlotDef;
    if (slot.adopt(structuredClone(slot.encode(source)), target) === 'invalid') slot.init(target);
    fresh.delete(slot.id);
  }
  if (fresh.size !== target.fresh.size) target.fresh = fresh;
  for (const code of cohorts) {
    const position = plan.positionOfCode.get(code);
    if (position !== undefined) setMembership(plan, target, position, source.flags[position] as number);
  }
  target.nums.fill(Number.NEGATIVE_INFINITY, plan.expiryBase);
  target.nextExpiry = Number.NEGATIVE_INFINITY;
  forgetClauseResults(target, plan);
}
