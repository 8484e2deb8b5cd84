// Copies of a user state (clone.ts `cloneState`): a copy steps exactly as its original would, from the same bound
// state (no new binding, no decision of every cohort), and the two never share anything a step writes.

import { describe, expect, it } from 'vitest';
import { compilePlan } from '../plan/index.js';
import { SampleGenerator } from '../../test/support/sample-cohorts.js';
import type { SegmentResult } from './segment.js';
import { cloneState } from './clone.js';
import { decodeState, encodeState } from './codec.js';
import { evaluateAt, segment } from './segment.js';
import { packState } from './pack.js';
import { newUserState, type UserState } from './user-state.js';

const PLAN = compilePlan(new SampleGenerator(7).cohorts(40), 1);
const T0 = Date.UTC(2026, 0, 1);

function stateAfter(seed: number, events: number): UserState {
  const state = newUserState();
  const gen = new SampleGenerator(seed);
  for (const event of gen.events(events, T0)) segment(PLAN, state, [event], gen.context());
  return state;
}

/** What a step gives, as comparable data: transitions, memberships and the state's encoding. */
function outcome(result: SegmentResult): unknown {
  return { transitions: result.transitions, memberships: result.memberships, bytes: [...encodeState(result.state)] };
}

/** Runs the same later events (and a re-evaluation past them) on a state; the outcomes of every step. */
function follow(state: UserState, seed: number): unknown[] {
  const gen = new SampleGenerator(seed);
  const ctx = gen.context();
  const events = gen.events(25, T0 + 40 * 86_400_000);
  const steps = events.map((event) => outcome(segment(PLAN, state, [event], ctx)));
  steps.push(outcome(evaluateAt(PLAN, state, T0 + 400 * 86_400_000, ctx)));
  return steps;
}

describe('cloneState', () => {
  it('steps exactly as the original would, and neither one touches the other', () => {
    for (const [seed, events] of [[1, 1], [2, 30], [3, 300]] as const) {
      const original = stateAfter(seed, events);
      const before = [...encodeState(original)];
      const copy = cloneState(original);
      const copied = follow(copy, seed + 100);
      // The copy's steps left the original as it was ...
      expect([...encodeState(original)]).toEqual(before);
      // ... and the original, stepped the same way afterwards, gives the same outcomes.
      expect(follow(original, seed + 100)).toEqual(copied);
      // The same as a state decoded from the original's bytes (a new binding: every cohort decided again).
      expect(follow(decodeState(new Uint8Array(before)), seed + 100)).toEqual(copied);
    }
  });

  it('copies every field: equal values, no shared arrays or rings', () => {
    const original = stateAfter(4, 200);
    const copy = cloneState(original);
    const fields = Object.keys(newUserState());
    expect(Object.keys(copy).sort()).toEqual([...fields].sort());
    for (const field of fields) {
      const a = (original as unknown as Record<string, unknown>)[field];
      const b = (copy as unknown as Record<string, unknown>)[field];
      expect(b, field).toEqual(a);
      if (ArrayBuffer.isView(a) && a.byteLength > 0) expect(b, field).not.toBe(a);
    }
    expect(copy.nums.buffer).toBe(copy.flags.buffer);
    original.objs.forEach((obj, i) => {
      if (typeof obj === 'object' && obj !== null) expect(copy.objs[i], `objs[${i}]`).not.toBe(obj);
    });
  });

  it('copies a packed state packed, and an unbound one through its encoding', () => {
    const packed = stateAfter(5, 40);
    const expected = follow(cloneState(packed), 9);
    packState(packed);
    const packedCopy = cloneState(packed);
    // The packed bytes are an immutable string: the copy shares it, and unpacking either leaves the other packed.
    expect(packedCopy.packed).toBe(packed.packed);
    expect(follow(packedCopy, 9)).toEqual(expected);
    expect(packed.packed).toBeDefined();
    expect(follow(packed, 9)).toEqual(expected);

    const unbound = decodeState(encodeState(stateAfter(6, 40)));
    const unboundCopy = cloneState(unbound);
    expect(unboundCopy.plan).toBeUndefined();
    const fromCopy = follow(unboundCopy, 10);
    expect(follow(unbound, 10)).toEqual(fromCopy);
  });
});
