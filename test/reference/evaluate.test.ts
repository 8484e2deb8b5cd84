// Self-tests of the reference evaluator over event streams: scenarios taken from the spec's words, D31–D35 and
// engine/SEMANTICS.md (E1–E14, E19–E21).

import { describe, expect, it } from 'vitest';
import type { ConnectionRow, EngineEvent, SegmentContext } from '../../engine/api.js';
import { evaluateReference, evaluateReferenceSteps, type ReferenceCohort } from './index.js';

const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const MIN = 60_000;
const iso = (ms: number): string => new Date(ms).toISOString();

function event(name: string, at: number, properties: Record<string, unknown> = {}, extra: Partial<EngineEvent> = {}): EngineEvent {
  return { name, time: T0 + at, properties, ...extra };
}

const NO_CTX: SegmentContext = { inImportedSegment: () => false, connectionRows: () => [] };

/** Membership of cohort 1 after each event. */
function timeline(query: unknown, events: EngineEvent[], ctx: SegmentContext = NO_CTX): boolean[] {
  return evaluateReference([{ code: 1, query }], events, ctx).map((step) => step.memberships.includes(1));
}

describe('reference expression clause (E4, D33)', () => {
  it('five page views: out at the fourth, in at the fifth, one entry at event 4', () => {
    const events = [0, 1, 2, 3, 4].map((m) => event('Pageview', m * MIN));
    const steps = evaluateReference([{ code: 1, query: { event: 'Pageview', frequency: { greater_than_or_equal_to: 5 } } }], events, NO_CTX);
    expect(steps.map((s) => s.memberships)).toEqual([[], [], [], [], [1]]);
    expect(steps.flatMap((s) => s.transitions)).toEqual([{ cohort: 1, kind: 'entered', time: T0 + 4 * MIN, eventIndex: 4 }]);
  });
  it('frequency equal_to 0 holds for a user with events but none that match (D33)', () => {
    const q = { event: 'Purchase', frequency: { equal_to: 0 } };
    expect(timeline(q, [event('Pageview', 0), event('Pageview', 1), event('Purchase', 2), event('Pageview', 3)])).toEqual([true, true, false, false]);
  });
  it('where filters the counted events', () => {
    const q = { event: 'Purchase', where: { property: 'properties.amount', condition: { greater_than: 10 } } };
    expect(timeline(q, [event('Purchase', 0, { amount: 10 }), event('Purchase', 1, { amount: '11' }), event('Purchase', 2, { amount: 11 })])).toEqual([false, false, true]);
  });
  it('the_last is (now - length, now]: an event exactly one window old no longer counts, at an unrelated event (E5)', () => {
    const q = { event: 'Click', during: { the_last: { value: 1, unit: 'minutes' } } };
    expect(timeline(q, [event('Click', 0), event('Pageview', MIN - 1), event('Pageview', MIN)])).toEqual([true, true, false]);
  });
  it('every unit of the_last has its length: a month is 30 days, a week 7 days', () => {
    const DAY = 86_400_000;
    expect(timeline({ event: 'Click', during: { the_last: { value: 1, unit: 'months' } } }, [event('Click', 0), event('Pageview', 30 * DAY - 1), event('Pageview', 30 * DAY)])).toEqual([true, true, false]);
    expect(timeline({ event: 'Click', during: { the_last: { value: 2, unit: 'weeks' } } }, [event('Click', 0), event('Pageview', 14 * DAY - 1), event('Pageview', 14 * DAY)])).toEqual([true, true, false]);
    expect(timeline({ event: 'Click', during: { the_last: { value: 90, unit: 'seconds' } } }, [event('Click', 0), event('Pageview', 90_000)])).toEqual([true, false]);
  });
  it('in_interval is inclusive, before and after are strict, at the exact millisecond', () => {
    const interval = { event: 'Click', during: { in_interval: { start: iso(T0 + MIN), end: iso(T0 + 2 * MIN) } } };
    expect(timeline(interval, [event('Click', MIN - 1)])).toEqual([false]);
    expect(timeline(interval, [event('Click', MIN)])).toEqual([true]);
    expect(timeline(interval, [event('Click', 2 * MIN)])).toEqual([true]);
    expect(timeline(interval, [event('Click', 2 * MIN + 1)])).toEqual([false]);
    expect(timeline({ event: 'Click', during: { before: iso(T0 + MIN) } }, [event('Click', MIN - 1), event('Click', MIN)]).every(Boolean)).toBe(true);
    expect(timeline({ event: 'Click', during: { before: iso(T0 + MIN) } }, [event('Click', MIN)])).toEqual([false]);
    expect(timeline({ event: 'Click', during: { after: iso(T0 + MIN) } }, [event('Click', MIN), event('Click', MIN + 1)])).toEqual([false, true]);
  });
  it('a late event takes the previous effective time (E1)', () => {
    const q = { event: 'Click', during: { before: iso(T0 + 5 * MIN) } };
    const steps = evaluateReference([{ code: 1, query: q }], [event('Pageview', 10 * MIN), event('Click', 0)], NO_CTX);
    expect(steps[1]?.memberships).toEqual([]);
    const window = { event: 'Click', during: { the_last: { value: 1, unit: 'minutes' } }, frequency: { equal_to: 2 } };
    expect(timeline(window, [event('Click', 10 * MIN), event('Click', 0)])).toEqual([false, true]);
  });
  it('first N / last N pick among the events of that name, then apply where', () => {
    const where = { property: 'properties.ok', condition: { boolean_equal_to: true } };
    const first = { event: 'Click', during: { first: 2 }, where, frequency: { equal_to: 1 } };
    const clicks = [event('Click', 0, { ok: false }), event('Pageview', 1), event('Click', 2, { ok: true }), event('Click', 3, { ok: true })];
    expect(timeline(first, clicks)).toEqual([false, false, true, true]);
    const last = { event: 'Click', during: { last: 1 }, where };
    expect(timeline(last, [...clicks, event('Click', 4, { ok: false }), event('Pageview', 5)])).toEqual([false, false, true, true, false, false]);
  });
});

describe('reference sessions and views (E2, E3, D31)', () => {
  const twiceThisSession = { event: 'Click', during: 'this_session', frequency: { greater_than_or_equal_to: 2 } };
  it('a gap under 30 minutes keeps the session; exactly 30 minutes starts a new one', () => {
    expect(timeline(twiceThisSession, [event('Click', 0), event('Click', 30 * MIN - 1)])).toEqual([false, true]);
    expect(timeline(twiceThisSession, [event('Click', 0), event('Click', 30 * MIN)])).toEqual([false, false]);
  });
  it('session_id names the session; an event without one within 30 minutes stays in it', () => {
    const events = [
      event('Click', 0, {}, { session_id: 's1' }),
      event('Click', MIN, {}, { session_id: null }),
      event('Click', 2 * MIN, {}, { session_id: 's2' }),
      event('Click', 3 * MIN),
      event('Click', 4 * MIN, {}, { session_id: 's1' }),
    ];
    expect(timeline(twiceThisSession, events)).toEqual([false, true, false, true, false]);
    const farApart = [event('Click', 0, {}, { session_id: 's1' }), event('Click', 5 * 60 * MIN, {}, { session_id: 's1' })];
    expect(timeline(twiceThisSession, farApart)).toEqual([false, true]);
  });
  it('each Pageview opens a view that later events join; a view_id names the view', () => {
    const q = { event: 'Click', during: 'current_view', frequency: { equal_to: 1 } };
    expect(timeline(q, [event('Click', 0), event('Pageview', 1), event('Click', 2), event('Pageview', 3), event('Click', 4), event('Click', 5)])).toEqual([
      true, false, true, false, true, false,
    ]);
    const named = [event('Pageview', 0, {}, { view_id: 'v1' }), event('Click', 1), event('Pageview', 2, {}, { view_id: 'v1' })];
    expect(timeline(q, named)).toEqual([false, true, true]);
  });
});

describe('reference engagement (E6–E9, D32)', () => {
  const engage = (at: number, properties: Record<string, unknown>, extra: Partial<EngineEvent> = {}): EngineEvent =>
    event('PageviewEngagement', at, properties, extra);
  it('engaged_time sums finite non-negative seconds, others count 0', () => {
    const q = { engaged_time: { seconds: { greater_than_or_equal_to: 10 } } };
    expect(timeline(q, [engage(0, { engaged_time: 6 }), engage(1, { engaged_time: -5 }), engage(2, { engaged_time: '9' }), engage(3, { engaged_time: 4 })])).toEqual([
      false, false, false, true,
    ]);
    const windowed = { engaged_time: { seconds: { greater_than_or_equal_to: 10 }, during: 'this_session' } };
    expect(timeline(windowed, [engage(0, { engaged_time: 6 }), engage(40 * MIN, { engaged_time: 6 })])).toEqual([false, false]);
  });
  it('engaged_completion is the largest completion in the current view, 0 when none', () => {
    const q = { engaged_completion: { completion: { float_greater_than_or_equal_to: 0.5 } } };
    expect(timeline(q, [event('Pageview', 0), engage(1, { completion: 0.7 }), engage(2, { completion: 0.2 }), event('Pageview', 3), engage(4, { completion: null })])).toEqual([
      false, true, true, false, false,
    ]);
    expect(timeline({ engaged_completion: { completion: { equal_to: 0 } } }, [event('Pageview', 0)])).toEqual([true]);
  });
  it('engaged_views counts views whose matching engagement meets the per-view threshold', () => {
    const q = { engaged_views: { times: { greater_than_or_equal_to: 2 }, engaged_time: { greater_than_or_equal_to: 10 } } };
    const events = [
      event('Pageview', 0), engage(1, { engaged_time: 6 }), engage(2, { engaged_time: 5 }),
      event('Pageview', 3), engage(4, { engaged_time: 9 }),
      event('Pageview', 5), engage(6, { engaged_time: 10 }),
    ];
    expect(timeline(q, events)).toEqual([false, false, false, false, false, false, true]);
    const completion = { engaged_views: { times: { equal_to: 1 }, completion: { float_greater_than: 0.5 }, during: 'current_view' } };
    expect(timeline(completion, [event('Pageview', 0), engage(1, { completion: 0.9 }), event('Pageview', 2)])).toEqual([false, true, false]);
  });
  it('engaged_views with completion takes the largest completion carried, as given even below 0 (E9, as E8)', () => {
    const negative = { engaged_views: { times: { equal_to: 1 }, completion: { float_less_than: 0 } } };
    expect(timeline(negative, [event('Pageview', 0), engage(1, { completion: -0.5 }), engage(2, {}), event('Pageview', 3), engage(4, {})])).toEqual([
      false, true, true, true, true,
    ]);
  });
  it('engaged_views last N is among the most recent views with a matching engagement event', () => {
    const q = { engaged_views: { times: { equal_to: 1 }, engaged_time: { greater_than: 5 }, during: { last: 1 } } };
    const events = [event('Pageview', 0), engage(1, { engaged_time: 9 }), event('Pageview', 2), event('Click', 3), engage(4, { engaged_time: 1 })];
    expect(timeline(q, events)).toEqual([false, true, true, true, false]);
  });
});

describe('reference transitions between cohorts (E10–E12, D35)', () => {
  it('an entry caused by this very event is seen by a cohort that names it, whatever the codes', () => {
    for (const [base, dependent] of [[1, 2], [2, 1]] as const) {
      const cohorts: ReferenceCohort[] = [
        { code: base, query: { event: 'Purchase' } },
        { code: dependent, query: { has_entered: { segment: base } } },
      ];
      const steps = evaluateReference(cohorts, [event('Pageview', 0), event('Purchase', 1)], NO_CTX);
      expect(steps[1]?.memberships).toEqual([1, 2]);
      expect(steps[1]?.transitions.map((t) => t.cohort)).toEqual([1, 2]);
    }
  });
  it('has_exited and has_not_entered follow the exits and entries, with where on the causing event', () => {
    const cohorts: ReferenceCohort[] = [
      { code: 1, query: { event: 'Click', during: { the_last: { value: 1, unit: 'minutes' } } } },
      { code: 2, query: { has_exited: { segment: 1, where: { property: 'properties.page', condition: { equal_to: 'home' } } } } },
      { code: 3, query: { has_not_entered: { segment: 1, during: 'this_session' } } },
    ];
    const steps = evaluateReference(
      cohorts,
      [event('Pageview', 0), event('Click', MIN), event('Pageview', 3 * MIN, { page: 'shop' }), event('Click', 4 * MIN), event('Pageview', 6 * MIN, { page: 'home' })],
      NO_CTX,
    );
    expect(steps.map((s) => s.memberships)).toEqual([[3], [1], [], [1], [2]]);
    expect(steps[4]?.transitions).toEqual([
      { cohort: 1, kind: 'exited', time: T0 + 6 * MIN, eventIndex: 4 },
      { cohort: 2, kind: 'entered', time: T0 + 6 * MIN, eventIndex: 4 },
    ]);
  });
  it('first N entries are counted whatever their event, then where applies', () => {
    const cohorts: ReferenceCohort[] = [
      { code: 1, query: { event: 'Click', during: 'current_view' } },
      { code: 2, query: { has_entered: { segment: 1, during: { first: 1 }, where: { property: 'properties.n', condition: { equal_to: 2 } } } } },
    ];
    const events = [event('Click', 0, { n: 1 }), event('Pageview', 1), event('Click', 2, { n: 2 })];
    expect(evaluateReference(cohorts, events, NO_CTX).map((s) => s.memberships)).toEqual([[1], [], [1]]);
  });
});

describe('reference imported data (E13, E14)', () => {
  const rows: ConnectionRow[] = [
    { time: T0 - MIN, properties: { tier: 'gold', score: 3 } },
    { time: T0 + 5 * MIN, properties: { tier: 'silver', score: 1 } },
    { time: T0 + 90 * MIN, properties: { tier: 'gold' } },
  ];
  const ctx: SegmentContext = {
    inImportedSegment: (relation, provider, segment) => relation === '3rd' && provider === 'p' && segment === 's',
    connectionRows: (provider) => (provider === 'crm' ? rows : []),
  };
  it('membership clauses ask ctx with the relation of their kind', () => {
    expect(timeline({ in_third_party_segment: { provider: 'p', segment: 's' } }, [event('Click', 0)], ctx)).toEqual([true]);
    expect(timeline({ in_second_party_segment: { provider: 'p', segment: 's' } }, [event('Click', 0)], ctx)).toEqual([false]);
    expect(timeline({ not_in_second_party_segment: { provider: 'p', segment: 's' } }, [event('Click', 0)], ctx)).toEqual([true]);
  });
  it('connections count the rows passing filters within during, compared with frequency', () => {
    const gold = { property: 'tier', condition: { equal_to: 'gold' } };
    expect(timeline({ in_connections_import_segment: { provider: 'crm', filters: gold, frequency: { equal_to: 2 } } }, [event('Click', 0)], ctx)).toEqual([true]);
    expect(timeline({ in_connections_import_segment: { provider: 'crm', during: 'this_session' } }, [event('Click', 0), event('Click', 6 * MIN)], ctx)).toEqual([false, true]);
    expect(timeline({ in_connections_import_segment: { provider: 'crm', during: { last: 1 }, filters: gold } }, [event('Click', 0)], ctx)).toEqual([true]);
    expect(timeline({ not_in_connections_import_segment: { provider: 'other' } }, [event('Click', 0)], ctx)).toEqual([true]);
  });
});

describe('reference combinations', () => {
  it('and of an or-item and a bare clause', () => {
    const q = { and: [{ or: [{ event: 'Click' }, { event: 'Purchase' }] }, { event: 'Pageview' }] };
    expect(timeline(q, [event('Pageview', 0), event('Purchase', 1)])).toEqual([false, true]);
    expect(timeline({ or: [{ event: 'Click' }, { event: 'Purchase' }] }, [event('Pageview', 0), event('Click', 1)])).toEqual([false, true]);
  });
});

describe('reference re-evaluation without an event (E20) and inactive cohorts (E21)', () => {
  const sports = (segments: string[]): SegmentContext => ({
    inImportedSegment: (relation, provider, segment) => segments.includes(`${relation}/${provider}/${segment}`),
    connectionRows: () => [],
  });
  it('a re-evaluation reads its new ctx, ages windows at its now, counts nothing, and its transitions have index -1', () => {
    const cohorts: ReferenceCohort[] = [
      { code: 1, query: { in_third_party_segment: { provider: 'p', segment: 's' } } },
      { code: 2, query: { event: 'Click', during: { the_last: { value: 5, unit: 'minutes' } } } },
      { code: 3, query: { event: 'Click', frequency: { equal_to: 1 } } },
    ];
    const steps = evaluateReferenceSteps(
      cohorts,
      [{ evaluateAt: T0, ctx: sports(['3rd/p/s']) }, event('Click', 0), { evaluateAt: T0 + 5 * MIN, ctx: sports([]) }, event('Pageview', MIN)],
      NO_CTX,
    );
    expect(steps.map((s) => s.memberships)).toEqual([[], [1, 2, 3], [3], [3]]);
    expect(steps[2]?.transitions).toEqual([
      { cohort: 1, kind: 'exited', time: T0 + 5 * MIN, eventIndex: -1 },
      { cohort: 2, kind: 'exited', time: T0 + 5 * MIN, eventIndex: -1 },
    ]);
  });
  it('its entries lie in the current runs, where sees no properties, and the session gap counts from the last event', () => {
    const cohorts: ReferenceCohort[] = [
      { code: 1, query: { in_third_party_segment: { provider: 'p', segment: 's' } } },
      { code: 2, query: { has_entered: { segment: 1, during: 'this_session', where: { property: 'properties.page', condition: 'is_empty' } } } },
      { code: 3, query: { event: 'Click', during: 'this_session', frequency: { greater_than_or_equal_to: 2 } } },
    ];
    const steps = evaluateReferenceSteps(
      cohorts,
      [event('Click', 0, { page: 'home' }), { evaluateAt: T0 + 20 * MIN, ctx: sports(['3rd/p/s']) }, event('Click', 40 * MIN)],
      NO_CTX,
    );
    expect(steps.map((s) => s.memberships)).toEqual([[], [1, 2], [1]]);
  });
  it('an inactive cohort is never a member; clauses naming it see no entries or exits', () => {
    const cohorts: ReferenceCohort[] = [
      { code: 1, query: { event: 'Click' }, inactive: true },
      { code: 2, query: { has_entered: { segment: 1 } } },
      { code: 3, query: { has_not_exited: { segment: 1 } } },
    ];
    expect(evaluateReference(cohorts, [event('Click', 0), event('Click', 1)], NO_CTX).map((s) => s.memberships)).toEqual([[3], [3]]);
  });
});
