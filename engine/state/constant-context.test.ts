// Constant contexts (api.ts `constant`): while the same constant object comes with a user's calls, a cohort decided by
// imported data alone keeps its decision instead of asking again at every event (E13 still holds: its answers cannot
// have changed); a new object, a clause gone stale, a clock-dependent rows window or a non-constant context are asked.

import { describe, expect, it } from 'vitest';
import type { ConnectionRow, SegmentContext } from '../api.js';
import { MINUTE, T0, cohort, ev, gte } from '../../test/support/engine-queries.js';
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

  it('a clause gone stale decides the cohort again, with the context asked again', () => {
    const plan = compilePlan([cohort(1, boughtOnce, [inSports, { kind: 'expression', event: 'Click', frequency: gte(2) }])], 1);
    const state = newUserState();
    const ctx = counted(['3rd/p/s'], {}, true);
    segment(plan, state, [ev('Buy', T0)], ctx);
    const before = ctx.asked;
    // A Click changes the slot the second group's other clause reads: the cohort is decided again.
    expect(segment(plan, state, [ev('Click', T0 + MINUTE)], ctx).memberships).toEqual([1]);
    expect(ctx.asked).toBe(before + 1);
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
