// The bounded, least-recently-used index of the users whose decoded engine states their partition owners keep
// resident (worker/work.ts), with what the write-behind snapshots need: the log sequence each state covers and whether it
// is newer than its last snapshot. Evictions are handed back (the owner is then told to snapshot and forget).

import { ByteLru } from '../../byte-lru.js';

export interface CachedUser {
  readonly org: string;
  readonly user: string;
  readonly partition: number;
  /** Bytes the owner's resident state holds (its estimate, state/bytes.ts residentBytes). */
  size: number;
  /** Sorted cohort codes of the state (`toMemberCodes`; read them with `fromMemberCodes`). */
  memberships: MemberCodes;
  /** The last log sequence the state covers (its snapshot stamp). */
  seq: number;
  /** Events the state has seen (the user's stored events). */
  count: number;
  /**
   * The plan version the state was last caught up with (server/backfill/README.md): cohorts whose generation is newer are not
   * evaluated over the user's history yet, and the user is not counted in their sizes.
   */
  mark: number;
  /** Newer than the user's last written (or queued) snapshot. */
  dirty: boolean;
  /** Events applied since the last snapshot. */
  unsnapshotted: number;
  /** When it became dirty (options.now()). */
  dirtySince: number;
  /**
   * The imported-data epoch (TickEnv.contextEpoch) at which the context the owner's state was last decided with was
   * captured, and the plan version whose probes it answered; -1: none known. While both still hold, the user's
   * imported data goes to its owner as null (tick.ts): unchanged, the owner goes on with the context it has.
   */
  ctxEpoch: number;
  ctxVersion: number;
}

/**
 * A user's sorted cohort codes as a cache entry keeps them, for every resident user: a string of one character per
 * code when every code fits in 16 bits (1 or 2 bytes a code; an array of numbers takes 8), else the array itself.
 */
export type MemberCodes = string | readonly number[];

export function toMemberCodes(codes: readonly number[]): MemberCodes {
  for (const code of codes) if (!(Number.isInteger(code) && code >= 0 && code <= 0xffff)) return codes;
  // One call for the usual few dozen codes; pieces of 4,096 keep a long list within the arguments' limit.
  if (codes.length <= 4096) return String.fromCharCode(...codes);
  let text = '';
  for (let i = 0; i < codes.length; i += 4096) text += String.fromCharCode(...codes.slice(i, i + 4096));
  return text;
}

export function fromMemberCodes(codes: MemberCodes): readonly number[] {
  if (typeof codes !== 'string') return codes;
  const out = new Array<number>(codes.length);
  for (let i = 0; i < codes.length; i++) out[i] = codes.charCodeAt(i);
  return out;
}

export function userKey(org: string, user: string): string {
  return `${org}\u0000${user}`;
}

/** Bytes a cached user holds: its resident state and memberships, plus the entry, its key and map slots. */
export function entryBytes(entry: CachedUser): number {
  const codes = entry.memberships;
  return entry.size + codes.length * (typeof codes === 'string' ? 2 : 8) + (entry.org.length + entry.user.length) * 4 + 256;
}

/**
 * Bounded both in entries and in bytes (D40: memory held per user state is bounded in bytes, `serve
 * --state-cache-bytes`): past either bound the least recently used entries are evicted (handed to `onEvict`; an
 * evicted user is loaded again from its snapshot and events when next needed). The entry just set is kept even
 * when it alone exceeds the byte bound, so that the state a group committed is what the next group of its user reads.
 */
export class StateCache {
  private readonly lru: ByteLru<CachedUser>;

  constructor(capacity: number, onEvict: (entry: CachedUser) => void, maxBytes = Infinity) {
    this.lru = new ByteLru<CachedUser>(maxBytes, (_key, entry) => entryBytes(entry), { maxEntries: capacity, onEvict });
  }

  get size(): number {
    return this.lru.size;
  }

  /** Bytes held by the entries (entryBytes of each). */
  get bytes(): number {
    return this.lru.bytes;
  }

  /** The entry, now the most recently used. */
  /** Lookups that found the user resident / not (the metrics' hit rate). */
  hits = 0;
  misses = 0;

  get(key: string): CachedUser | undefined {
    const entry = this.lru.get(key);
    if (entry === undefined) this.misses++;
    else this.hits++;
    return entry;
  }

  /** The entry without touching its recency. */
  peek(key: string): CachedUser | undefined {
    return this.lru.peek(key);
  }

  set(entry: CachedUser): void {
    this.lru.set(userKey(entry.org, entry.user), entry);
  }

  delete(key: string): void {
    this.lru.delete(key);
  }

  values(): IterableIterator<CachedUser> {
    return this.lru.values();
  }
}
