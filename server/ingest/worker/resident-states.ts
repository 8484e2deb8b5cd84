// The states a partition owner keeps resident (server/ingest/README.md), in two tiers: the most recently used ones
// decoded (bound to their plan, an event costs the segment step alone), the others packed (engine `packState`: only
// the words of its numbers that differ from an empty state's, through a dictionary of their values, and the flags
// two to a byte, as the bytes of one string; with the bench's 100 cohorts a decoded state's numbers and flags are
// ~3.1 KB, a packed one ~420 bytes after one event). A state leaves the decoded tier packed, least recently used
// first, and comes back unpacked when its user is next computed, still bound, so its next step neither binds nor
// decides every cohort again. Which users are resident at all is still the main thread's cache's decision
// (state/cache.ts): this is only how the owner holds them.
//
// Exact: unpacking restores the state bit for bit (engine/state/pack.ts).

import { encodeState, packState, unpackState, type StateBuffers, type UserState } from '../../../engine/index.js';

/**
 * Decoded states an owner keeps by default (`serve --decoded-states N`): all of them. Holding the long tail packed
 * saves memory (a hot user at 100,000 users: 9,332 against 11,155 bytes in bench/README.md (6)) but each event of a
 * user outside the decoded tier pays an unpack and the pack of the state it displaces: ~12 µs of the owner's CPU
 * in `node dist/bench/owner.js --decoded-states 8192` (runWork 25.09 against 13.24 µs per event, 30,000 users), and
 * over HTTP about 20 µs of server CPU per request off the
 * main thread at 100,000 users whose events are spread evenly (the worst case for a recency tier): `node
 * dist/bench/ab.js --variant all=dist --variant tier16k=dist,--decoded-states,16384 --users 100000 --rounds 6
 * --seconds 10`, 4 complete rounds, medians 80.5 against 99.5 µs (higher in every round), ratio lower in every
 * round (docs/performance.md, Kept, 2026-11-29). So it is the operator's trade.
 */
export const DECODED_STATES = Number.POSITIVE_INFINITY;

export class ResidentStates {
  /** Decoded states, least recently used first. */
  private readonly decoded = new Map<string, UserState>();
  private readonly packed = new Map<string, UserState>();
  /** Whether a bound applies: unbounded (`Infinity`), no recency is kept and nothing is ever packed here. */
  private readonly bounded: boolean;

  constructor(private readonly maxDecoded: number = DECODED_STATES) {
    if (!(maxDecoded === Number.POSITIVE_INFINITY || (Number.isSafeInteger(maxDecoded) && maxDecoded >= 1))) {
      throw new Error(`maxDecoded must be a positive integer (or Infinity), not ${maxDecoded}`);
    }
    this.bounded = maxDecoded !== Number.POSITIVE_INFINITY;
  }

  /** Users held, in either tier. */
  get size(): number {
    return this.decoded.size + this.packed.size;
  }

  /** Users held decoded (tests). */
  get decodedSize(): number {
    return this.decoded.size;
  }

  has(key: string): boolean {
    return this.decoded.has(key) || this.packed.has(key);
  }

  /** The user's state, decoded (unpacking it if it was held packed), now the most recently used; undefined if not held. */
  get(key: string): UserState | undefined {
    const state = this.decoded.get(key);
    if (state !== undefined) {
      // Per event: the recency update (a delete and an insert) only where there is a bound to keep.
      if (this.bounded) {
        this.decoded.delete(key);
        this.decoded.set(key, state);
      }
      return state;
    }
    const packed = this.packed.get(key);
    if (packed === undefined) return undefined;
    this.packed.delete(key);
    // Room first: the state that leaves the decoded tier hands its views to the one coming back (no allocation).
    const freed = this.makeRoom(1);
    unpackState(packed, freed);
    this.decoded.set(key, packed);
    return packed;
  }

  /** Holds `state` decoded as the most recently used (replacing whatever was held for the user). */
  set(key: string, state: UserState): void {
    if (!this.bounded) {
      this.decoded.set(key, state);
      return;
    }
    this.packed.delete(key);
    this.decoded.delete(key);
    this.setDecoded(key, state);
  }

  /** The user's state as held, decoded or packed, without touching its recency; undefined if not held. */
  peek(key: string): UserState | undefined {
    return this.decoded.get(key) ?? this.packed.get(key);
  }

  /** The user's state encoded (a snapshot), a packed one left packed; undefined if not held. */
  encode(key: string): Uint8Array | undefined {
    const packed = this.packed.get(key);
    if (packed !== undefined) {
      const bytes = encodeState(packed);
      packState(packed);
      return bytes;
    }
    const state = this.decoded.get(key);
    return state === undefined ? undefined : encodeState(state);
  }

  delete(key: string): void {
    this.decoded.delete(key);
    this.packed.delete(key);
  }

  clear(): void {
    this.decoded.clear();
    this.packed.clear();
  }

  private setDecoded(key: string, state: UserState): void {
    this.decoded.set(key, state);
    this.makeRoom(0);
  }

  /** Packs the least recently used decoded states until `more` fit; the last packed one's freed views. */
  private makeRoom(more: number): StateBuffers | undefined {
    let freed: StateBuffers | undefined;
    while (this.decoded.size + more > this.maxDecoded) {
      const oldest = this.decoded.entries().next().value as [string, UserState];
      this.decoded.delete(oldest[0]);
      freed = packState(oldest[1]);
      this.packed.set(oldest[0], oldest[1]);
    }
    return freed;
  }
}
