// Constant contexts (api.ts `constant`): while the same constant object comes with a user's calls, a cohort decided by
// imported data alone keeps its decision instead of asking again at every event (E13 still holds: its answers cannot
// have changed); a new object, a clause gone stale, a clock-dependent rows window or a non-constant context are asked.

import { describe, expect, it } from 'vitest';
import type { ConnectionRow, SegmentContext } from '../api.js';
import { MINUTE, T0, cohort, ev, gte, lt } from '../../test/support/engine-queries.js';
import type { Clause } from '../query/ast.js';
import { compilePlan } from '../plan/compile.js';
import { evaluateAt, segment } from './segment.js';
import { newUserState } from './user-state.js';

/** A context whose questions are counted; `constant` as given. */
function counted(segments: readonly string[], rows: Record<string, ConnectionRow[]>, constant: boolean): SegmentContext & { asked: number } {
  const ctx = {
    asked: 0,
    inImportedSegment: (relation: string, provider: string, segment: string) => {
      ctx.asked++;
      return segments.includes(`${relation}/${provider}/${segment}`);
    },
    connectionRows: (provider: string) => {
      ctx.asked++;
      return rows[provider] ?? [];
    },
    constant,
  };
  return ctx;
}

const inSports: Clause = { kind: 'membership', op: 'in_third_party_segment', provider: 'p', segment: 's' };
const boughtOnce: Clause = { kind: 'expression', event: 'Buy', frequency: gte(1) };
/** Buy at least once and in the segment: decided by the context once the Buy is counted. */
const buyersInSports = cohort(1, boughtOnce, inSports);

describe('constant contexts (api.ts)', () => {
  it('a cohort decided by imported segments keeps its decision while the same constant object comes back', () => {
    const plan = compilePlan([buyersInSports], 1);
    const state = newUserState();
    const ctx = counted(['3rd/p/s'], {}, true);
    expect(segment(plan, state, [ev('Buy', T0)], ctx).memberships).toEqual([1]);
    expect(ctx.asked).toBe(1);
    for (let i = 1; i <= 5; i++) expect(segment(plan, state, [ev('A', T0 + i * MINUTE)], ctx).memberships).toEqual([1]);
    expect(evaluateAt(plan, state, T0 + 10 * MINUTE, ctx).memberships).toEqual([1]);
    expect(ctx.asked).toBe(1);
    // New data comes in a new object: followed at once (E13).
    const left = counted([], {}, true);
    expect(segment(plan, state, [ev('A', T0 + 11 * MINUTE)], left).memberships).toEqual([]);
    expect(left.asked).toBe(1);
  });

  it('a non-constant context is asked at every event, as before', () => {
    const plan = compilePlan([buyersInSports], 1);
    const state = newUserState();
    const ctx = counted(['3rd/p/s'], {}, false);
    segment(plan, state, [ev('Buy', T0)], ctx);
    for (let i = 1; i <= 3; i++) segment(plan, state, [ev('A', T0 + i * MINUTE)], ctx);
    expect(ctx.asked).toBe(4);
  });

  it('a clause whose answer changed decides the cohort again, with the context asked again', () => {
    // The second group holds by its Click clause while the user clicked less than twice, else by the context.
    const plan = compilePlan([cohort(1, boughtOnce, [inSports, { kind: 'expression', event: 'Click', frequency: lt(2) }])], 1);
    const state = newUserState();
    const ctx = counted(['3rd/p/s'], {}, true);
    expect(segment(plan, state, [ev('Buy', T0)], ctx).memberships).toEqual([1]);
    expect(ctx.asked).toBe(0);
    // A first Click changes the slot the clause reads, not its answer (1 < 2): the generated code tests the clause
    // at once (state/generated.ts) and the decision stands.
    expect(segment(plan, state, [ev('Click', T0 + MINUTE)], ctx).memberships).toEqual([1]);
    expect(ctx.asked).toBe(0);
    // The second Click turns it false: the cohort is decided again, by the context.
    expect(segment(plan, state, [ev('Click', T0 + 2 * MINUTE)], ctx).memberships).toEqual([1]);
    expect(ctx.asked).toBe(1);
  });

  it('a changed slot whose clause keeps its answer decides nothing in the generated code; the generic loops decide', () => {
    // Buy counted, the second group waits on the context while the user clicked less than twice.
    const cohorts = [cohort(1, boughtOnce, [inSports, { kind: 'expression', event: 'Click', frequency: gte(2) }])];
    for (const generateCode of [true, false]) {
      const plan = compilePlan(cohorts, 1, { generateCode });
      const state = newUserState();
      const ctx = counted(['3rd/p/s'], {}, true);
      expect(segment(plan, state, [ev('Buy', T0)], ctx).memberships).toEqual([1]);
      expect(ctx.asked).toBe(1);
      // One Click: 1 >= 2 is still false. Generated: tested at once, unchanged, the cohort keeps its decision.
      // Generic: the clause goes stale, the cohort is decided again and asks the context again.
      expect(segment(plan, state, [ev('Click', T0 + MINUTE)], ctx).memberships).toEqual([1]);
      expect(ctx.asked, `generateCode ${generateCode}`).toBe(generateCode ? 1 : 2);
    }
  });

  it('rows judged against the clock (the_last) are asked at every event even from a constant context', () => {
    const rows = { crm: [{ time: T0, properties: {} }] };
    const recentRow: Clause = {
      kind: 'connections',
      op: 'in_connections_import_segment',
      provider: 'crm',
      frequency: gte(1),
      during: { kind: 'the_last', value: 10, unit: 'minutes', ms: 10 * MINUTE },
    };
    const plan = compilePlan([cohort(1, boughtOnce, recentRow)], 1);
    const state = newUserState();
    const ctx = counted([], rows, true);
    expect(segment(plan, state, [ev('Buy', T0 + MINUTE)], ctx).memberships).toEqual([1]);
    expect(segment(plan, state, [ev('A', T0 + 11 * MINUTE)], ctx).memberships).toEqual([]);
  });

  it('a call without events decides nothing: the next call with its context asks it', () => {
    const plan = compilePlan([buyersInSports], 1);
    const state = newUserState();
    segment(plan, state, [ev('Buy', T0)], counted(['3rd/p/s'], {}, true));
    const other = counted([], {}, true);
    expect(segment(plan, state, [], other).memberships).toEqual([1]);
    expect(segment(plan, state, [ev('A', T0 + MINUTE)], other).memberships).toEqual([]);
  });
});
