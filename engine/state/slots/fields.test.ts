// 32-bit and 64-bit fields (types.ts, plan.ts's layout): where slots sit in a user's buffer, that 32-bit counts hold
// at UINT_MAX instead of wrapping, and that a stored tuple gives a 32-bit field only what it holds exactly.

import { describe, expect, it } from 'vitest';
import { EMPTY_CONTEXT } from '../../api.js';
import type { Clause } from '../../query/ast.js';
import { compilePlan } from '../../plan/compile.js';
import type { Plan } from '../../plan/plan.js';
import { cohort, ev, expr, gte, T0 } from '../../../test/support/engine-queries.js';
import { SampleGenerator } from '../../../test/support/sample-cohorts.js';
import { segment } from '../segment.js';
import { bindState, newUserState } from '../user-state.js';
import { UINT_MAX, type SlotDef } from './types.js';

/** The byte ranges a slot's fields take: its 64-bit ones, then its 32-bit ones. */
function rangesOf(slot: SlotDef): [number, number][] {
  const out: [number, number][] = [];
  if (slot.numWidth > 0) out.push([8 * slot.num, 8 * (slot.num + slot.numWidth)]);
  if (slot.intWidth > 0) out.push([4 * slot.int, 4 * (slot.int + slot.intWidth)]);
  return out;
}

/** One slot of `plan` (the only one of the cohort's clause). */
function onlySlot(plan: Plan): SlotDef {
  expect(plan.slots).toHaveLength(1);
  return plan.slots[0] as SlotDef;
}

describe('32-bit and 64-bit slot fields', () => {
  it('lay every slot out apart, 64-bit fields on 8-byte boundaries, before the cohort bits and the expiry bounds', () => {
    for (let seed = 1; seed <= 6; seed++) {
      const plan = compilePlan(new SampleGenerator(seed).cohorts(100), 1);
      const ranges = plan.slots.flatMap(rangesOf).sort((a, b) => a[0] - b[0]);
      for (let i = 0; i < ranges.length; i++) {
        const [start, end] = ranges[i] as [number, number];
        expect(end).toBeGreaterThan(start);
        expect(end).toBeLessThanOrEqual(4 * plan.dirtyBase);
        if (i > 0) expect(start).toBeGreaterThanOrEqual((ranges[i - 1] as [number, number])[1]);
      }
      for (const slot of plan.slots) {
        // Counts, flags, ordinals and bit words are 32-bit; times, sums and fractions 64-bit.
        expect(slot.numWidth + slot.intWidth).toBeGreaterThan(0);
        if (slot.timed) expect(slot.expiryAt).toBeGreaterThanOrEqual(plan.expiryBase);
      }
      // The dirty words, then the recheck words, then the membership words, then the expiry bounds.
      expect(plan.recheckBase).toBe(plan.dirtyBase + plan.cohortWords);
      expect(plan.memberBase).toBe(plan.recheckBase + plan.cohortWords);
      expect(4 * (plan.memberBase + plan.cohortWords)).toBeLessThanOrEqual(8 * plan.expiryBase);
      const counted = plan.slots.filter((slot) => slot.intWidth > 0).length;
      expect(counted).toBeGreaterThan(plan.slots.length / 2);
      // Smaller than every field at 64 bits, and the padding is at most 4 bytes per slot (and 4 after the bits).
      const wide = plan.slots.reduce((sum, slot) => sum + 8 * (slot.numWidth + slot.intWidth), 0);
      const exact = plan.slots.reduce((sum, slot) => sum + 8 * slot.numWidth + 4 * slot.intWidth, 0);
      expect(8 * plan.expiryBase).toBeLessThan(wide);
      expect(8 * plan.expiryBase).toBeLessThanOrEqual(exact + 4 * plan.slots.length + 8 * plan.cohortWords + 4);
    }
  });

  it('take 3,060 bytes a user for the bench\'s 100 cohorts, against 3,992 with every field 64-bit', () => {
    // The figure engine/state/SLOTS.md and docs/performance.md quote: the sample generator's cohorts of the engine,
    // memory and owner benches (seed 42): numbers, the cohorts' dirty, recheck and membership bits and expiry bounds,
    // then one flag byte per cohort and clause. Against every field 64-bit and a state byte per cohort (the layout
    // before).
    const plan = compilePlan(new SampleGenerator(42).cohorts(100), 1);
    const flags = plan.cohorts.length + plan.clauseTests.length;
    const timed = plan.slots.filter((slot) => slot.timed).length;
    const wide = 8 * (plan.slots.reduce((sum, slot) => sum + slot.numWidth + slot.intWidth, 0) + timed);
    expect(plan.cohortWords).toBe(4);
    expect({ bytes: 8 * plan.numCount + flags, wide: wide + flags + plan.cohorts.length }).toEqual({ bytes: 3_060, wide: 3_992 });
  });

  it('hold a count at UINT_MAX, with generated code and without', () => {
    const cohorts = [cohort(1, expr('Buy', { frequency: gte(3) }))];
    for (const plan of [compilePlan(cohorts, 1), compilePlan(cohorts, 1, { generateCode: false })]) {
      const state = newUserState();
      expect(segment(plan, state, [ev('Buy', T0)], EMPTY_CONTEXT).memberships).toEqual([]);
      const slot = onlySlot(plan);
      expect(slot.intWidth).toBe(1);
      state.ints[slot.int] = UINT_MAX - 1;
      segment(plan, state, [ev('Buy', T0 + 1), ev('Buy', T0 + 2), ev('Buy', T0 + 3)], EMPTY_CONTEXT);
      expect(slot.value(state)).toBe(UINT_MAX);
      expect(segment(plan, state, [ev('Buy', T0 + 4)], EMPTY_CONTEXT).memberships).toEqual([1]);
    }
  });

  it('hold first N\'s seen count and a last N transition total at UINT_MAX', () => {
    // `first 2^40`: the seen count stops at UINT_MAX (the window never closes before it); matches still count.
    const first = compilePlan([cohort(1, expr('Buy', { during: { kind: 'first', count: 2 ** 40 }, frequency: gte(1) }))], 1);
    const a = newUserState();
    segment(first, a, [ev('Buy', T0)], EMPTY_CONTEXT);
    const seen = onlySlot(first);
    a.ints[seen.int] = UINT_MAX;
    segment(first, a, [ev('Buy', T0 + 1)], EMPTY_CONTEXT);
    expect([a.ints[seen.int], seen.value(a)]).toEqual([UINT_MAX, 2]);
    // has_entered 1 during last 3: [total, latest ordinal]; an entry at UINT_MAX keeps both there, and it counts.
    const inA = cohort(1, expr('A', { during: { kind: 'current_view' } }));
    const entered: Clause = { kind: 'transition', op: 'has_entered', segment: 1, during: { kind: 'last', count: 3 } };
    const plan = compilePlan([inA, cohort(2, entered)], 1);
    const slot = plan.slots.find((s) => s.event === undefined) as SlotDef;
    const b = newUserState();
    segment(plan, b, [ev('A', T0)], EMPTY_CONTEXT);
    b.ints[slot.int] = UINT_MAX;
    b.ints[slot.int + 1] = UINT_MAX;
    // A Pageview starts a new view (1 exits), then A enters 1 again.
    const after = segment(plan, b, [ev('Pageview', T0 + 1), ev('A', T0 + 2)], EMPTY_CONTEXT);
    expect([b.ints[slot.int], b.ints[slot.int + 1], slot.value(b)]).toEqual([UINT_MAX, UINT_MAX, 1]);
    expect(after.memberships).toEqual([1, 2]);
  });

  it('adopt a stored 32-bit field only when it is an integer in [0, UINT_MAX]', () => {
    const plan = compilePlan([cohort(1, expr('Buy', { frequency: gte(1) }))], 1);
    const slot = onlySlot(plan);
    const state = newUserState();
    bindState(state, plan);
    for (const bad of [UINT_MAX + 1, -1, 1.5, Number.NaN, null, '3']) expect(slot.adopt([bad], state)).toBe('invalid');
    expect(slot.adopt([UINT_MAX], state)).toBe('current');
    expect(slot.value(state)).toBe(UINT_MAX);
    expect(slot.encode(state)).toEqual([UINT_MAX]);
  });
});
