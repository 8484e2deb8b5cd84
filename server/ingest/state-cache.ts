// The bounded, least-recently-used cache of users' encoded engine states, with what the write-behind snapshots need:
// the log sequence each state covers and whether it is newer than its last snapshot. Evictions are handed back.

export interface CachedUser {
  readonly org: string;
  readonly user: string;
  readonly partition: number;
  /** The encoded state (engine codec). */
  bytes: Uint8Array;
  /** Sorted cohort codes of the state. */
  memberships: readonly number[];
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
}

export function userKey(org: string, user: string): string {
  return `${org}\u0000${user}`;
}

export class StateCache {
  private readonly entries = new Map<string, CachedUser>();

  constructor(
    private readonly capacity: number,
    private readonly onEvict: (entry: CachedUser) => void,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  /** The entry, now the most recently used. */
  get(key: string): CachedUser | undefined {
    const entry = this.entries.get(key);
    if (entry !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, entry);
    }
    return entry;
  }

  /** The entry without touching its recency. */
  peek(key: string): CachedUser | undefined {
    return this.entries.get(key);
  }

  set(entry: CachedUser): void {
    const key = userKey(entry.org, entry.user);
    this.entries.delete(key);
    this.entries.set(key, entry);
    while (this.entries.size > this.capacity) {
      const oldest = this.entries.entries().next();
      if (oldest.done === true) break;
      this.entries.delete(oldest.value[0]);
      this.onEvict(oldest.value[1]);
    }
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  values(): IterableIterator<CachedUser> {
    return this.entries.values();
  }
}
