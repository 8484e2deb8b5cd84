// A cohort's last day minute by minute (the dashboard's charts, issue 16): live entries and exits per minute, and its
// size at the end of each minute. Fed by the committed transitions log (`t!`, D38) in commit order: at startup from
// the stored log, then live from pipeline.onCommitted. Buckets are by commit time (`at`), so a backdated event counts
// when it changed the audience. Sizes are exact from the current size backwards: size at the end of minute m = size
// now − the net change (entries − exits, replayed catch-ups included: they move the size too) committed after m.
// Codes are never reused (D17), so a deleted cohort's buckets just age out. A disable empties a cohort without
// transitions: sizes before it read as 0 (never negative). Memory: at most `minutes` buckets per cohort that changed
// in the window. Pure: no clock, no store.

import type { TransitionLogEntry } from '../reactions/contract.js';

const MINUTE = 60_000;

interface Bucket {
  minute: number;
  entered: number;
  exited: number;
  /** entries − exits, replays included. */
  net: number;
}

export interface SeriesPoint {
  /** ISO start of the minute. */
  readonly time: string;
  readonly size: number;
  readonly entered: number;
  readonly exited: number;
}

export class CohortSeries {
  /**
   * Organization → cohort code → buckets in ascending minute order (a ring trimmed to the window on write). By
   * number below the organization: a committed transition looks its cohort up without building a key string.
   */
  private readonly byOrg = new Map<string, Map<number, Bucket[]>>();

  constructor(private readonly minutes = 1440) {}

  /** One committed log entry (in commit order; entries from the startup read may interleave: counts add up). */
  add(entry: TransitionLogEntry): void {
    const minute = Math.floor(entry.at / MINUTE);
    let byCode = this.byOrg.get(entry.org);
    if (byCode === undefined) this.byOrg.set(entry.org, (byCode = new Map()));
    for (const t of entry.transitions) {
      let buckets = byCode.get(t.cohort);
      if (buckets === undefined) byCode.set(t.cohort, (buckets = []));
      let bucket = findBucket(buckets, minute);
      if (bucket === undefined) {
        bucket = { minute, entered: 0, exited: 0, net: 0 };
        insertSorted(buckets, bucket);
        while (buckets.length > 0 && (buckets[0] as Bucket).minute <= minute - this.minutes) buckets.shift();
      }
      const delta = t.kind === 'entered' ? 1 : -1;
      bucket.net += delta;
      if (entry.replay !== true) {
        if (delta > 0) bucket.entered += 1;
        else bucket.exited += 1;
      }
    }
  }

  /** The last `minutes` minutes up to the one holding `now`, oldest first; `sizeNow` is the cohort's size now. */
  read(org: string, code: number, now: number, sizeNow: number): SeriesPoint[] {
    const last = Math.floor(now / MINUTE);
    const first = last - this.minutes + 1;
    const buckets = this.byOrg.get(org)?.get(code) ?? [];
    const points: SeriesPoint[] = new Array(this.minutes);
    let size = sizeNow;
    let b = buckets.length - 1;
    // Changes committed after `now` (a clock step) are not shown but still undo into the sizes.
    while (b >= 0 && (buckets[b] as Bucket).minute > last) size -= (buckets[b--] as Bucket).net;
    for (let minute = last; minute >= first; minute--) {
      const bucket = b >= 0 && (buckets[b] as Bucket).minute === minute ? (buckets[b--] as Bucket) : undefined;
      points[minute - first] = { time: new Date(minute * MINUTE).toISOString(), size: Math.max(0, size), entered: bucket?.entered ?? 0, exited: bucket?.exited ?? 0 };
      if (bucket !== undefined) size -= bucket.net;
    }
    return points;
  }
}

function findBucket(buckets: Bucket[], minute: number): Bucket | undefined {
  for (let i = buckets.length - 1; i >= 0; i--) {
    const bucket = buckets[i] as Bucket;
    if (bucket.minute === minute) return bucket;
    if (bucket.minute < minute) return undefined;
  }
  return undefined;
}

function insertSorted(buckets: Bucket[], bucket: Bucket): void {
  let i = buckets.length;
  while (i > 0 && (buckets[i - 1] as Bucket).minute > bucket.minute) i--;
  buckets.splice(i, 0, bucket);
}
