// The stateless route's recently sealed states (recent-states.ts): found only by organization, user and the whole
// sealed string, only under the plan they are bound to, handed out as copies, bounded in bytes.

import { describe, expect, it } from 'vitest';
import { compilePlan, decodeState, encodeState, newUserState, segment, type UserState } from '../../../engine/index.js';
import { SampleGenerator } from '../../../test/support/sample-cohorts.js';
import { RecentStates } from './recent-states.js';
import { INTERNAL_STATE_VERSION } from './state.js';

const PLAN = compilePlan(new SampleGenerator(11).cohorts(20), 1);
const T0 = Date.UTC(2026, 0, 1);

function stateAfter(seed: number, events: number): UserState {
  const state = newUserState();
  const gen = new SampleGenerator(seed);
  segment(PLAN, state, gen.events(events, T0), gen.context());
  return state;
}

const sealed = (c: string) => ({ v: INTERNAL_STATE_VERSION, c });

describe('RecentStates', () => {
  it('hands out a copy of the state sealed as that string for that organization and user, as often as asked', () => {
    const recent = new RecentStates(10 * 1024 ** 2);
    const state = stateAfter(1, 30);
    state.context = { inImportedSegment: () => true, connectionRows: () => [], constant: true };
    const bytes = [...encodeState(state)];
    recent.remember('org', 'user', sealed('AAAA'), state, new Map([[3, T0]]));
    const first = recent.take('org', 'user', sealed('AAAA'), PLAN);
    expect(first).toBeDefined();
    expect(first?.state).not.toBe(state);
    expect([...encodeState(first!.state)]).toEqual(bytes);
    expect(first?.entries).toEqual(new Map([[3, T0]]));
    // The imported data it was decided with is not kept alive (nor counted): the copy asks the context again.
    expect(first?.state.context).toBeUndefined();
    // Stepping the copy (and changing its entries) leaves what is kept as it was: the same string gives it again.
    const gen = new SampleGenerator(2);
    segment(PLAN, first!.state, gen.events(10, T0 + 86_400_000), gen.context());
    first!.entries.clear();
    const second = recent.take('org', 'user', sealed('AAAA'), PLAN);
    expect([...encodeState(second!.state)]).toEqual(bytes);
    expect(second?.entries).toEqual(new Map([[3, T0]]));
    expect(recent.stats()).toMatchObject({ hits: 2, misses: 0, entries: 1 });
  });

  it('keeps a bound copy of a state opened from its bytes: the same state sent again starts from it', () => {
    const recent = new RecentStates(10 * 1024 ** 2);
    const bytes = encodeState(stateAfter(4, 25));
    const opened = { state: decodeState(bytes), entries: new Map([[5, T0]]) };
    recent.keepOpened('org', 'user', sealed('OPENED'), opened, PLAN);
    expect(opened.state.plan).toBe(PLAN); // bound, as its first step would have
    const gen = new SampleGenerator(5);
    const later = gen.events(8, T0 + 86_400_000);
    const ctx = gen.context();
    const outcome = (state: UserState) => later.map((event) => segment(PLAN, state, [event], ctx).memberships);
    const fromOpened = outcome(opened.state); // the caller steps its own state ...
    const kept = recent.take('org', 'user', sealed('OPENED'), PLAN);
    expect(kept?.entries).toEqual(new Map([[5, T0]]));
    expect([...encodeState(kept!.state)]).toEqual([...bytes]); // ... and the copy is as it was opened
    expect(outcome(kept!.state)).toEqual(fromOpened);
    expect(outcome(decodeState(bytes))).toEqual(fromOpened);
    // Only states of the version this process writes are kept.
    recent.keepOpened('org', 'user', { v: 1, s: 'AAAA' }, { state: decodeState(bytes), entries: new Map() }, PLAN);
    expect(recent.stats().entries).toBe(1);
  });

  it('finds nothing for another organization, user, string, version or plan, or a state bound to no plan', () => {
    const recent = new RecentStates(10 * 1024 ** 2);
    recent.remember('org', 'user', sealed('AAAA'), stateAfter(1, 5), new Map());
    expect(recent.take('other', 'user', sealed('AAAA'), PLAN)).toBeUndefined();
    expect(recent.take('org', 'someone', sealed('AAAA'), PLAN)).toBeUndefined();
    expect(recent.take('org', 'user', sealed('AAAB'), PLAN)).toBeUndefined();
    expect(recent.take('org', 'user', { v: 1, c: 'AAAA' }, PLAN)).toBeUndefined();
    expect(recent.take('org', 'user', 'AAAA', PLAN)).toBeUndefined();
    expect(recent.take('org', 'user', null, PLAN)).toBeUndefined();
    // A new plan (a cohort created or changed): the state is opened from its bytes and bound anew.
    expect(recent.take('org', 'user', sealed('AAAA'), compilePlan(new SampleGenerator(11).cohorts(21), 2))).toBeUndefined();
    recent.remember('org', 'user', sealed('BBBB'), newUserState(), new Map());
    expect(recent.take('org', 'user', sealed('BBBB'), PLAN)).toBeUndefined();
    expect(recent.stats()).toMatchObject({ hits: 0, misses: 8, entries: 1 });
    expect(recent.take('org', 'user', sealed('AAAA'), PLAN)).toBeDefined();
  });

  it('keeps the most recently used within its bytes, and nothing with 0 bytes', () => {
    const one = stateAfter(3, 20);
    const recent = new RecentStates(1);
    recent.remember('org', 'a', sealed('A'), one, new Map());
    const size = recent.stats().bytes;
    expect(size).toBeGreaterThan(one.nums.byteLength);
    const bounded = new RecentStates(3 * size + size / 2);
    for (const user of ['a', 'b', 'c']) bounded.remember('org', user, sealed(user), stateAfter(3, 20), new Map());
    expect(bounded.take('org', 'a', sealed('a'), PLAN)).toBeDefined(); // now the most recently used
    bounded.remember('org', 'd', sealed('d'), stateAfter(3, 20), new Map());
    expect(bounded.stats().entries).toBe(3);
    expect(bounded.take('org', 'b', sealed('b'), PLAN)).toBeUndefined(); // the least recently used went first
    for (const user of ['a', 'c', 'd']) expect(bounded.take('org', user, sealed(user), PLAN), user).toBeDefined();

    const none = new RecentStates(0);
    none.remember('org', 'a', sealed('A'), stateAfter(3, 20), new Map());
    expect(none.take('org', 'a', sealed('A'), PLAN)).toBeUndefined();
    expect(none.stats()).toEqual({ hits: 0, misses: 0, bytes: 0, entries: 0 });
  });
});
