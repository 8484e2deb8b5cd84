// scanUsers (a sweep's batches listed by reading the users' events) lists what listUsers lists, batch by batch, and
// gives each user's whole history as a read of that user alone answers it, except for users too long for a tick.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { BatchOp, Store } from '../store/contract.js';
import { pushEventOps, pushEventRunOps } from '../domain/events/ops.js';
import type { StoredEvent } from '../domain/events/record.js';
import { decodeValues } from '../store/values.js';
import { STORE_KINDS, openTestStore } from '../../test/support/stores.js';
import { readHistoryChunk } from '../ingest/state/load.js';
import { listUsers, scanUsers, type ScanBounds } from './users.js';

const ORG = 'a0000000-0000-4000-8000-0000000000d1';
const OTHER_ORG = 'a0000000-0000-4000-8000-0000000000d2';
const USERS = Array.from({ length: 9 }, (_, i) => `b0000000-0000-4000-8000-0000000000d${i}`);
const T0 = Date.parse('2026-11-20T12:00:00.000Z');
/** Histories of this many stored values or more are left to the tick. */
const HISTORY_LIMIT = 30;

function record(user: string, n: number, seq: number): StoredEvent {
  const timeMs = T0 + n * 1000;
  return { id: `${user.slice(-2)}-${n}`, user_id: user, name: 'Pageview', time: new Date(timeMs).toISOString(), timeMs, properties: { n }, seq };
}

/**
 * User i gets 3 * i events, in appends of one (a single record) and of four (a block), their sequences interleaved
 * as a partition's are; the third user gets 40 single records (too long for a tick); the other organization's users
 * get events under the same user ids.
 */
async function seed(store: Store): Promise<void> {
  let seq = 0;
  for (let round = 0; round < 40; round++) {
    const ops: BatchOp[] = [];
    for (const [i, user] of USERS.entries()) {
      const wanted = i === 2 ? 40 : 3 * i;
      const from = i === 2 ? round : round * 2;
      if (from >= wanted) continue;
      const run = Array.from({ length: i === 2 || round % 2 === 0 ? 1 : Math.min(4, wanted - from) }, (_, k) => record(user, from + k, ++seq));
      if (run.length === 1) pushEventOps(ops, ORG, run[0] as StoredEvent);
      else pushEventRunOps(ops, ORG, run);
      pushEventOps(ops, OTHER_ORG, record(user, from, ++seq));
    }
    if (ops.length > 0) await store.batch(ops);
  }
}

/** Every batch of `limit` from the start, as a sweep takes them. */
async function scanAll(store: Store, limit: number, bounds?: ScanBounds): Promise<Awaited<ReturnType<typeof scanUsers>>[]> {
  const batches: Awaited<ReturnType<typeof scanUsers>>[] = [];
  let after: string | null = null;
  for (let i = 0; i < 100; i++) {
    const batch = await scanUsers(store, ORG, after, limit, HISTORY_LIMIT, bounds);
    if (batch.users.length === 0) return batches;
    expect(batch.users.length).toBeLessThanOrEqual(limit);
    batches.push(batch);
    after = batch.users[batch.users.length - 1] as string;
  }
  throw new Error('the scan did not end');
}

for (const kind of STORE_KINDS) {
  describe(`scanUsers on the ${kind} store`, () => {
    let store: Store;
    let cleanup: () => Promise<void>;
    beforeEach(async () => {
      ({ store, cleanup } = await openTestStore(kind, 'audience-scan-users-'));
      await seed(store);
    });
    afterEach(async () => cleanup());

    for (const [name, limit, bounds] of [
      ['batches of 2', 2, undefined],
      ['batches of 4', 4, undefined],
      ['all at once', 100, undefined],
      ['batches cut short by a bound on values', 100, { values: 5, bytes: 1e9 }],
      ['batches cut short by a bound on bytes', 100, { values: 1e9, bytes: 1 }],
    ] as const) {
      it(`lists every user once with its whole history (${name})`, async () => {
        const batches = await scanAll(store, limit, bounds);
        const listed = batches.flatMap((batch) => batch.users);
        // The first user has no events.
        expect(listed).toEqual(await listUsers(store, ORG, null, 100));
        expect(listed).toEqual(USERS.slice(1));
        if (bounds !== undefined) expect(batches.length).toBeGreaterThan(1);
        for (const batch of batches) {
          for (const user of batch.users) {
            const history = batch.histories.get(user);
            if (user === USERS[2]) {
              expect(history).toBeUndefined();
              continue;
            }
            const alone = await readHistoryChunk(store, ORG, user, 0, HISTORY_LIMIT);
            expect(history?.done).toBe(true);
            expect(history?.lastSeq).toBe(alone.lastSeq);
            expect(history?.events.count).toBe(alone.events.count);
            expect(decodeValues<StoredEvent>((history as NonNullable<typeof history>).events.bytes)).toEqual(decodeValues<StoredEvent>(alone.events.bytes));
          }
          expect([...batch.histories.keys()].every((user) => batch.users.includes(user))).toBe(true);
        }
      });
    }

    it('continues after a cursor as listUsers does', async () => {
      for (const after of USERS) {
        const batch = await scanUsers(store, ORG, after, 3, HISTORY_LIMIT);
        expect(batch.users).toEqual(await listUsers(store, ORG, after, 3));
      }
    });
  });
}
