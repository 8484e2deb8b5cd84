// Expression clause slots through the segment step: every `during` form (E4, D33) and re-evaluation at every event (E5).

import { describe, expect, it } from 'vitest';
import { compilePlan } from '../../plan/compile.js';
import { DAY, HOUR, MINUTE, T0, between, cohort, eq, ev, expr, gte, holdsAfter, lt, pred, runEvents, str, theLast } from '../../../test/support/engine-queries.js';
import { createRandom } from '../../../test/support/sample-cohorts.js';
import { bindState, newUserState } from '../user-state.js';
import type { SlotDef } from './types.js';

const buy = (t: number, props: Record<string, unknown> = {}, ids = {}) => ev('Buy', t, props, ids);
const other = (t: number, ids = {}) => ev('Other', t, {}, ids);

describe('expression clause (E4)', () => {
  it('counts all history with where and frequency', () => {
    const c = cohort(1, expr('Buy', { frequency: gte(2), where: pred('properties.sku', str('equal_to', 'a')) }));
    const run = runEvents([c], [buy(T0, { sku: 'a' }), buy(T0 + 1, { sku: 'b' }), buy(T0 + 2, { sku: 'a' }), other(T0 + 3)]);
    expect(holdsAfter(run, 1)).toEqual([false, false, true, true]);
  });

  it('D33: frequency equal_to 0 holds for a user with events but none matching; no events = no cohort (E5)', () => {
    const run = runEvents([cohort(1, expr('Buy', { frequency: eq(0) }))], [other(T0), buy(T0 + 1)]);
    expect(holdsAfter(run, 1)).toEqual([true, false]);
    expect(run.transitions.map((t) => [t.kind, t.eventIndex])).toEqual([['entered', 0], ['exited', 1]]);
  });

  it('the_last is (now - length, now]: exact at the millisecond boundary, a user leaves at an unrelated event (E5)', () => {
    const c = cohort(1, expr('Buy', { during: theLast(HOUR) }));
    const run = runEvents([c], [buy(T0), other(T0 + HOUR - 1), other(T0 + HOUR), buy(T0 + 2 * HOUR)]);
    expect(holdsAfter(run, 1)).toEqual([true, true, false, true]);
  });

  it('the_last counts with a capped ring: >= 3 within 10 minutes, and < 2 (caps 3 and 2 share one slot)', () => {
    const many = cohort(1, expr('Buy', { frequency: gte(3), during: theLast(10 * MINUTE) }));
    const few = cohort(2, expr('Buy', { frequency: lt(2), during: theLast(10 * MINUTE) }));
    const times = [0, 1, 2, 3, 4, 11, 12, 13, 14].map((m) => T0 + m * MINUTE);
    const run = runEvents([many, few], times.map((t) => buy(t)));
    expect(run.plan.slotKeys).toHaveLength(1);
    // window counts: 1,2,3,4,5,  (11: 2..4 out? window (1,11] holds 2,3,4,11 = 4), 12: (2,12] = 3,4,11,12 = 4, 13: 4,11,12,13, 14: 11..14
    expect(holdsAfter(run, 1)).toEqual([false, false, true, true, true, true, true, true, true]);
    expect(holdsAfter(run, 2)).toEqual([true, false, false, false, false, false, false, false, false]);
  });

  it('the_last keeps a cap past 8 in an array, and drops at once every time that left the window', () => {
    // between 1 and 10 within 10 minutes: cap 11, past the 8 times kept inline.
    const c = cohort(1, expr('Buy', { frequency: between(1, 10), during: theLast(10 * MINUTE) }));
    const buys = Array.from({ length: 10 }, (_, i) => buy(T0 + i * 1000));
    // 10 minutes after the last Buy every one of the 10 has left: 0, not a member; one Buy later: 1 again.
    const run = runEvents([c], [...buys, other(T0 + 9000 + 10 * MINUTE), buy(T0 + 9001 + 10 * MINUTE)]);
    expect(run.plan.slots[0]?.numWidth).toBe(0);
    expect(holdsAfter(run, 1)).toEqual([...Array(10).fill(true), false, true]);
  });

  it('the_last window count drops below the threshold as time passes', () => {
    const c = cohort(1, expr('Buy', { frequency: eq(2), during: theLast(DAY) }));
    const run = runEvents([c], [buy(T0), buy(T0 + HOUR), buy(T0 + 2 * HOUR), other(T0 + DAY + 30 * MINUTE), other(T0 + DAY + HOUR)]);
    // counts: 1, 2, 3, 2 (T0 left), 1 (T0+HOUR left at exactly +DAY)
    expect(holdsAfter(run, 1)).toEqual([false, true, false, true, false]);
  });

  it('in_interval is inclusive, before and after strict (on effective time)', () => {
    const start = T0 + 10;
    const end = T0 + 20;
    const cs = [
      cohort(1, expr('Buy', { during: { kind: 'in_interval', start, end } })),
      cohort(2, expr('Buy', { during: { kind: 'before', time: start } })),
      cohort(3, expr('Buy', { during: { kind: 'after', time: end } })),
    ];
    expect(holdsAfter(runEvents(cs, [buy(start)]), 1)).toEqual([true]);
    expect(holdsAfter(runEvents(cs, [buy(end)]), 1)).toEqual([true]);
    expect(holdsAfter(runEvents(cs, [buy(end + 1)]), 1)).toEqual([false]);
    expect(holdsAfter(runEvents(cs, [buy(start)]), 2)).toEqual([false]);
    expect(holdsAfter(runEvents(cs, [buy(start - 1)]), 2)).toEqual([true]);
    expect(holdsAfter(runEvents(cs, [buy(end)]), 3)).toEqual([false]);
    expect(holdsAfter(runEvents(cs, [buy(end + 1)]), 3)).toEqual([true]);
    // E1: a late event counts at its effective time.
    expect(holdsAfter(runEvents(cs, [other(end + 5), buy(start)]), 1)).toEqual([false, false]);
  });

  it('this_session counts within the current session run (E2)', () => {
    const c = cohort(1, expr('Buy', { frequency: gte(2), during: { kind: 'this_session' } }));
    const run = runEvents([c], [buy(T0), buy(T0 + MINUTE), other(T0 + 40 * MINUTE), buy(T0 + 41 * MINUTE), buy(T0 + 42 * MINUTE, {}, { session_id: 's' })]);
    expect(holdsAfter(run, 1)).toEqual([false, true, false, false, false]);
  });

  it('current_view counts within the current view run (E3)', () => {
    const c = cohort(1, expr('Click', { frequency: gte(2), during: { kind: 'current_view' } }));
    const click = (t: number) => ev('Click', t);
    const run = runEvents([c], [ev('Pageview', T0), click(T0 + 1), click(T0 + 2), ev('Pageview', T0 + 3), click(T0 + 4)]);
    expect(holdsAfter(run, 1)).toEqual([false, false, true, false, false]);
  });

  it('first N: among the first N events of the name, those matching where', () => {
    const c = cohort(1, expr('Buy', { frequency: gte(1), during: { kind: 'first', count: 2 }, where: pred('properties.x', str('equal_to', 'y')) }));
    expect(holdsAfter(runEvents([c], [buy(T0), buy(T0 + 1), buy(T0 + 2, { x: 'y' })]), 1)).toEqual([false, false, false]);
    expect(holdsAfter(runEvents([c], [buy(T0), buy(T0 + 1, { x: 'y' }), buy(T0 + 2)]), 1)).toEqual([false, true, true]);
  });

  it('last N: among the most recent N events of the name, those matching where', () => {
    const c = cohort(1, expr('Buy', { frequency: gte(2), during: { kind: 'last', count: 3 }, where: pred('properties.x', str('equal_to', 'y')) }));
    const y = (t: number) => buy(t, { x: 'y' });
    const run = runEvents([c], [y(T0), other(T0 + 1), y(T0 + 2), buy(T0 + 3), buy(T0 + 4), y(T0 + 5), y(T0 + 6)]);
    // last-3 windows of Buy: [y], [y,y], [y,y,n], [y,n,n], [n,n,y], [n,y,y]
    expect(holdsAfter(run, 1)).toEqual([false, false, true, true, false, false, true]);
  });

  it('last N keeps exact bits, inline (N <= 32) and packed (N > 32)', () => {
    for (const n of [10, 32, 40]) {
      const c = cohort(1, expr('Buy', { frequency: eq(1), during: { kind: 'last', count: n }, where: pred('properties.x', str('equal_to', 'y')) }));
      const events = [buy(T0, { x: 'y' }), ...Array.from({ length: n + 1 }, (_, i) => buy(T0 + 1 + i))];
      const run = runEvents([c], events);
      expect(holdsAfter(run, 1)).toEqual([...Array(n).fill(true), false, false]);
    }
  });

  it('last N packs its bits in bytes that grow with the events, not with N', () => {
    // A billion: the ring must not take N / 8 bytes (119 MiB) for a user with three events, nor throw for N past 2^33.
    for (const n of [1e9, 1e11]) {
      const c = cohort(1, expr('Buy', { frequency: gte(2), during: { kind: 'last', count: n }, where: pred('properties.x', str('equal_to', 'y')) }));
      const run = runEvents([c], [buy(T0, { x: 'y' }), buy(T0 + 1), buy(T0 + 2, { x: 'y' })]);
      expect(holdsAfter(run, 1)).toEqual([false, false, true]);
      const bytes = run.state.objs.find((o) => o instanceof Uint8Array) as Uint8Array;
      expect(bytes.length).toBeLessThanOrEqual(8);
    }
    // Past 8 bytes it doubles, up to N / 8 once the ring is full; the answers stay exact across the growth.
    const n = 300;
    const c = cohort(1, expr('Buy', { frequency: eq(1), during: { kind: 'last', count: n }, where: pred('properties.x', str('equal_to', 'y')) }));
    const events = [buy(T0, { x: 'y' }), ...Array.from({ length: n + 1 }, (_, i) => buy(T0 + 1 + i))];
    const run = runEvents([c], events);
    expect(holdsAfter(run, 1)).toEqual([...Array(n).fill(true), false, false]);
    expect((run.state.objs.find((o) => o instanceof Uint8Array) as Uint8Array).length).toBe(Math.ceil(n / 8));
  });

  it('last N over random streams equals counting the matches among the newest N (packed rings, grown and full)', () => {
    const random = createRandom(7);
    for (const n of [33, 40, 130, 300]) {
      // About half the Buys match, and k is about half of N, so the membership flips often once the ring is full.
      const k = Math.round(n / 2);
      const c = cohort(1, expr('Buy', { frequency: gte(k), during: { kind: 'last', count: n }, where: pred('properties.x', str('equal_to', 'y')) }));
      const events = Array.from({ length: 2 * n + 50 }, (_, i) => (random() < 0.8 ? buy(T0 + i, { x: random() < 0.5 ? 'y' : 'n' }) : other(T0 + i)));
      const expected: boolean[] = [];
      const matches: boolean[] = [];
      for (const e of events) {
        if (e.name === 'Buy') matches.push((e.properties as { x?: string }).x === 'y');
        expected.push(matches.slice(-n).filter(Boolean).length >= k);
      }
      expect(holdsAfter(runEvents([c], events), 1)).toEqual(expected);
    }
  });

  it('adopts a stored last N ring only when its bytes hold the bits pushed and no more than N', () => {
    const n = 100;
    const plan = compilePlan([cohort(1, expr('Buy', { during: { kind: 'last', count: n } }))], 1);
    const slot = plan.slots[0] as SlotDef;
    const state = newUserState();
    bindState(state, plan);
    // [filled, head, ones, bytes]: 20 bits pushed fit in 3 bytes; a full ring needs all 13.
    expect(slot.adopt([20, 0, 5, new Uint8Array(3)], state)).toBe('current');
    expect(slot.adopt([20, 0, 5, new Uint8Array(2)], state)).toBe('invalid');
    expect(slot.adopt([20, 4, 5, new Uint8Array(13)], state)).toBe('invalid');
    expect(slot.adopt([n, 4, 5, new Uint8Array(13)], state)).toBe('current');
    expect(slot.adopt([n, 4, 5, new Uint8Array(12)], state)).toBe('invalid');
    expect(slot.adopt([20, 0, 5, new Uint8Array(14)], state)).toBe('invalid');
  });
});
