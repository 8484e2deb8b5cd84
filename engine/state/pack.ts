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

/** Header word 0 of a pack that keeps every number's words (else it is the count of words kept). */
const DENSE = 0xffffffff;

/**
 * Where a pack is built and read: one buffer for the process, grown to the largest plan's worst case, with its word
 * view made once (a pack then allocates its string alone; an unpack nothing but the views it may not reuse); and the
 * differing words' positions, dictionary indexes and distinct values, with a hash of the values seen in this pack
 * (slots stamped with the pack's number, so nothing is cleared between packs).
 */
let bytes = Buffer.allocUnsafeSlow(0);
let words = new Uint32Array(0);
let positions = new Uint32Array(0);
let indexes = new Uint32Array(0);
let values = new Uint32Array(0);
let hashKeys = new Uint32Array(0);
let hashIndexes = new Uint32Array(0);
let hashStamps = new Uint32Array(0);
let hashShift = 32;
let stamp = 0;

function scratch(size: number): void {
  if (bytes.length >= size) return;
  bytes = Buffer.allocUnsafeSlow(Math.max(size, 2 * bytes.length, 4096));
  words = new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.length >>> 2);
}

/** Room for the differing words of a state of `wordCount` words, and a hash at most half full. */
function dictionaryScratch(wordCount: number): void {
  if (positions.length < wordCount) {
    positions = new Uint32Array(wordCount);
    indexes = new Uint32Array(wordCount);
    values = new Uint32Array(wordCount);
  }
  if (hashKeys.length < 2 * wordCount || hashKeys.length < 64) {
    let size = 64;
    while (size < 2 * wordCount) size *= 2;
    hashKeys = new Uint32Array(size);
    hashIndexes = new Uint32Array(size);
    hashStamps = new Uint32Array(size);
    hashShift = 32 - Math.log2(size);
    stamp = 0;
  }
  if (stamp === 0xffffffff) {
    hashStamps.fill(0);
    stamp = 0;
  }
  stamp++;
}

/** Bytes of `value` as a varint (7 bits a byte, the high bit set on all but the last). */
function varintBytes(value: number): number {
  return value < 0x80 ? 1 : value < 0x4000 ? 2 : value < 0x200000 ? 3 : value < 0x10000000 ? 4 : 5;
}

function writeVarint(value: number, at: number): number {
  let rest = value;
  while (rest >= 0x80) {
    bytes[at++] = (rest & 0x7f) | 0x80;
    rest = Math.floor(rest / 0x80);
  }
  bytes[at++] = rest;
  return at;
}

/** Where `readVarint` left off. */
let readAt = 0;

function readVarint(): number {
  let value = 0;
  let scale = 1;
  for (;;) {
    const byte = bytes[readAt++] as number;
    value += (byte & 0x7f) * scale;
    if (byte < 0x80) return value;
    scale *= 0x80;
  }
}

/**
 * Holds a bound state compactly: only the 32-bit words of its numbers that differ, bit for bit, from those of an
 * empty state bound to the same plan, each as its distance from the previous one and its index in a dictionary of
 * their distinct values (a user's differing words are mostly the same few: its event times, small counts, the
 * high word of Infinity), or every word when that is smaller; and the flags, two to a byte when every one fits in 4
 * bits (they hold 0-5); as the bytes of one string (`state.packed`: one heap object, where a buffer of its own cost
 * an ArrayBuffer, a view and the backing store's records besides its bytes). The rest of the state (trackers,
 * rings, plan) stays. `unpackState` (or any engine entry) restores it. An unbound or packed state is left as it is.
 * Answers the state's own views, free once packed, for `unpackState` to fill for another state.
 *
 * Layout: three 32-bit words (the count of words kept, or DENSE when all are; 1 when the flags are in nibbles, else
 * 0; the dictionary's size), the dictionary's words, each kept word's distance and index as two varints (or, DENSE,
 * every word), the flags.
 */
export function packState(state: UserState): StateBuffers | undefined {
  const plan = state.plan;
  if (plan === undefined || state.packed !== undefined) return undefined;
  const own = state.nums.byteOffset === 0 && state.flags.buffer === state.nums.buffer;
  const released = own ? { nums: state.nums, ints: state.ints, flags: state.flags } : undefined;
  const ints = state.ints;
  const flags = state.flags;
  const wordCount = ints.length;
  const empty = emptyWordsOf(plan);
  dictionaryScratch(wordCount);
  // One pass: the differing words' positions and dictionary indexes, the dictionary, and the varints' size.
  let kept = 0;
  let distinct = 0;
  let entryBytes = 0;
  let previous = -1;
  const mask = hashKeys.length - 1;
  for (let i = 0; i < wordCount; i++) {
    const word = ints[i] as number;
    if (word === empty[i]) continue;
    let slot = Math.imul(word, 0x9e3779b1) >>> hashShift;
    while (hashStamps[slot] === stamp && hashKeys[slot] !== word) slot = (slot + 1) & mask;
    let index: number;
    if (hashStamps[slot] === stamp) index = hashIndexes[slot] as number;
    else {
      index = distinct++;
      values[index] = word;
      hashStamps[slot] = stamp;
      hashKeys[slot] = word;
      hashIndexes[slot] = index;
    }
    positions[kept] = i;
    indexes[kept] = index;
    entryBytes += varintBytes(i - previous - 1) + varintBytes(index);
    previous = i;
    kept++;
  }
  const dense = 4 * distinct + entryBytes >= 4 * wordCount;
  const flagsAt = 12 + (dense ? 4 * wordCount : 4 * distinct + entryBytes);
  scratch(flagsAt + flags.length);
  if (dense) words.set(ints, 3);
  else {
    for (let d = 0; d < distinct; d++) words[3 + d] = values[d] as number;
    let at = 12 + 4 * distinct;
    previous = -1;
    for (let k = 0; k < kept; k++) {
      const position = positions[k] as number;
      at = writeVarint(position - previous - 1, at);
      at = writeVarint(indexes[k] as number, at);
      previous = position;
    }
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
  words[2] = dense ? 0 : distinct;
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
  const wordCount = ints.length;
  scratch(packed.length);
  bytes.write(packed, 0, 'latin1');
  let flagsAt: number;
  if (words[0] === DENSE) {
    for (let j = 0; j < wordCount; j++) ints[j] = words[3 + j] as number;
    flagsAt = 12 + 4 * wordCount;
  } else {
    const kept = words[0] as number;
    const distinct = words[2] as number;
    ints.set(emptyWordsOf(plan));
    readAt = 12 + 4 * distinct;
    let position = -1;
    for (let k = 0; k < kept; k++) {
      position += readVarint() + 1;
      ints[position] = words[3 + readVarint()] as number;
    }
    flagsAt = readAt;
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
