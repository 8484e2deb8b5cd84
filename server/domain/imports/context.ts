// The engine's view of one user's imported data (E13, E14): memberships and connections rows read with one prefix
// scan each, frozen into a synchronous SegmentContext; and a bounded cache of those contexts, invalidated on writes.

import type { ConnectionRow, SegmentContext } from '../../../engine/api.js';
import type { Store } from '../../store/contract.js';
import { prefixEnd } from '../../store/contract.js';
import { membershipsScan, rowsScan } from './keys.js';
import type { Relation, StoredMembership, StoredRow } from './types.js';

/** A snapshot of a user's imported data; its lookups are synchronous and allocate nothing. */
export class ImportedContext implements SegmentContext {
  constructor(
    private readonly memberships: ReadonlySet<string>,
    private readonly rows: ReadonlyMap<string, readonly ConnectionRow[]>,
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

export async function readContext(store: Store, org: string, user: string): Promise<ImportedContext> {
  const [memberships, rows] = await Promise.all([readMemberships(store, org, user), readRows(store, org, user)]);
  return new ImportedContext(memberships, rows);
}

async function readMemberships(store: Store, org: string, user: string): Promise<Set<string>> {
  const prefix = membershipsScan(org, user);
  const memberships = new Set<string>();
  for await (const [, value] of store.iterate<StoredMembership>({ gte: prefix, lt: prefixEnd(prefix) })) {
    memberships.add(membershipId(value.relation, value.provider, value.segment));
  }
  return memberships;
}

async function readRows(store: Store, org: string, user: string): Promise<Map<string, readonly ConnectionRow[]>> {
  const prefix = rowsScan(org, user);
  const byProvider = new Map<string, ConnectionRow[]>();
  for await (const [, value] of store.iterate<StoredRow>({ gte: prefix, lt: prefixEnd(prefix) })) {
    const rows = byProvider.get(value.provider) ?? [];
    rows.push(Object.freeze({ time: value.time, properties: Object.freeze(value.properties) }));
    byProvider.set(value.provider, rows);
  }
  for (const rows of byProvider.values()) Object.freeze(rows.sort((a, b) => a.time - b.time));
  return byProvider;
}

function membershipId(relation: string, provider: string, segment: string): string {
  return `${relation}\u0000${provider}\u0000${segment}`;
}

/**
 * A least-recently-used cache of contexts by (org, user). A write invalidates its users after it is committed and
 * bumps an epoch, and a read fills the cache only if no write was committed while it ran, so no stale context is
 * ever kept. Size 0 disables it.
 */
export class ContextCache {
  private readonly entries = new Map<string, ImportedContext>();
  private epoch = 0;

  constructor(private readonly capacity: number) {}

  get(org: string, user: string): ImportedContext | undefined {
    const id = cacheId(org, user);
    const context = this.entries.get(id);
    if (context === undefined) return undefined;
    this.entries.delete(id);
    this.entries.set(id, context);
    return context;
  }

  /** The epoch to pass to `fill` for a read starting now. */
  currentEpoch(): number {
    return this.epoch;
  }

  fill(org: string, user: string, context: ImportedContext, readEpoch: number): void {
    if (this.capacity <= 0 || readEpoch !== this.epoch) return;
    this.entries.set(cacheId(org, user), context);
    if (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next();
      if (oldest.done !== true) this.entries.delete(oldest.value);
    }
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
