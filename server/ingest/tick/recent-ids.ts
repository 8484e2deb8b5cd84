// D29 with one lookup per client id: the track route looks a client's event id up in the store once (to answer a
// retry before its schema check, D41), and the tick must not look again. What the route's lookup cannot have seen
// is what committed after it: while any such lookup is outstanding (`hold`), the ids committed from then on are
// kept here, and the tick asks this window instead of the store for events the route checked (`NewEvent.checked`).
// Exact and bounded: an id committed before every outstanding hold began is in the store for all of them (pruned).

import type { StoredEvent } from '../../domain/events/index.js';

export interface RecentIdsHold {
  /** The commit count when the hold began: the route's lookup sees every commit up to it. */
  readonly mark: number;
  release(): void;
}

export class RecentIds {
  /** Groups committed so far. */
  private commits = 0;
  /** Outstanding holds by mark. */
  private readonly holds = new Map<number, number>();
  /** Client ids committed while holds were outstanding: by clientIdKey, the record and its commit. */
  private readonly ids = new Map<string, { readonly record: StoredEvent; readonly commit: number }>();

  /** A lookup is about to be made: ids committed from now on stay answerable until `release`. */
  hold(): RecentIdsHold {
    const mark = this.commits;
    this.holds.set(mark, (this.holds.get(mark) ?? 0) + 1);
    let released = false;
    return {
      mark,
      release: () => {
        if (released) return;
        released = true;
        const left = (this.holds.get(mark) ?? 1) - 1;
        if (left > 0) this.holds.set(mark, left);
        else this.holds.delete(mark);
        this.prune();
      },
    };
  }

  /** A group committed these client ids (key: clientIdKey). */
  committed(records: Iterable<readonly [string, StoredEvent]>): void {
    this.commits += 1;
    if (this.holds.size === 0) return;
    for (const [key, record] of records) this.ids.set(key, { record, commit: this.commits });
  }

  /** The record of an id committed after `mark`, if any. */
  after(mark: number, key: string): StoredEvent | undefined {
    const entry = this.ids.get(key);
    return entry !== undefined && entry.commit > mark ? entry.record : undefined;
  }

  /** Entries kept (for tests). */
  get size(): number {
    return this.ids.size;
  }

  private prune(): void {
    if (this.holds.size === 0) {
      this.ids.clear();
      return;
    }
    let oldest = Number.POSITIVE_INFINITY;
    for (const mark of this.holds.keys()) oldest = Math.min(oldest, mark);
    for (const [key, entry] of this.ids) if (entry.commit <= oldest) this.ids.delete(key);
  }
}
