// Clauses answered by the context at each event: imported segments (E13) and connections rows (E14).

import { describe, expect, it } from 'vitest';
import type { ConnectionRow, SegmentContext } from '../api.js';
import { HOUR, MINUTE, T0, cohort, eq, ev, gte, holdsAfter, pred, runEvents, str } from './test-queries.js';
import type { Clause } from '../query/ast.js';

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
