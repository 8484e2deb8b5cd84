// Memberships of users in imported segments (D27): applying an add/remove diff idempotently, and removing every
// member of a deleted segment. Keys: mb (user -> segment, read by the engine) and ms (segment -> user, for deletes).

import type { BatchOp, Store } from '../../store/contract.js';
import { prefixEnd } from '../../store/contract.js';
import { fromKeyPart } from '../../store/layout.js';
import { membershipKey, segmentMemberCountKey, segmentMemberKey, segmentMembersScan } from './keys.js';
import type { ImportRecord, MembersResult, StoredMembership } from './types.js';

/** Keys deleted per batch when a segment's members are removed. */
const REMOVE_CHUNK = 1000;

/**
 * The writes that make the new members (current ∪ add) \ remove: a user in both lists ends up removed. Counts
 * report actual changes, so adding a member twice changes nothing. The caller commits the ops in one batch with
 * the request's alias bindings (D41). Call under the import's lock.
 */
export async function planMembers(
  store: Store,
  imported: ImportRecord,
  segmentCode: string,
  add: readonly string[],
  remove: readonly string[],
): Promise<{ ops: BatchOp[]; result: MembersResult }> {
  const org = imported.organization_id;
  const removing = new Set(remove);
  const users = [...new Set([...add, ...remove])];
  const current = await store.getMany<StoredMembership>(users.map((user) => membershipKey(org, user, imported.id, segmentCode)));
  const value: StoredMembership = { relation: imported.relation, provider: imported.code, segment: segmentCode };
  const ops: BatchOp[] = [];
  const affectedUsers: string[] = [];
  let added = 0;
  let removed = 0;
  users.forEach((user, index) => {
    const wasMember = current[index] !== undefined;
    const isMember = !removing.has(user);
    if (wasMember === isMember) return;
    const keys = [membershipKey(org, user, imported.id, segmentCode), segmentMemberKey(imported.id, segmentCode, user)];
    if (isMember) {
      ops.push({ type: 'put', key: keys[0] as string, value }, { type: 'put', key: keys[1] as string, value: 1 });
      added += 1;
    } else {
      ops.push({ type: 'del', key: keys[0] as string }, { type: 'del', key: keys[1] as string });
      removed += 1;
    }
    affectedUsers.push(user);
  });
  if (added !== removed) {
    const before = await memberCount(store, imported.id, segmentCode);
    ops.push({ type: 'put', key: segmentMemberCountKey(imported.id, segmentCode), value: before + added - removed });
  }
  return { ops, result: { added, removed, affectedUsers } };
}

/** How many users a segment holds: its counter, or (a store from before the counter) its members counted once. */
export async function memberCount(store: Store, importId: string, segmentCode: string): Promise<number> {
  const kept = await store.get<number>(segmentMemberCountKey(importId, segmentCode));
  if (typeof kept === 'number') return kept;
  const prefix = segmentMembersScan(importId, segmentCode);
  let n = 0;
  for await (const _ of store.iterate({ gte: prefix, lt: prefixEnd(prefix) })) n++;
  return n;
}

/**
 * Deletes every membership of a segment, in chunks (a large segment does not become one huge batch), and answers
 * the users that were members. Runs before the segment record is deleted, so that an interrupted delete leaves the
 * segment in place to be deleted again, never orphan members a segment re-created with the same code would inherit.
 */
export async function removeSegmentMembers(store: Store, org: string, importId: string, segmentCode: string): Promise<string[]> {
  const prefix = segmentMembersScan(importId, segmentCode);
  const users: string[] = [];
  for (;;) {
    const chunk: string[] = [];
    for await (const [key] of store.iterate({ gte: prefix, lt: prefixEnd(prefix), limit: REMOVE_CHUNK })) {
      chunk.push(fromKeyPart(key.slice(prefix.length)));
    }
    if (chunk.length === 0) {
      await store.batch([{ type: 'del', key: segmentMemberCountKey(importId, segmentCode) }]);
      return users;
    }
    await store.batch(
      chunk.flatMap((user): BatchOp[] => [
        { type: 'del', key: membershipKey(org, user, importId, segmentCode) },
        { type: 'del', key: segmentMemberKey(importId, segmentCode, user) },
      ]),
    );
    users.push(...chunk);
  }
}
