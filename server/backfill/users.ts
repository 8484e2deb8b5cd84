// The users of an organization that have stored events, in key order, read from the per-user event index `e!`
// with one seek per user (never a scan of every event): what a sweep or an offline computation visits.

import type { Store } from '../store/contract.js';
import { scanPrefix } from '../store/layout.js';
import { prefixUpperBound, userEventPrefix } from '../domain/events/keys.js';

/** Up to `limit` users after `after` (exclusive; null = from the first), ascending. */
export async function listUsers(store: Store, org: string, after: string | null, limit: number): Promise<string[]> {
  const orgPrefix = scanPrefix('e', org);
  const end = prefixUpperBound(orgPrefix);
  const users: string[] = [];
  let from = after === null ? orgPrefix : prefixUpperBound(userEventPrefix(org, after));
  while (users.length < limit) {
    let found: string | undefined;
    for await (const [eventKey] of store.iterate({ gte: from, lt: end, limit: 1 })) found = eventKey;
    if (found === undefined) break;
    const rest = found.slice(orgPrefix.length);
    const user = rest.slice(0, rest.indexOf('!'));
    users.push(user);
    from = prefixUpperBound(userEventPrefix(org, user));
  }
  return users;
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
