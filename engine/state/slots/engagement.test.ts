// Engagement clauses (D32, E6–E9): engaged seconds, completion in the current view, and engaged views.

import { describe, expect, it } from 'vitest';
import type { Clause, During, NumberComparison, Where } from '../../query/ast.js';
import { HOUR, MINUTE, T0, between, cohort, eq, ev, gt, gte, holdsAfter, lt, pred, runEvents, str, theLast } from '../../../test/support/engine-queries.js';
import { EMPTY_CONTEXT } from '../../api.js';
import { compilePlan } from '../../plan/index.js';
import { decodeState, encodeState } from '../codec.js';
import { segment } from '../segment.js';
import { newUserState } from '../user-state.js';

const pv = (t: number, ids = {}) => ev('Pageview', t, {}, ids);
const eng = (t: number, properties: Record<string, unknown>, ids = {}) => ev('PageviewEngagement', t, properties, ids);
const time = (seconds: NumberComparison, during?: During, where?: Where): Clause => ({
  kind: 'engaged_time',
  seconds,
  ...(during && { during }),
  ...(where && { where }),
});
const views = (times: NumberComparison, perView: NumberComparison, options: { during?: During; where?: Where; measure?: 'engaged_time' | 'completion' } = {}): Clause => ({
  kind: 'engaged_views',
  times,
  per_view: { measure: options.measure ?? 'engaged_time', comparison: perView },
  ...(options.during && { during: options.during }),
  ...(options.where && { where: options.where }),
});

function newStateAfter(plan: ReturnType<typeof compilePlan>, events: Parameters<typeof segment>[2]): ReturnType<typeof newUserState> {
  const state = newUserState();
  segment(plan, state, events, EMPTY_CONTEXT);
  return state;
}

describe('engaged_time (E6, E7)', () => {
  it('sums engaged seconds; non-numbers and negatives count 0 (E6)', () => {
    const c = cohort(1, time(gte(10)));
    const run = runEvents([c], [eng(T0, { engaged_time: 4 }), eng(T0 + 1, { engaged_time: -5 }), eng(T0 + 2, { engaged_time: '9' }), eng(T0 + 3, { engaged_time: 6 })]);
    expect(holdsAfter(run, 1)).toEqual([false, false, false, true]);
  });

  it('the_last keeps an exact sliding sum, also with fractional seconds', () => {
    const c = cohort(1, time(eq(0.3), theLast(HOUR)));
    const run = runEvents([c], [eng(T0, { engaged_time: 5 }), eng(T0 + MINUTE, { engaged_time: 0.1 }), eng(T0 + 2 * MINUTE, { engaged_time: 0.2 }), ev('X', T0 + HOUR)]);
    // 5, 5.1, 5.3 (approx), then 5 leaves: 0 + 0.1 + 0.2 = 0.30000000000000004, not 0.3
    expect(holdsAfter(run, 1)).toEqual([false, false, false, false]);
    const exact = cohort(2, time(eq(0.1 + 0.2), theLast(HOUR)));
    const run2 = runEvents([exact], [eng(T0, { engaged_time: 5 }), eng(T0 + MINUTE, { engaged_time: 0.1 }), eng(T0 + 2 * MINUTE, { engaged_time: 0.2 }), ev('X', T0 + HOUR)]);
    expect(holdsAfter(run2, 2)).toEqual([false, false, false, true]);
  });

  it('last N and the_last start every user on one frozen empty array and give a user its own at its first value', () => {
    const plan = compilePlan([cohort(1, time(gte(4), { kind: 'last', count: 2 })), cohort(2, time(gte(4), theLast(HOUR)))], 1);
    const a = newUserState();
    const b = newUserState();
    segment(plan, a, [ev('X', T0)], EMPTY_CONTEXT);
    segment(plan, b, [ev('X', T0)], EMPTY_CONTEXT);
    const rings = (state: typeof a): unknown[] => state.objs.filter((obj) => Array.isArray(obj));
    expect(rings(a)).toHaveLength(3);
    expect(rings(a).every((ring) => Object.isFrozen(ring) && ring === rings(b)[0])).toBe(true);
    const result = segment(plan, a, [eng(T0 + 1, { engaged_time: 5 })], EMPTY_CONTEXT);
    expect(result.memberships).toEqual([1, 2]);
    expect(rings(a)).toEqual([[5], [5], [T0 + 1]]);
    expect(rings(a).some((ring) => Object.isFrozen(ring))).toBe(false);
    // The other user's arrays are still the shared empty one, and its answers its own.
    expect(rings(b).every((ring) => Object.isFrozen(ring) && (ring as unknown[]).length === 0)).toBe(true);
    expect(segment(plan, b, [eng(T0 + 2, { engaged_time: 3 })], EMPTY_CONTEXT).memberships).toEqual([]);
    // An encoded state with untouched arrays decodes and goes on as one never encoded.
    const c = decodeState(encodeState(newStateAfter(plan, [ev('X', T0)])));
    expect(segment(plan, c, [eng(T0 + 3, { engaged_time: 4 })], EMPTY_CONTEXT).memberships).toEqual([1, 2]);
  });

  it('where filters engagement events; current_view resets with the view (E3)', () => {
    const c = cohort(1, time(gte(5), { kind: 'current_view' }, pred('properties.section', str('equal_to', 'news'))));
    const run = runEvents([c], [pv(T0), eng(T0 + 1, { engaged_time: 3, section: 'news' }), eng(T0 + 2, { engaged_time: 3, section: 'sport' }), eng(T0 + 3, { engaged_time: 2, section: 'news' }), pv(T0 + 4)]);
    expect(holdsAfter(run, 1)).toEqual([false, false, false, true, false]);
  });

  it('first N and last N are among engagement events (matching or not)', () => {
    const news = pred('properties.section', str('equal_to', 'news'));
    const first = cohort(1, time(gte(4), { kind: 'first', count: 2 }, news));
    const last = cohort(2, time(gte(4), { kind: 'last', count: 2 }, news));
    const run = runEvents([first, last], [eng(T0, { engaged_time: 3, section: 'news' }), eng(T0 + 1, { engaged_time: 3 }), eng(T0 + 2, { engaged_time: 3, section: 'news' }), eng(T0 + 3, { engaged_time: 1, section: 'news' })]);
    expect(holdsAfter(run, 1)).toEqual([false, false, false, false]);
    expect(holdsAfter(run, 2)).toEqual([false, false, false, true]);
  });
});

describe('engaged_completion (E8)', () => {
  it('is the largest completion in the current view run, 0 when none', () => {
    const c = cohort(1, { kind: 'engaged_completion', completion: gte(0.5) });
    const zero = cohort(2, { kind: 'engaged_completion', completion: eq(0) });
    const run = runEvents([c, zero], [pv(T0), eng(T0 + 1, { completion: 0.7 }), eng(T0 + 2, { completion: 0.2 }), eng(T0 + 3, { completion: 'x' }), pv(T0 + 4)]);
    expect(holdsAfter(run, 1)).toEqual([false, true, true, true, false]);
    expect(holdsAfter(run, 2)).toEqual([true, false, false, false, true]);
  });
});

describe('engaged_views (E9)', () => {
  it('counts views whose summed seconds meet the per-view threshold', () => {
    const c = cohort(1, views(gte(2), gte(10)));
    const run = runEvents([c], [pv(T0), eng(T0 + 1, { engaged_time: 6 }), eng(T0 + 2, { engaged_time: 6 }), pv(T0 + 3), eng(T0 + 4, { engaged_time: 9 }), eng(T0 + 5, { engaged_time: 1 }), pv(T0 + 6)]);
    expect(holdsAfter(run, 1)).toEqual([false, false, false, false, false, true, true]);
  });

  it('a view stops qualifying when its total passes an upper bound', () => {
    const c = cohort(1, views(eq(1), lt(10)));
    const run = runEvents([c], [pv(T0), eng(T0 + 1, { engaged_time: 6 }), eng(T0 + 2, { engaged_time: 6 })]);
    expect(holdsAfter(run, 1)).toEqual([false, true, false]);
  });

  it('completion measure: largest completion per view', () => {
    const c = cohort(1, views(gte(2), gt(0.5), { measure: 'completion' }));
    const run = runEvents([c], [pv(T0), eng(T0 + 1, { completion: 0.9 }), eng(T0 + 2, { completion: 0.1 }), pv(T0 + 3), eng(T0 + 4, { completion: 0.6 })]);
    expect(holdsAfter(run, 1)).toEqual([false, false, false, false, true]);
  });

  it('completion measure: the largest completion carried, as given even below 0; 0 when none is carried (E9, as E8)', () => {
    const negative = cohort(1, views(eq(1), lt(0), { measure: 'completion' }));
    const zero = cohort(2, views(eq(1), eq(0), { measure: 'completion' }));
    const run = runEvents([negative, zero], [pv(T0), eng(T0 + 1, { completion: -0.5 }), eng(T0 + 2, {}), pv(T0 + 3), eng(T0 + 4, {})]);
    expect(holdsAfter(run, 1)).toEqual([false, true, true, true, true]);
    expect(holdsAfter(run, 2)).toEqual([false, false, false, false, true]);
  });

  it('the_last uses the time of the latest matching engagement event of each view', () => {
    const c = cohort(1, views(gte(2), gte(1), { during: theLast(HOUR) }));
    const run = runEvents([c], [pv(T0), eng(T0 + 1, { engaged_time: 1 }), pv(T0 + 10 * MINUTE), eng(T0 + 20 * MINUTE, { engaged_time: 1 }), ev('X', T0 + HOUR), ev('X', T0 + HOUR + 1)]);
    expect(holdsAfter(run, 1)).toEqual([false, false, false, true, true, false]);
  });

  it('this_session counts views whose matching engagement lies in the current session run', () => {
    const c = cohort(1, views(gte(1), gte(1), { during: { kind: 'this_session' } }));
    const run = runEvents([c], [pv(T0), eng(T0 + 1, { engaged_time: 1 }), ev('X', T0 + HOUR), eng(T0 + HOUR + 1, { engaged_time: 1 }), pv(T0 + HOUR + 2)]);
    // The first view's engagement starts before the new session: it no longer counts, though its run continues.
    expect(holdsAfter(run, 1)).toEqual([false, true, false, false, false]);
    const run2 = runEvents([c], [pv(T0), eng(T0 + 1, { engaged_time: 1 }), ev('X', T0 + HOUR), pv(T0 + HOUR + 1), eng(T0 + HOUR + 2, { engaged_time: 1 }), pv(T0 + HOUR + 3)]);
    expect(holdsAfter(run2, 1)).toEqual([false, true, false, false, true, true]);
  });

  it('current_view counts only the current view; first N / last N among views with a matching event', () => {
    const cur = cohort(1, views(eq(1), gte(5), { during: { kind: 'current_view' } }));
    const first = cohort(2, views(eq(1), gte(5), { during: { kind: 'first', count: 2 } }));
    const last = cohort(3, views(eq(0), gte(5), { during: { kind: 'last', count: 2 } }));
    const events = [
      pv(T0), eng(T0 + 1, { engaged_time: 1 }), // view 1: 1 s
      pv(T0 + 2), // no engagement: not a view with a matching event
      pv(T0 + 3), eng(T0 + 4, { engaged_time: 5 }), // view 2: qualifies
      pv(T0 + 5), eng(T0 + 6, { engaged_time: 1 }), // view 3: 1 s
      pv(T0 + 7), eng(T0 + 8, { engaged_time: 1 }), // view 4: 1 s
    ];
    const run = runEvents([cur, first, last], events);
    expect(holdsAfter(run, 1)).toEqual([false, false, false, false, true, false, false, false, false]);
    expect(holdsAfter(run, 2)).toEqual([false, false, false, false, true, true, true, true, true]);
    expect(holdsAfter(run, 3)).toEqual([true, true, true, true, false, false, false, false, true]);
  });

  it('in_interval on the view time; between per view', () => {
    const c = cohort(1, views(eq(1), between(2, 3), { during: { kind: 'in_interval', start: T0, end: T0 + 10 } }));
    const run = runEvents([c], [pv(T0), eng(T0 + 5, { engaged_time: 2 }), eng(T0 + 11, { engaged_time: 0 })]);
    expect(holdsAfter(run, 1)).toEqual([false, true, false]);
  });
});
