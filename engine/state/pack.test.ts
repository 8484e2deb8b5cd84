// Packed states (pack.ts `packState`): an owner's resident tier holds a bound state as the numbers that differ
// from an empty state's and its flags (two to a byte), the bytes of one string; unpacking gives back the same state bit for bit, still bound, and every engine
// entry unpacks a packed state first.

import { describe, expect, it } from 'vitest';
import { compilePlan } from '../plan/index.js';
import { SampleGenerator } from '../../test/support/sample-cohorts.js';
import { encodeState } from './codec.js';
import { evaluateAt, nextDeadline, segment } from './segment.js';
import { packState, unpackState } from './pack.js';
import { membershipsOf, newUserState, type UserState } from './user-state.js';

const PLAN = compilePlan(new SampleGenerator(3).cohorts(30), 1);
const T0 = Date.UTC(2026, 0, 1);

function bytesOf(state: UserState): number[] {
  return [...new Uint8Array(state.nums.buffer, state.nums.byteOffset, state.nums.byteLength), ...state.flags];
}

/**
 * A packed state read by the layout pack.ts documents, independently of `unpackState`: its header, its dictionary,
 * the kept words by position, and where its flags start.
 */
function packedOf(state: UserState): { bytes: Uint8Array; kept: number; nibbles: number; distinct: number; words: Map<number, number>; flagsAt: number } {
  expect(typeof state.packed).toBe('string');
  const bytes = new Uint8Array(Buffer.from(state.packed as string, 'latin1'));
  const view = new DataView(bytes.buffer);
  const word = (i: number): number => view.getUint32(4 * i, true);
  const [kept, nibbles, distinct] = [word(0), word(1), word(2)];
  const words = new Map<number, number>();
  if (kept === DENSE) {
    const count = (state.plan?.numCount ?? 0) * 2;
    for (let i = 0; i < count; i++) words.set(i, word(3 + i));
    return { bytes, kept, nibbles, distinct, words, flagsAt: 12 + 4 * count };
  }
  let at = 12 + 4 * distinct;
  const varint = (): number => {
    let value = 0;
    for (let scale = 1; ; scale *= 128) {
      const byte = bytes[at++] as number;
      value += (byte & 127) * scale;
      if (byte < 128) return value;
    }
  };
  let position = -1;
  for (let k = 0; k < kept; k++) {
    position += varint() + 1;
    const index = varint();
    expect(index).toBeLessThan(distinct);
    words.set(position, word(3 + index));
  }
  return { bytes, kept, nibbles, distinct, words, flagsAt: at };
}

const DENSE = 0xffffffff;

/** The words of a state's numbers that differ from an empty state's (bound to the same plan), by position. */
function differingWords(state: UserState): Map<number, number> {
  const empty = newUserState();
  segment(state.plan as NonNullable<UserState['plan']>, empty, [], {} as never);
  const out = new Map<number, number>();
  state.ints.forEach((word, i) => {
    if (word !== empty.ints[i]) out.set(i, word);
  });
  return out;
}

function stateWith(seed: number, events: number): UserState {
  const state = newUserState();
  segment(PLAN, state, new SampleGenerator(seed).events(events, T0), new SampleGenerator(seed).context());
  return state;
}

describe('packed states', () => {
  it('unpack to the same numbers and flags, bit for bit (NaN payloads and -0 included), still bound', () => {
    const forms = new Set<string>();
    for (const [seed, events, scrambled] of [[1, 20, false], [2, 20, false], [3, 2, false], [4, 200, true]] as const) {
      const state = stateWith(seed, events);
      // Packing is bitwise, whatever the numbers mean: most of them changed, so every number is kept.
      if (scrambled) for (let i = 0; i < state.nums.length; i++) if (i % 5 !== 0) state.nums[i] = i * 1.2345678901 + 0.1;
      // Values an exact copy must keep as they are (a value-wise copy would lose the payload or the sign).
      const raw = new DataView(state.nums.buffer, state.nums.byteOffset);
      raw.setUint32(0, 0x7ff8dead);
      raw.setUint32(4, 0xbeef);
      state.nums[1] = -0;
      const before = bytesOf(state);
      const objs = state.objs;
      const differing = differingWords(state);
      packState(state);
      // The kept words are exactly the differing ones (all of them when that is smaller).
      const packed = packedOf(state);
      if (packed.kept !== DENSE) expect(packed.words).toEqual(differing);
      expect({ nums: state.nums.length, flags: state.flags.length, packed: state.packed !== undefined }).toEqual({ nums: 0, flags: 0, packed: true });
      // Never much larger than the state (all numbers kept when most differ), smaller when few differ.
      expect(packedOf(state).bytes.length).toBeLessThanOrEqual(before.length + 12);
      forms.add(packedOf(state).kept === DENSE ? 'every number' : 'differing numbers');
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
    expect(packedOf(state).bytes.length).toBeLessThan(size / 2);
    unpackState(state);
    const fresh = newUserState();
    segment(PLAN, fresh, new SampleGenerator(5).events(1, T0), new SampleGenerator(5).context());
    expect(bytesOf(state)).toEqual(bytesOf(fresh));
  });

  it("unpacks into the views another state's packing freed, and both stay exact", () => {
    const a = stateWith(6, 10);
    const b = stateWith(7, 10);
    const beforeA = bytesOf(a);
    const beforeB = bytesOf(b);
    const viewsOfA = [a.nums, a.ints, a.flags];
    packState(b);
    const freed = packState(a);
    expect(freed === undefined ? [] : [freed.nums, freed.ints, freed.flags]).toEqual(viewsOfA);
    unpackState(b, freed);
    expect([b.nums, b.ints, b.flags].every((view, i) => view === viewsOfA[i])).toBe(true);
    expect(bytesOf(b)).toEqual(beforeB);
    unpackState(a);
    expect(a.nums.buffer).not.toBe(viewsOfA[0]?.buffer);
    expect(bytesOf(a)).toEqual(beforeA);
  });

  it('does not take views of another plan\'s size', () => {
    const other = compilePlan(new SampleGenerator(4).cohorts(5), 1);
    const a = newUserState();
    segment(other, a, new SampleGenerator(6).events(3, T0), new SampleGenerator(6).context());
    const b = stateWith(7, 10);
    const beforeB = bytesOf(b);
    packState(b);
    const freed = packState(a);
    expect(freed).toBeDefined();
    unpackState(b, freed);
    expect(b.nums).not.toBe(freed?.nums);
    expect(bytesOf(b)).toEqual(beforeB);
  });

  it('keeps each differing word as an index into a dictionary of their distinct values', () => {
    const state = stateWith(5, 1);
    // 100 numbers of one value: two words each at most (one when a word equals the empty state's), one value each.
    for (let i = 0; i < 100; i++) state.nums[i] = 12345.5;
    const differing = differingWords(state);
    const before = bytesOf(state);
    packState(state);
    const packed = packedOf(state);
    expect(packed.words).toEqual(differing);
    expect(packed.distinct).toBe(new Set(differing.values()).size);
    expect(packed.distinct).toBeLessThan(30);
    // Header, dictionary, and two one-byte varints per kept word (positions close together, few values).
    expect(packed.flagsAt).toBe(12 + 4 * packed.distinct + 2 * differing.size);
    unpackState(state);
    expect(bytesOf(state)).toEqual(before);
  });

  it('keeps the flags two to a byte, with an odd count of them too, and exactly when one does not fit in 4 bits', () => {
    const plans = [PLAN, ...[1, 2, 3, 4, 5, 6].map((n) => compilePlan(new SampleGenerator(n).cohorts(n), 1))];
    const flagCounts = new Set<number>();
    for (const plan of plans) {
      const state = newUserState();
      segment(plan, state, new SampleGenerator(8).events(3, T0), new SampleGenerator(8).context());
      flagCounts.add(state.flags.length % 2);
      for (const big of [false, true]) {
        if (big) state.flags[state.flags.length - 1] = 200;
        const before = bytesOf(state);
        const flags = state.flags.length;
        packState(state);
        const { bytes, nibbles, flagsAt } = packedOf(state);
        // The words, then the flags: one to a byte, or two.
        expect({ nibbles, flags: bytes.length - flagsAt }).toEqual({ nibbles: big ? 0 : 1, flags: big ? flags : Math.ceil(flags / 2) });
        unpackState(state);
        expect(bytesOf(state)).toEqual(before);
      }
    }
    expect([...flagCounts].sort()).toEqual([0, 1]);
  });

  it('keeps positions past 65,536 words, in a plan of more than 65,536 numbers', { timeout: 60_000 }, () => {
    // 21,000 cohorts: also the size at which the generated `touch` once had a frame larger than the stack (generated.ts).
    const plan = compilePlan(new SampleGenerator(42).cohorts(21_000), 1);
    expect(plan.numCount).toBeGreaterThan(65_536);
    const state = newUserState();
    segment(plan, state, new SampleGenerator(1).events(3, T0), new SampleGenerator(1).context());
    // A number past 16-bit positions, changed, must come back.
    state.nums[plan.numCount - 1] = 12345.5;
    const before = bytesOf(state);
    const differing = differingWords(state);
    packState(state);
    const { kept, words } = packedOf(state);
    expect(kept).not.toBe(DENSE);
    expect(words).toEqual(differing);
    expect(words.get(2 * plan.numCount - 1)).toBe(differing.get(2 * plan.numCount - 1));
    expect(Math.max(...words.keys())).toBeGreaterThan(2 * 65_536);
    unpackState(state);
    expect(bytesOf(state)).toEqual(before);
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
