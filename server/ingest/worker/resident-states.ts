// The states a partition owner keeps resident (server/ingest/README.md), in two tiers: the most recently used ones
// decoded (bound to their plan, an event costs the segment step alone), the others encoded (the compact snapshot
// format, engine/state/codec.ts: ~0.8 KB instead of ~7 KB decoded with the bench's 100 cohorts). A state leaves the
// decoded tier encoded, least recently used first, and comes back decoded when its user is next computed. Which
// users are resident at all is still the main thread's cache's decision (state/cache.ts): this is only how the owner
// holds them.
//
// Exact: an encoded state decodes to what a snapshot of it would restore (recovery's own path), and a decoded state
// is bound afresh at its next step, deciding every cohort again (as after a snapshot), with the same answers.

import { decodeState, encodeState, type UserState } from '../../../engine/index.js';

/**
 * Decoded states an owner keeps by default: all of them. Holding the others encoded saves memory (a decoded state is
 * ~7 KB with the bench's 100 cohorts, its encoding ~0.8 KB) but costs each event of a user outside the decoded tier
 * a decode, a binding that decides every cohort again, and the encoding of the state it displaces: `node
 * dist/bench/ab.js --variant tiered=dist,--decoded-states,8192 ...` at 100,000 users measured 535 µs of server CPU
 * per ingested request against 387 with all decoded (medians of 3 rounds). So it is the operator's trade (`serve --decoded-states N`).
 */
export const DECODED_STATES = Number.POSITIVE_INFINITY;

export class ResidentStates {
  /** Decoded states, least recently used first. */
  private readonly decoded = new Map<string, UserState>();
  private readonly encoded = new Map<string, Uint8Array>();
  /** Whether a bound applies: unbounded (the default), no recency is kept and nothing is ever encoded here. */
  private readonly bounded: boolean;

  constructor(private readonly maxDecoded: number = DECODED_STATES) {
    if (!(maxDecoded === Number.POSITIVE_INFINITY || (Number.isSafeInteger(maxDecoded) && maxDecoded >= 1))) {
      throw new Error(`maxDecoded must be a positive integer (or Infinity), not ${maxDecoded}`);
    }
    this.bounded = maxDecoded !== Number.POSITIVE_INFINITY;
  }

  /** Users held, in either tier. */
  get size(): number {
    return this.decoded.size + this.encoded.size;
  }

  /** Users held decoded (tests). */
  get decodedSize(): number {
    return this.decoded.size;
  }

  has(key: string): boolean {
    return this.decoded.has(key) || this.encoded.has(key);
  }

  /** The user's state, decoded (decoding it if it was held encoded), now the most recently used; undefined if not held. */
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
    const bytes = this.encoded.get(key);
    if (bytes === undefined) return undefined;
    this.encoded.delete(key);
    const revived = decodeState(bytes);
    this.setDecoded(key, revived);
    return revived;
  }

  /** Holds `state` decoded as the most recently used (replacing whatever was held for the user). */
  set(key: string, state: UserState): void {
    if (!this.bounded) {
      this.decoded.set(key, state);
      return;
    }
    this.encoded.delete(key);
    this.decoded.delete(key);
    this.setDecoded(key, state);
  }

  /** The user's state encoded (a snapshot), without decoding one held encoded; undefined if not held. */
  encode(key: string): Uint8Array | undefined {
    const bytes = this.encoded.get(key);
    if (bytes !== undefined) return bytes;
    const state = this.decoded.get(key);
    return state === undefined ? undefined : encodeState(state);
  }

  delete(key: string): void {
    this.decoded.delete(key);
    this.encoded.delete(key);
  }

  clear(): void {
    this.decoded.clear();
    this.encoded.clear();
  }

  private setDecoded(key: string, state: UserState): void {
    this.decoded.set(key, state);
    while (this.decoded.size > this.maxDecoded) {
      const oldest = this.decoded.entries().next().value as [string, UserState];
      this.decoded.delete(oldest[0]);
      // A copy of its own: the codec's output may be a view into a buffer shared with later encodings.
      this.encoded.set(oldest[0], encodeState(oldest[1]).slice());
    }
  }
}
