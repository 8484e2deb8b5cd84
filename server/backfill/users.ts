// The users of an organization that have stored events, in key order, read from the per-user event index `e!`:
// by one iterator over their keys (Store.skipKeys: a few hundred keys a read, a seek past a user with many; never
// the events themselves), what an offline computation visits and a new sweep counts; or by reading their events, a
// batch at a time, what a sweep visits (scanUsers).

import type { Store } from '../store/contract.js';
import { scanPrefix } from '../store/layout.js';
import { prefixUpperBound, userEventPrefix } from '../domain/events/keys.js';
import { historyChunkOf, type HistoryChunk } from '../ingest/state/load.js';

/** Up to `limit` users after `after` (exclusive; null = from the first), ascending. */
export async function listUsers(store: Store, org: string, after: string | null, limit: number): Promise<string[]> {
  const orgPrefix = scanPrefix('e', org);
  const userOf = (eventKey: string): string => userOfEventKey(orgPrefix, eventKey);
  const gte = after === null ? orgPrefix : prefixUpperBound(userEventPrefix(org, after));
  const keys = await store.skipKeys({ gte, lt: prefixUpperBound(orgPrefix) }, (eventKey) => prefixUpperBound(userEventPrefix(org, userOf(eventKey))), limit);
  return keys.map(userOf);
}

/** The user of an `e!` key of the organization whose scan prefix (`e!{org}!`) is `orgPrefix`. */
function userOfEventKey(orgPrefix: string, eventKey: string): string {
  return eventKey.slice(orgPrefix.length, eventKey.indexOf('!', orgPrefix.length));
}

/** How many users of the organization have stored events. */
export async function countUsers(store: Store, org: string): Promise<number> {
  let count = 0;
  let after: string | null = null;
  for (;;) {
    const users = await listUsers(store, org, after, 1000);
    count += users.length;
    if (users.length < 1000) return count;
    after = users[users.length - 1] as string;
  }
}

/** A sweep's next users, listed by reading their events, with the histories read on the way (scanUsers). */
export interface UserBatch {
  /** Up to the limit, ascending, after the cursor given. */
  readonly users: string[];
  /**
   * A listed user's whole history as `readHistoryChunk(store, org, user, 0, limit)` answers it; absent for a user
   * whose stored values reached `limit` (it cannot be replayed in a tick: it is parked and read in chunks) or were
   * cut by the batch's bounds.
   */
  readonly histories: Map<string, HistoryChunk>;
}

/** What one scan reads at most besides the histories it gives up on: stored values and their bytes. */
export interface ScanBounds {
  readonly values: number;
  readonly bytes: number;
}

const SCAN_BOUNDS: ScanBounds = { values: 32_768, bytes: 16 * 1024 * 1024 };
/** Stored values read per range read. */
const SCAN_READ = 4_096;

/**
 * Up to `limit` users after `after` (as listUsers) listed by reading their stored values in key order, a few
 * thousand per range read, instead of a seek per user: a sweep replays each history anyway, so it reads them on the
 * way. A user with `historyLimit` stored values or more is passed with a seek (its history is left to its tick), and
 * the scan ends early, at a user's end, once the batch holds `bounds` of values or bytes.
 */
export async function scanUsers(store: Store, org: string, after: string | null, limit: number, historyLimit: number, bounds: ScanBounds = SCAN_BOUNDS): Promise<UserBatch> {
  const orgPrefix = scanPrefix('e', org);
  const end = prefixUpperBound(orgPrefix);
  const users: string[] = [];
  const histories = new Map<string, HistoryChunk>();
  type Range = { readonly gte: string } | { readonly gt: string };
  let range: Range = { gte: after === null ? orgPrefix : prefixUpperBound(userEventPrefix(org, after)) };
  let user: string | undefined;
  let values: Array<readonly [string, Uint8Array]> = [];
  let whole = true;
  let valuesRead = 0;
  let bytesRead = 0;
  const finish = (): void => {
    if (user === undefined) return;
    users.push(user);
    if (whole) histories.set(user, historyChunkOf(values, 0, historyLimit));
    user = undefined;
    values = [];
    whole = true;
  };
  for (;;) {
    const entries = await store.encodedEntries({ ...range, lt: end, limit: SCAN_READ });
    if (entries.length === 0) break;
    let next: Range = { gt: (entries[entries.length - 1] as readonly [string, Uint8Array])[0] };
    for (const entry of entries) {
      const [key, bytes] = entry;
      const owner = userOfEventKey(orgPrefix, key);
      if (owner !== user) {
        finish();
        // The next batch starts at this user.
        if (users.length >= limit || valuesRead >= bounds.values || bytesRead >= bounds.bytes) return { users, histories };
        user = owner;
      }
      values.push(entry);
      valuesRead++;
      bytesRead += bytes.byteLength;
      if (values.length >= historyLimit) {
        // Too long to replay in a tick: listed without its history, the rest of its values passed with a seek.
        whole = false;
        next = { gte: prefixUpperBound(userEventPrefix(org, owner)) };
        break;
      }
    }
    range = next;
  }
  finish();
  return { users, histories };
}
