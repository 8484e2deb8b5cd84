// compilePlan: shared slots by canonical key, count caps, fingerprints in transition keys, and the reference checks
// (D18): unknown codes and cycles rejected with stable codes; inactive cohorts (E21).

import { describe, expect, it } from 'vitest';
import { EngineError } from '../errors.js';
import type { Clause } from '../query/ast.js';
import { EMPTY_CONTEXT } from '../api.js';
import { decodeState, encodeState } from '../state/codec.js';
import { segment } from '../state/segment.js';
import { DAY, MINUTE, T0, cohort, eq, ev, expr, gte, lt, pred, str, theLast } from '../../test/support/engine-queries.js';
import { newUserState } from '../state/user-state.js';
import { compilePlan } from './compile.js';
import { countCap } from './comparison.js';

const entered = (segment: number): Clause => ({ kind: 'transition', op: 'has_entered', segment });

function codeOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    return error instanceof EngineError ? error.code : 'not an EngineError';
  }
  return undefined;
}

describe('slot sharing', () => {
  it('two cohorts with the same clause share one slot; different frequencies too', () => {
    const where = pred('properties.sku', str('equal_to', 'a'));
    const plan = compilePlan([cohort(1, expr('Buy', { where })), cohort(2, expr('Buy', { where, frequency: gte(5) }))], 7);
    expect(plan.slotKeys).toHaveLength(1);
    expect(plan.version).toBe(7);
    expect(plan.codes).toEqual([1, 2]);
    const group = plan.byEvent.get('Buy');
    expect(group).toHaveLength(1);
  });

  it('the_last lengths normalise to ms (10 minutes = 600 seconds), and the ring keeps the largest cap', () => {
    const minutes = { kind: 'the_last' as const, value: 10, unit: 'minutes' as const, ms: 10 * MINUTE };
    const plan = compilePlan([cohort(1, expr('Buy', { during: minutes, frequency: gte(3) })), cohort(2, expr('Buy', { during: theLast(10 * MINUTE), frequency: lt(7) }))], 1);
    expect(plan.slotKeys).toHaveLength(1);
    expect((plan.slots[0] as unknown as { cap: number }).cap).toBe(7);
  });

  it('slots with the same event and where but different windows share one where evaluation', () => {
    const where = pred('properties.sku', str('equal_to', 'a'));
    const plan = compilePlan([cohort(1, expr('Buy', { where })), cohort(2, expr('Buy', { where, during: theLast(DAY) }))], 1);
    expect(plan.slotKeys).toHaveLength(2);
    expect(plan.byEvent.get('Buy')).toHaveLength(1);
    expect(plan.byEvent.get('Buy')?.[0]?.slots).toHaveLength(2);
  });

  it('a transition slot key changes when the named cohort changes (even through another cohort)', () => {
    const v1 = compilePlan([cohort(1, expr('A')), cohort(2, entered(1)), cohort(3, entered(2))], 1);
    const v2 = compilePlan([cohort(1, expr('B')), cohort(2, entered(1)), cohort(3, entered(2))], 2);
    const shared = v1.slotKeys.filter((key) => v2.slotKeys.includes(key));
    expect(shared).toEqual([]);
    const v3 = compilePlan([cohort(1, expr('A')), cohort(2, entered(1)), cohort(3, entered(2)), cohort(4, expr('C'))], 3);
    expect(v1.slotKeys.every((key) => v3.slotKeys.includes(key))).toBe(true);
  });
});

describe('references (D18)', () => {
  it('ENGINE_UNKNOWN_COHORT for a transition naming an absent code', () => {
    expect(codeOf(() => compilePlan([cohort(1, entered(2))], 1))).toBe('ENGINE_UNKNOWN_COHORT');
  });

  it('ENGINE_COHORT_CYCLE for cycles, including a cohort naming itself', () => {
    expect(codeOf(() => compilePlan([cohort(1, entered(1))], 1))).toBe('ENGINE_COHORT_CYCLE');
    expect(codeOf(() => compilePlan([cohort(1, entered(2)), cohort(2, entered(3)), cohort(3, entered(1))], 1))).toBe('ENGINE_COHORT_CYCLE');
    expect(codeOf(() => compilePlan([cohort(1, entered(2)), cohort(2, expr('A')), cohort(3, entered(1))], 1))).toBeUndefined();
  });

  it('orders cohorts so named cohorts come first (E12)', () => {
    const plan = compilePlan([cohort(1, entered(3)), cohort(2, expr('A')), cohort(3, entered(2))], 1);
    expect(plan.cohorts.map((c) => c.code)).toEqual([2, 3, 1]);
  });

  it('rejects duplicate codes', () => {
    expect(codeOf(() => compilePlan([cohort(1, expr('A')), cohort(1, expr('B'))], 1))).toBe('ENGINE_INVALID_QUERY');
  });
});

describe('inactive cohorts (E21, D19)', () => {
  const notEntered = (segment: number): Clause => ({ kind: 'transition', op: 'has_not_entered', segment });
  const exited = (segment: number): Clause => ({ kind: 'transition', op: 'has_exited', segment });

  it('a transition clause naming an inactive code compiles; one naming a code neither active nor inactive throws', () => {
    expect(codeOf(() => compilePlan([cohort(1, entered(2))], 1, { inactive: [2] }))).toBeUndefined();
    expect(codeOf(() => compilePlan([cohort(1, entered(2)), cohort(3, entered(4))], 1, { inactive: [2] }))).toBe('ENGINE_UNKNOWN_COHORT');
  });

  it('a code both in the plan and inactive is ENGINE_INVALID_QUERY', () => {
    expect(codeOf(() => compilePlan([cohort(1, expr('A'))], 1, { inactive: [1] }))).toBe('ENGINE_INVALID_QUERY');
  });

  it('no entry or exit of an inactive cohort ever happens: has_ never holds, has_not_ always does (no slot)', () => {
    const plan = compilePlan([cohort(1, entered(9)), cohort(2, notEntered(9)), cohort(3, exited(9)), cohort(4, [entered(9), expr('A')])], 1, { inactive: [9] });
    expect(plan.slotKeys).toHaveLength(1);
    const state = newUserState();
    expect(segment(plan, state, [ev('B', T0)], EMPTY_CONTEXT).memberships).toEqual([2]);
    expect(segment(plan, state, [ev('A', T0 + 1)], EMPTY_CONTEXT).memberships).toEqual([2, 4]);
    const decoded = decodeState(encodeState(state));
    expect(segment(plan, decoded, [ev('B', T0 + 2)], EMPTY_CONTEXT).memberships).toEqual([2, 4]);
  });

  it('inactive codes impose no order and form no cycle (an inactive cohort is not evaluated)', () => {
    const plan = compilePlan([cohort(1, entered(3)), cohort(2, entered(1))], 1, { inactive: [3] });
    expect(plan.cohorts.map((c) => c.code)).toEqual([1, 2]);
  });

  it('enabling a named cohort gives new keys to the slots hearing the cohorts that name it (D19 backfill)', () => {
    const before = compilePlan([cohort(1, entered(3)), cohort(2, entered(1))], 1, { inactive: [3] });
    const after = compilePlan([cohort(1, entered(3)), cohort(2, entered(1)), cohort(3, expr('A'))], 2);
    expect(before.slotKeys).toHaveLength(1);
    expect(after.slotKeys.some((key) => before.slotKeys.includes(key))).toBe(false);
  });
});

describe('countCap', () => {
  it('is the count from which a comparison no longer changes', () => {
    expect(countCap(gte(5))).toBe(5);
    expect(countCap(eq(3))).toBe(4);
    expect(countCap({ op: 'greater_than', value: 5 })).toBe(6);
    expect(countCap({ op: 'between', start: 2, end: 4.5 })).toBe(5);
    expect(countCap(lt(0))).toBe(0);
  });
});
