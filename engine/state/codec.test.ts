// The state codec: round trips with identical behaviour afterwards, garbage rejected (ENGINE_BAD_STATE), and states
// carried across plan versions (cohorts added and removed) plus the backfill hooks (missingSlots, adoptSlots).

import { describe, expect, it } from 'vitest';
import { pack } from 'msgpackr';
import { EMPTY_CONTEXT } from '../api.js';
import { EngineError } from '../errors.js';
import { compilePlan } from '../plan/compile.js';
import { decodeState, encodeState, STATE_FORMAT } from './codec.js';
import { adoptSlots, missingSlots } from './coverage.js';
import { SampleGenerator } from '../../test/support/sample-cohorts.js';
import { segment } from './segment.js';
import { HOUR, MINUTE, T0, cohort, ev, expr, gte, theLast } from './test-queries.js';
import { membershipsOf, newUserState } from './user-state.js';

function codeOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    return error instanceof EngineError ? error.code : 'not an EngineError';
  }
  return undefined;
}

describe('encode / decode', () => {
  it('a decoded state behaves exactly like the original', () => {
    const gen = new SampleGenerator(11);
    const plan = compilePlan(gen.cohorts(30), 1);
    const events = gen.events(400);
    const ctx = gen.context();
    const original = segment(plan, newUserState(), events.slice(0, 200), ctx).state;
    const bytes = encodeState(original);
    const copy = decodeState(bytes);
    expect(membershipsOf(copy)).toEqual(membershipsOf(original));
    expect(encodeState(copy)).toEqual(bytes);
    const a = segment(plan, original, events.slice(200), ctx);
    const b = segment(plan, copy, events.slice(200), ctx);
    expect(b.transitions).toEqual(a.transitions);
    expect(b.memberships).toEqual(a.memberships);
    expect(encodeState(b.state)).toEqual(encodeState(a.state));
  });

  it('the encoded state does not grow with history (every slot is bounded)', () => {
    const gen = new SampleGenerator(5);
    const plan = compilePlan(gen.cohorts(60), 1);
    const ctx = gen.context();
    const state = newUserState();
    const sizes: number[] = [];
    for (let chunk = 0; chunk < 40; chunk++) {
      segment(plan, state, gen.events(500, chunk === 0 ? T0 : state.time + MINUTE), ctx);
      sizes.push(encodeState(state).length);
    }
    // After 2,000 and after 20,000 events: same order of size (windows hold recent events only).
    expect(sizes[39] as number).toBeLessThan((sizes[3] as number) * 1.5);
  });

  it('a new user encodes small and decodes to a user with no memberships', () => {
    const bytes = encodeState(newUserState());
    expect(bytes.length).toBeLessThan(32);
    expect(membershipsOf(decodeState(bytes))).toEqual([]);
  });

  it('ENGINE_BAD_STATE for garbage, wrong shapes and unknown format versions', () => {
    expect(codeOf(() => decodeState(new Uint8Array([0xc1, 0xff, 0x00])))).toBe('ENGINE_BAD_STATE');
    expect(codeOf(() => decodeState(new Uint8Array(0)))).toBe('ENGINE_BAD_STATE');
    expect(codeOf(() => decodeState(pack({ a: 1 })))).toBe('ENGINE_BAD_STATE');
    const good = decodeState(encodeState(newUserState()));
    expect(good).toBeDefined();
    const fields = [STATE_FORMAT + 1, 0, 0, null, 0, 0, 0, null, 0, 0, [], [], [], []];
    expect(codeOf(() => decodeState(pack(fields)))).toBe('ENGINE_BAD_STATE');
    expect(codeOf(() => decodeState(pack([STATE_FORMAT, -1, 0, null, 0, 0, 0, null, 0, 0, [], [], [], []])))).toBe('ENGINE_BAD_STATE');
    expect(codeOf(() => decodeState(pack([STATE_FORMAT, 0, 0, null, 0, 0, 0, null, 0, 0, [], [], [1], []])))).toBe('ENGINE_BAD_STATE');
  });

  it('damaged slot data is not trusted: the slot starts over and is reported missing', () => {
    const plan = compilePlan([cohort(1, expr('Buy', { frequency: gte(2) }))], 1);
    const state = segment(plan, newUserState(), [ev('Buy', T0), ev('Buy', T0 + 1)], EMPTY_CONTEXT).state;
    const id = plan.slots[0]?.id as number;
    const damaged = decodeState(pack([STATE_FORMAT, 2, T0 + 1, null, 0, T0, 0, null, 0, T0, [1], [], [id], [['x']]]));
    expect(missingSlots(plan, damaged)).toEqual(plan.slotKeys);
    expect(membershipsOf(state)).toEqual([1]);
  });
});

describe('plan versions', () => {
  const buy = (t: number) => ev('Buy', t);
  const v1 = compilePlan([cohort(1, expr('Buy', { during: theLast(HOUR) })), cohort(2, expr('Buy', { frequency: gte(3) }))], 1);
  const v2 = compilePlan([cohort(2, expr('Buy', { frequency: gte(3) })), cohort(3, expr('Buy', { frequency: gte(2), during: theLast(HOUR) }))], 2);
  const history = [buy(T0), buy(T0 + MINUTE), buy(T0 + 2 * MINUTE)];

  it('a state from plan v1 works under v2: shared slots kept, removed cohorts dropped, new slots reported missing', () => {
    const under1 = segment(v1, newUserState(), history.slice(0, 2), EMPTY_CONTEXT);
    expect(under1.memberships).toEqual([1]);
    const state = decodeState(encodeState(under1.state));
    // Cohort 3's ring needs cap 2 where v1 kept cap 1: stale, so missing (its times are still used).
    expect(missingSlots(v2, state)).toEqual(v2.slotKeys.filter((key) => key.includes('the_last')));
    const next = segment(v2, state, history.slice(2), EMPTY_CONTEXT);
    // Cohort 2's all-time count carried over (3 Buys); cohort 1 is gone without a transition.
    expect(next.memberships).toEqual([2, 3]);
    expect(next.transitions.map((t) => [t.cohort, t.kind])).toEqual([
      [2, 'entered'],
      [3, 'entered'],
    ]);
    expect(membershipsOf(decodeState(encodeState(next.state)))).toEqual([2, 3]);
  });

  it('a slot unknown to v1 starts empty; adoptSlots brings it up to date from a replay of history', () => {
    const v3 = compilePlan([cohort(2, expr('Buy', { frequency: gte(3) })), cohort(4, expr('Buy', { frequency: gte(2), during: { kind: 'first', count: 5 } }))], 3);
    const state = decodeState(encodeState(segment(v1, newUserState(), history, EMPTY_CONTEXT).state));
    const missing = missingSlots(v3, state);
    expect(missing).toHaveLength(1);
    const replayed = segment(v3, newUserState(), history, EMPTY_CONTEXT).state;
    adoptSlots(v3, state, replayed, missing, [4]);
    expect(missingSlots(v3, state)).toEqual([]);
    expect(membershipsOf(state)).toEqual([2, 4]);
    const live = segment(v3, state, [buy(T0 + 3 * MINUTE)], EMPTY_CONTEXT);
    const fromScratch = segment(v3, replayed, [buy(T0 + 3 * MINUTE)], EMPTY_CONTEXT);
    expect(live.memberships).toEqual(fromScratch.memberships);
    expect(encodeState(live.state)).toEqual(encodeState(fromScratch.state));
  });

  it('a new user has no missing slots', () => {
    expect(missingSlots(v2, newUserState())).toEqual([]);
  });
});
