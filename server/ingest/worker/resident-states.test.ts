// An owner's resident states in two tiers (resident-states.ts): the least recently used leave the decoded tier
// packed and come back unpacked, and a user's answers are the same as if its state had stayed decoded throughout.

import { describe, expect, it } from 'vitest';
import { compilePlan, encodeState, evaluateAt, newUserState, nextDeadline, segment, type EngineEvent, type SegmentContext, type UserState } from '../../../engine/index.js';
import { SampleGenerator } from '../../../test/support/sample-cohorts.js';
import { DECODED_STATES, ResidentStates } from './resident-states.js';

const PLAN = compilePlan(new SampleGenerator(7).cohorts(40), 1);
const T0 = Date.UTC(2026, 0, 1);

function stateWith(events: number, seed: number): UserState {
  const state = newUserState();
  segment(PLAN, state, new SampleGenerator(seed).events(events, T0), new SampleGenerator(seed).context());
  return state;
}

describe('resident states in two tiers', () => {
  it('keeps the most recently used decoded and the others packed, each snapshotted as it is', () => {
    const residents = new ResidentStates(2);
    const a = stateWith(5, 1);
    const snapshotOfA = encodeState(a);
    residents.set('a', a);
    residents.set('b', stateWith(5, 2));
    expect(residents.decodedSize).toBe(2);
    residents.set('c', stateWith(5, 3));
    // `a`, the least recently used, is now held packed (its numbers and flags in one small buffer).
    expect({ size: residents.size, decoded: residents.decodedSize, held: residents.has('a') }).toEqual({ size: 3, decoded: 2, held: true });
    expect({ packed: a.packed !== undefined, nums: a.nums.length, flags: a.flags.length }).toEqual({ packed: true, nums: 0, flags: 0 });
    // Its snapshot, and it stays packed.
    expect(residents.encode('a')).toEqual(snapshotOfA);
    expect(a.packed).toBeDefined();
    expect(residents.decodedSize).toBe(2);
    // Asked for, it comes back unpacked, still bound (and `b` leaves the decoded tier).
    const revived = residents.get('a') as UserState;
    expect(revived).toBe(a);
    expect({ packed: revived.packed, bound: revived.plan === PLAN, nums: revived.nums.length }).toEqual({ packed: undefined, bound: true, nums: PLAN.numCount });
    expect(encodeState(revived)).toEqual(snapshotOfA);
    expect(residents.decodedSize).toBe(2);
    expect(residents.encode('b')).toBeInstanceOf(Uint8Array);
  });

  it('by default keeps every state decoded', () => {
    expect(DECODED_STATES).toBe(Number.POSITIVE_INFINITY);
    const residents = new ResidentStates();
    const states = Array.from({ length: 20 }, (_, u) => stateWith(2, u + 1));
    states.forEach((state, u) => residents.set(`u${u}`, state));
    expect({ size: residents.size, decoded: residents.decodedSize, packed: states.filter((state) => state.packed !== undefined).length }).toEqual({ size: 20, decoded: 20, packed: 0 });
  });

  it('a get refreshes recency; set replaces a state held packed; delete and clear forget either tier', () => {
    const residents = new ResidentStates(2);
    residents.set('a', stateWith(3, 1));
    residents.set('b', stateWith(3, 2));
    expect(residents.get('a')).toBeDefined(); // `b` is now the least recently used
    residents.set('c', stateWith(3, 3));
    expect(residents.decodedSize).toBe(2);
    const replacement = stateWith(4, 9);
    residents.set('b', replacement); // `b` was held packed
    expect(residents.get('b')).toBe(replacement);
    expect(residents.size).toBe(3);
    residents.delete('a');
    residents.delete('b');
    expect({ a: residents.has('a'), b: residents.has('b'), c: residents.has('c'), size: residents.size }).toEqual({ a: false, b: false, c: true, size: 1 });
    expect(residents.get('missing')).toBeUndefined();
    expect(residents.encode('missing')).toBeUndefined();
    residents.clear();
    expect(residents.size).toBe(0);
    expect(() => new ResidentStates(0)).toThrow(/positive integer/);
  });

  it('answers as states kept decoded throughout: transitions, memberships, deadlines and snapshots, with clock advances (D36)', () => {
    const users = 12;
    const gen = new SampleGenerator(11);
    const contexts = Array.from({ length: users }, () => gen.context());
    const streams = Array.from({ length: users }, (_, u) => new SampleGenerator(100 + u).events(30, T0 + u * 997));
    const decoded = new Map<string, UserState>();
    const tiered = new ResidentStates(3);
    const random = new SampleGenerator(5).random;
    const next = new Array<number>(users).fill(0);
    let steps = 0;
    let transitions = 0;
    let revived = 0;
    const held = new Map<string, UserState>();
    while (next.some((i) => i < 30) && steps < 10_000) {
      steps++;
      const u = Math.floor(random() * users);
      const i = next[u] as number;
      if (i >= 30) continue;
      const key = `u${u}`;
      const ctx = contexts[u] as SegmentContext;
      const a = decoded.get(key) ?? newUserState();
      if (held.get(key)?.packed !== undefined) revived++;
      const b = tiered.get(key) ?? newUserState();
      // One step in five is a re-evaluation an hour after the user's latest time (a deadline, D36); else an event.
      const advance = i > 0 && random() < 0.2;
      const ra = advance ? evaluateAt(PLAN, a, a.time + 3_600_000, ctx) : segment(PLAN, a, [(streams[u] as EngineEvent[])[i] as EngineEvent], ctx);
      const rb = advance ? evaluateAt(PLAN, b, b.time + 3_600_000, ctx) : segment(PLAN, b, [(streams[u] as EngineEvent[])[i] as EngineEvent], ctx);
      if (!advance) next[u] = i + 1;
      expect(rb.transitions).toEqual(ra.transitions);
      expect(rb.memberships).toEqual(ra.memberships);
      // A state back from the packed tier is the state it was, bit for bit: the same deadline, the same snapshot.
      expect(nextDeadline(PLAN, b)).toBe(nextDeadline(PLAN, a));
      expect(encodeState(b)).toEqual(encodeState(a));
      transitions += ra.transitions.length;
      decoded.set(key, a);
      tiered.set(key, b);
      held.set(key, b);
    }
    expect(next.every((i) => i === 30)).toBe(true);
    // The comparison saw cohorts move, and most steps found their user packed.
    expect(transitions).toBeGreaterThan(20);
    expect(revived).toBeGreaterThan(150); // of ~450 steps: 12 users through 3 decoded places
    expect(tiered.decodedSize).toBe(3);
    for (const [key, state] of decoded) expect(tiered.encode(key)).toEqual(encodeState(state));
  });
});
