// The engine's view of one user's imported data (E13, E14): memberships and connections rows read with one prefix
// scan each, frozen into a synchronous SegmentContext; and a cache of those contexts bounded in bytes (D40),
// invalidated on writes.
//
// The cache is sized for every active user: a user whose context is not cached costs each of its events two LevelDB
// iterators on the main thread before its group can compute (measured at 100,000 users with a cache of 10,000
// contexts: 22 % of the main thread's time in iterators during the ingestion benchmark). Most users have no imported
// data; they share one empty context, so their entry costs only its key.

import { totalmem } from 'node:os';

import type { ConnectionRow, SegmentContext } from '../../../engine/api.js';
import type { Store } from '../../store/contract.js';
import { ByteLru } from '../../byte-lru.js';
import { prefixEnd } from '../../store/contract.js';
import { membershipsScan, rowsScan } from './keys.js';
import type { Relation, StoredMembership, StoredRow } from './types.js';

/** A snapshot of a user's imported data; its lookups are synchronous and allocate nothing. */
export class ImportedContext implements SegmentContext {
  constructor(
    private readonly memberships: ReadonlySet<string>,
    private readonly rows: ReadonlyMap<string, readonly ConnectionRow[]>,
    /** An estimate of the memory it holds, for the cache's bound. */
    readonly bytes: number = CONTEXT_BYTES,
  ) {}

  /** D27: `provider` is the import's code, `segment` the segment's code, within imports of `relation`. */
  inImportedSegment(relation: Relation, provider: string, segment: string): boolean {
    return this.memberships.has(membershipId(relation, provider, segment));
  }

  /** The user's rows of the connections import whose code is `provider`, by time ascending (epoch ms). */
  connectionRows(provider: string): readonly ConnectionRow[] {
    return this.rows.get(provider) ?? NO_ROWS;
  }
}

const NO_ROWS: readonly ConnectionRow[] = Object.freeze([]);

/** Estimated bytes of a context object, of a membership in it and of a row besides its properties' JSON text. */
const CONTEXT_BYTES = 160;
const MEMBERSHIP_BYTES = 64;
const ROW_BYTES = 96;

/** The context of every user without imported data. */
const EMPTY = new ImportedContext(new Set(), new Map(), 0);

export async function readContext(store: Store, org: string, user: string): Promise<ImportedContext> {
  const [memberships, rows] = await Promise.all([readMemberships(store, org, user), readRows(store, org, user)]);
  if (memberships.ids.size === 0 && rows.byProvider.size === 0) return EMPTY;
  return new ImportedContext(memberships.ids, rows.byProvider, CONTEXT_BYTES + memberships.bytes + rows.bytes);
}

async function readMemberships(store: Store, org: string, user: string): Promise<{ ids: Set<string>; bytes: number }> {
  const prefix = membershipsScan(org, user);
  const ids = new Set<string>();
  let bytes = 0;
  for await (const [, value] of store.iterate<StoredMembership>({ gte: prefix, lt: prefixEnd(prefix) })) {
    const id = membershipId(value.relation, value.provider, value.segment);
    ids.add(id);
    bytes += MEMBERSHIP_BYTES + 2 * id.length;
  }
  return { ids, bytes };
}

async function readRows(store: Store, org: string, user: string): Promise<{ byProvider: Map<string, readonly ConnectionRow[]>; bytes: number }> {
  const prefix = rowsScan(org, user);
  const byProvider = new Map<string, ConnectionRow[]>();
  let bytes = 0;
  for await (const [, value] of store.iterate<StoredRow>({ gte: prefix, lt: prefixEnd(prefix) })) {
    const rows = byProvider.get(value.provider) ?? [];
    rows.push(Object.freeze({ time: value.time, properties: Object.freeze(value.properties) }));
    byProvider.set(value.provider, rows);
    bytes += ROW_BYTES + 2 * JSON.stringify(value.properties).length;
  }
  for (const rows of byProvider.values()) Object.freeze(rows.sort((a, b) => a.time - b.time));
  return { byProvider, bytes };
}

function membershipId(relation: string, provider: string, segment: string): string {
  return `${relation}\u0000${provider}\u0000${segment}`;
}

/** D40: bytes the cached contexts may hold unless configured: a sixty-fourth of this machine's memory, 16-512 MiB. */
export function defaultContextCacheBytes(): number {
  return Math.min(512 * 1024 ** 2, Math.max(16 * 1024 ** 2, Math.floor(totalmem() / 64)));
}

/** Bytes an entry is counted for: its key (twice: the map's and the entry's) and its context's estimate. */
const ENTRY_BYTES = 96;

/**
 * A least-recently-used cache of contexts by (org, user), bounded in bytes. A write invalidates its users after it
 * is committed and bumps an epoch, and a read fills the cache only if no write was committed while it ran, so no
 * stale context is ever kept. 0 bytes disables it.
 */
export class ContextCache {
  private readonly entries: ByteLru<ImportedContext>;
  private epoch = 0;

  constructor(private readonly maxBytes: number) {
    this.entries = new ByteLru(maxBytes, (key, context) => ENTRY_BYTES + 2 * key.length + context.bytes);
  }

  get(org: string, user: string): ImportedContext | undefined {
    return this.entries.get(cacheId(org, user));
  }

  /** The epoch to pass to `fill` for a read starting now. */
  currentEpoch(): number {
    return this.epoch;
  }

  fill(org: string, user: string, context: ImportedContext, readEpoch: number): void {
    if (this.maxBytes <= 0 || readEpoch !== this.epoch) return;
    this.entries.set(cacheId(org, user), context);
  }

  /** Forgets everything: for a write that failed half-way and cannot say which users it touched. */
  clear(): void {
    this.epoch += 1;
    this.entries.clear();
  }

  invalidate(org: string, users: readonly string[]): void {
    this.epoch += 1;
    for (const user of users) this.entries.delete(cacheId(org, user));
  }
}

function cacheId(org: string, user: string): string {
  return `${org}\u0000${user}`;
}
