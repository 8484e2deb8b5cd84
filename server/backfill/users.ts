// The users of an organization that have stored events, in key order, read from the per-user event index `e!`
// with one seek per user in one iterator (never a scan of every event): what a sweep or an offline computation visits.

import type { Store } from '../store/contract.js';
import { scanPrefix } from '../store/layout.js';
import { prefixUpperBound, userEventPrefix } from '../domain/events/keys.js';

/** Up to `limit` users after `after` (exclusive; null = from the first), ascending. */
export async function listUsers(store: Store, org: string, after: string | null, limit: number): Promise<string[]> {
  const orgPrefix = scanPrefix('e', org);
  const userOf = (eventKey: string): string => {
    const rest = eventKey.slice(orgPrefix.length);
    return rest.slice(0, rest.indexOf('!'));
  };
  const gte = after === null ? orgPrefix : prefixUpperBound(userEventPrefix(org, after));
  const keys = await store.skipKeys({ gte, lt: prefixUpperBound(orgPrefix) }, (eventKey) => prefixUpperBound(userEventPrefix(org, userOf(eventKey))), limit);
  return keys.map(userOf);
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
