// Packed states: how an owner's resident tier holds a bound state compactly (server/ingest/worker/resident-states.ts)
// and gives it back bit for bit, still bound, so its next step neither binds nor decides every cohort again.

import { Buffer } from 'node:buffer';
import type { Plan } from '../plan/plan.js';
import { NO_FLAGS, NO_INTS, NO_NUMS, UserState, allocate, bindState, type StateBuffers } from './user-state.js';

/** The numbers of an empty state bound to a plan, as 32-bit words: what packed states are stored against. */
const emptyWords = new WeakMap<Plan, Uint32Array>();

function emptyWordsOf(plan: Plan): Uint32Array {
  let words = emptyWords.get(plan);
  if (words === undefined) {
    const empty = new UserState();
    bindState(empty, plan);
    words = empty.ints.slice();
    emptyWords.set(plan, words);
  }
  return words;
}

/** Header word 0 of a pack that keeps every number (else it is the count of numbers kept). */
const DENSE = 0xffffffff;

/**
 * Where a pack is built and read: one buffer for the process, grown to the largest plan's worst case, with its word
 * views made once (a pack then allocates its string alone; an unpack nothing but the views it may not reuse).
 */
let bytes = Buffer.allocUnsafeSlow(0);
let words = new Uint32Array(0);
let halves = new Uint16Array(0);

function scratch(size: number): void {
  if (bytes.length >= size) return;
  bytes = Buffer.allocUnsafeSlow(Math.max(size, 2 * bytes.length, 4096));
  words = new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.length >>> 2);
  halves = new Uint16Array(bytes.buffer, bytes.byteOffset, bytes.length >>> 1);
}

/**
 * Holds a bound state compactly: only the numbers that differ, bit for bit, from those of an empty state bound to
 * the same plan (their 64-bit patterns and positions; all of them when most differ) and the flags, two to a byte
 * when every one fits in 4 bits (they hold 0-5), as the bytes of one string (`state.packed`: one heap object, where
 * a buffer of its own cost an ArrayBuffer, a view and the backing store's records besides its bytes); the rest of the
 * state (trackers, rings, plan) stays. `unpackState` (or any engine entry) restores it. An unbound or packed state is
 * left as it is. Answers the state's own views, free once packed, for `unpackState` to fill for another state.
 *
 * Layout: two 32-bit words (the count of numbers kept, DENSE when all are; 1 when the flags are in nibbles, else 0),
 * the kept numbers' words (two each), their positions (16-bit when the plan has at most 65,536 numbers, else 32-bit;
 * none when all are kept), the flags.
 */
export function packState(state: UserState): StateBuffers | undefined {
  const plan = state.plan;
  if (plan === undefined || state.packed !== undefined) return undefined;
  const own = state.nums.byteOffset === 0 && state.flags.buffer === state.nums.buffer;
  const released = own ? { nums: state.nums, ints: state.ints, flags: state.flags } : undefined;
  const ints = state.ints;
  const flags = state.flags;
  const count = ints.length >>> 1;
  const wide = count > 0x10000;
  scratch(8 + 12 * count + flags.length);
  const empty = emptyWordsOf(plan);
  // One pass: the differing numbers' words from word 2 on, their positions in the space the words of all of them
  // would take (then moved down to follow the words kept).
  const far = 2 + 2 * count;
  let kept = 0;
  for (let i = 0; i < count; i++) {
    const lo = ints[2 * i] as number;
    const hi = ints[2 * i + 1] as number;
    if (lo === empty[2 * i] && hi === empty[2 * i + 1]) continue;
    words[2 + 2 * kept] = lo;
    words[3 + 2 * kept] = hi;
    if (wide) words[far + kept] = i;
    else halves[2 * far + kept] = i;
    kept++;
  }
  const positionBytes = wide ? 4 : 2;
  const dense = (8 + positionBytes) * kept >= 8 * count;
  let flagsAt: number;
  if (dense) {
    words.set(ints, 2);
    flagsAt = 8 + 8 * count;
  } else {
    const positionsAt = 8 + 8 * kept;
    bytes.copyWithin(positionsAt, 4 * far, 4 * far + positionBytes * kept);
    flagsAt = positionsAt + positionBytes * kept;
  }
  let nibbles = 1;
  for (let i = 0; i < flags.length; i++) {
    if ((flags[i] as number) > 15) {
      nibbles = 0;
      break;
    }
  }
  let end = flagsAt;
  if (nibbles === 1) {
    const last = flags.length - 1;
    for (let i = 0; i < last; i += 2) bytes[end++] = (flags[i] as number) | ((flags[i + 1] as number) << 4);
    if ((flags.length & 1) === 1) bytes[end++] = flags[last] as number;
  } else {
    bytes.set(flags, flagsAt);
    end += flags.length;
  }
  words[0] = dense ? DENSE : kept;
  words[1] = nibbles;
  state.packed = bytes.toString('latin1', 0, end);
  state.nums = NO_NUMS;
  state.ints = NO_INTS;
  state.flags = NO_FLAGS;
  return released;
}

/**
 * Restores a packed state as it was packed (bound to the same plan), into `reuse` when it has the sizes (views
 * `packState` released: no state may use them any more); a state not packed is left as it is.
 */
export function unpackState(state: UserState, reuse?: StateBuffers): void {
  const packed = state.packed;
  const plan = state.plan;
  if (packed === undefined || plan === undefined) return;
  const { nums, ints, flags } = allocate(plan, reuse);
  const count = nums.length;
  scratch(packed.length);
  bytes.write(packed, 0, 'latin1');
  const dense = words[0] === DENSE;
  let flagsAt: number;
  if (dense) {
    for (let j = 0; j < 2 * count; j++) ints[j] = words[2 + j] as number;
    flagsAt = 8 + 8 * count;
  } else {
    const kept = words[0] as number;
    ints.set(emptyWordsOf(plan));
    const wide = count > 0x10000;
    const positions = 2 + 2 * kept;
    for (let k = 0; k < kept; k++) {
      const i = wide ? (words[positions + k] as number) : (halves[2 * positions + k] as number);
      ints[2 * i] = words[2 + 2 * k] as number;
      ints[2 * i + 1] = words[3 + 2 * k] as number;
    }
    flagsAt = 4 * positions + (wide ? 4 : 2) * kept;
  }
  if (words[1] === 1) {
    const last = flags.length - 1;
    let at = flagsAt;
    for (let i = 0; i < last; i += 2) {
      const byte = bytes[at++] as number;
      flags[i] = byte & 15;
      flags[i + 1] = byte >>> 4;
    }
    if ((flags.length & 1) === 1) flags[last] = bytes[at] as number;
  } else {
    for (let i = 0; i < flags.length; i++) flags[i] = bytes[flagsAt + i] as number;
  }
  state.nums = nums;
  state.ints = ints;
  state.flags = flags;
  state.packed = undefined;
}
