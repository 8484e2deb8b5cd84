// Clauses answered by the context at each event: imported segments (E13) and connections rows (E14).

import { describe, expect, it } from 'vitest';
import type { ConnectionRow, SegmentContext } from '../api.js';
import { HOUR, MINUTE, T0, cohort, eq, ev, gte, holdsAfter, pred, runEvents, str } from '../../test/support/engine-queries.js';
import type { Clause } from '../query/ast.js';
import { compilePlan } from '../plan/compile.js';
import { segment } from './segment.js';
import { newUserState } from './user-state.js';

function contextWith(segments: string[], rows: Record<string, ConnectionRow[]> = {}): SegmentContext {
  return {
    inImportedSegment: (relation, provider, segment) => segments.includes(`${relation}/${provider}/${segment}`),
    connectionRows: (provider) => rows[provider] ?? [],
  };
}

describe('imported segments (E13)', () => {
  it('in_ / not_in_ second and third party segments ask the context at each event', () => {
    const cs = [
      cohort(1, { kind: 'membership', op: 'in_third_party_segment', provider: 'p', segment: 's' }),
      cohort(2, { kind: 'membership', op: 'not_in_second_party_segment', provider: 'p', segment: 's' }),
    ];
    const run = runEvents(cs, [ev('A', T0)], contextWith(['3rd/p/s', '2nd/p/s']));
    expect(run.after).toEqual([[1]]);
    const run2 = runEvents(cs, [ev('A', T0)], contextWith(['2nd/p/x']));
    expect(run2.after).toEqual([[2]]);
  });
});

describe('connections rows (E14)', () => {
  const rows: ConnectionRow[] = [
    { time: T0 - 2 * HOUR, properties: { plan: 'gold' } },
    { time: T0 - 10 * MINUTE, properties: { plan: 'gold' } },
    { time: T0 - 5 * MINUTE, properties: { plan: 'basic' } },
    { time: T0 + HOUR, properties: { plan: 'gold' } },
  ];
  const ctx = contextWith([], { crm: rows });
  const conn = (extra: Partial<Extract<Clause, { kind: 'connections' }>>): Clause => ({
    kind: 'connections',
    op: 'in_connections_import_segment',
    provider: 'crm',
    frequency: gte(1),
    ...extra,
  });
  const gold = pred('plan', str('equal_to', 'gold'), true);

  it('counts rows passing filters, relative property names', () => {
    const run = runEvents([cohort(1, conn({ filters: gold, frequency: eq(3) }))], [ev('A', T0)], ctx);
    expect(run.after).toEqual([[1]]);
  });

  it('the_last is relative to now and excludes rows after now', () => {
    const c = cohort(1, conn({ filters: gold, during: { kind: 'the_last', value: 1, unit: 'hours', ms: HOUR } }));
    expect(holdsAfter(runEvents([c], [ev('A', T0), ev('A', T0 + 51 * MINUTE)], ctx), 1)).toEqual([true, false]);
  });

  it('first N / last N are among the N earliest / latest rows, whatever the filters', () => {
    const first = cohort(1, conn({ filters: gold, frequency: eq(2), during: { kind: 'first', count: 3 } }));
    const last = cohort(2, conn({ filters: gold, frequency: eq(1), during: { kind: 'last', count: 2 } }));
    expect(runEvents([first, last], [ev('A', T0)], ctx).after).toEqual([[1, 2]]);
  });

  it('not_in_connections_import_segment is the negation; no rows = count 0', () => {
    const c = cohort(1, conn({ op: 'not_in_connections_import_segment', filters: pred('plan', str('equal_to', 'none'), true) }));
    expect(runEvents([c], [ev('A', T0)], ctx).after).toEqual([[1]]);
    expect(runEvents([cohort(2, conn({}))], [ev('A', T0)]).after).toEqual([[]]);
  });
});

describe('context clauses are asked only when their answer can matter (SLOTS.md)', () => {
  it('a cohort failed by a slot group does not ask ctx; once the group holds it follows ctx at every event (E13)', () => {
    let asked = 0;
    let segments = ['3rd/p/s'];
    const ctx: SegmentContext = {
      inImportedSegment: (relation, provider, segment) => {
        asked++;
        return segments.includes(`${relation}/${provider}/${segment}`);
      },
      connectionRows: () => [],
    };
    const cs = [cohort(1, { kind: 'expression', event: 'Buy', frequency: gte(1) }, { kind: 'membership', op: 'in_third_party_segment', provider: 'p', segment: 's' })];
    const plan = compilePlan(cs, 1);
    const state = newUserState();
    expect(segment(plan, state, [ev('A', T0), ev('A', T0 + 1)], ctx).memberships).toEqual([]);
    expect(asked).toBe(0);
    expect(segment(plan, state, [ev('Buy', T0 + 2)], ctx).memberships).toEqual([1]);
    segments = [];
    expect(segment(plan, state, [ev('A', T0 + 3)], ctx).memberships).toEqual([]);
    expect(asked).toBe(2);
  });

  it('a question several clauses ask is asked once per call, and again at the next call', () => {
    let asked = 0;
    let rowsAsked = 0;
    const ctx: SegmentContext = {
      inImportedSegment: () => {
        asked++;
        return true;
      },
      connectionRows: () => {
        rowsAsked++;
        return [{ time: T0, properties: {} }];
      },
    };
    const sports: Clause = { kind: 'membership', op: 'in_third_party_segment', provider: 'p', segment: 's' };
    const crm: Clause = { kind: 'connections', op: 'in_connections_import_segment', provider: 'crm', frequency: gte(1) };
    const plan = compilePlan([cohort(1, sports), cohort(2, sports, crm), cohort(3, crm), cohort(4, { ...crm, frequency: eq(2) })], 1);
    const state = newUserState();
    expect(segment(plan, state, [ev('A', T0), ev('A', T0 + 1)], ctx).memberships).toEqual([1, 2, 3]);
    expect([asked, rowsAsked]).toEqual([1, 1]);
    segment(plan, state, [ev('A', T0 + 2)], ctx);
    expect([asked, rowsAsked]).toEqual([2, 2]);
  });
});
