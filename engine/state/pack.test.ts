// Packed states (user-state.ts `packState`): an owner's resident tier holds a bound state as the numbers that differ
// from an empty state's and its flags; unpacking gives back the same state bit for bit, still bound, and every engine
// entry unpacks a packed state first.

import { describe, expect, it } from 'vitest';
import { compilePlan } from '../plan/index.js';
import { SampleGenerator } from '../../test/support/sample-cohorts.js';
import { encodeState } from './codec.js';
import { evaluateAt, nextDeadline, segment } from './segment.js';
import { membershipsOf, newUserState, packState, unpackState, type UserState } from './user-state.js';

const PLAN = compilePlan(new SampleGenerator(3).cohorts(30), 1);
const T0 = Date.UTC(2026, 0, 1);

function bytesOf(state: UserState): number[] {
  return [...new Uint8Array(state.nums.buffer, state.nums.byteOffset, state.nums.byteLength), ...state.flags];
}

function stateWith(seed: number, events: number): UserState {
  const state = newUserState();
  segment(PLAN, state, new SampleGenerator(seed).events(events, T0), new SampleGenerator(seed).context());
  return state;
}

describe('packed states', () => {
  it('unpack to the same numbers and flags, bit for bit (NaN payloads and -0 included), still bound', () => {
    const forms = new Set<string>();
    for (const [seed, events] of [[1, 20], [2, 20], [3, 2], [4, 200]] as const) {
      const state = stateWith(seed, events);
      // Values an exact copy must keep as they are (a value-wise copy would lose the payload or the sign).
      const raw = new DataView(state.nums.buffer, state.nums.byteOffset);
      raw.setUint32(0, 0x7ff8dead);
      raw.setUint32(4, 0xbeef);
      state.nums[1] = -0;
      const before = bytesOf(state);
      const objs = state.objs;
      packState(state);
      expect({ nums: state.nums.length, flags: state.flags.length, packed: state.packed !== undefined }).toEqual({ nums: 0, flags: 0, packed: true });
      // Never much larger than the state (all numbers kept when most differ), smaller when few differ.
      expect(state.packed?.byteLength).toBeLessThanOrEqual(before.length + 8);
      forms.add(new Int32Array((state.packed as Uint8Array).buffer, 0, 1)[0] === -1 ? 'every number' : 'differing numbers');
      packState(state); // already packed: nothing happens
      unpackState(state);
      expect(bytesOf(state)).toEqual(before);
      expect({ plan: state.plan === PLAN, objs: state.objs === objs, packed: state.packed }).toEqual({ plan: true, objs: true, packed: undefined });
      unpackState(state); // not packed: nothing happens
      expect(bytesOf(state)).toEqual(before);
    }
    expect([...forms].sort()).toEqual(['differing numbers', 'every number']);
  });

  it('keeps only the numbers that differ from an empty state when few do', () => {
    const state = stateWith(5, 1);
    const size = bytesOf(state).length;
    packState(state);
    expect(state.packed?.byteLength).toBeLessThan(size / 2);
    unpackState(state);
    const fresh = newUserState();
    segment(PLAN, fresh, new SampleGenerator(5).events(1, T0), new SampleGenerator(5).context());
    expect(bytesOf(state)).toEqual(bytesOf(fresh));
  });

  it("unpacks into the buffer another state's packing freed, and both stay exact", () => {
    const a = stateWith(6, 10);
    const b = stateWith(7, 10);
    const beforeA = bytesOf(a);
    const beforeB = bytesOf(b);
    packState(b);
    const freed = packState(a);
    expect(freed).toBeInstanceOf(ArrayBuffer);
    unpackState(b, freed);
    expect(b.nums.buffer).toBe(freed);
    expect(bytesOf(b)).toEqual(beforeB);
    unpackState(a);
    expect(a.nums.buffer).not.toBe(freed);
    expect(bytesOf(a)).toEqual(beforeA);
  });

  it('leaves an unbound state as it is', () => {
    const state = newUserState();
    packState(state);
    expect(state.packed).toBeUndefined();
  });

  it('answers every engine entry as the unpacked state would', () => {
    const gen = new SampleGenerator(9);
    const ctx = gen.context();
    const events = gen.events(40, T0);
    const kept = newUserState();
    const packed = newUserState();
    for (let i = 0; i < events.length; i++) {
      const a = segment(PLAN, kept, [events[i]!], ctx);
      packState(packed);
      const b = segment(PLAN, packed, [events[i]!], ctx);
      expect(b.transitions).toEqual(a.transitions);
      expect(b.memberships).toEqual(a.memberships);
      packState(packed);
      expect(membershipsOf(packed)).toEqual(membershipsOf(kept));
      packState(packed);
      expect(nextDeadline(PLAN, packed)).toBe(nextDeadline(PLAN, kept));
      packState(packed);
      expect(encodeState(packed)).toEqual(encodeState(kept));
      if (i % 7 === 6) {
        packState(packed);
        expect(evaluateAt(PLAN, packed, kept.time + 86_400_000, ctx)).toEqual(evaluateAt(PLAN, kept, kept.time + 86_400_000, ctx));
      }
    }
  });
});
