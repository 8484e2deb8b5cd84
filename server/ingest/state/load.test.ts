// readHistories (a sweep's batch read in one range) answers, for each user it answers, what readHistoryChunk answers
// for that user alone; it leaves out users it was not asked for and the user its value bound may have cut.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MemoryStore } from '../../store/memory.js';
import { openLevelStore } from '../../store/level.js';
import type { BatchOp, Store } from '../../store/contract.js';
import { pushEventOps, pushEventRunOps } from '../../domain/events/ops.js';
import type { StoredEvent } from '../../domain/events/record.js';
import { decodeValues } from '../../store/values.js';
import { tempDir } from '../../../test/support/processes.js';
import { readHistories, readHistoryChunk } from './load.js';

const ORG = 'a0000000-0000-4000-8000-0000000000d1';
const OTHER_ORG = 'a0000000-0000-4000-8000-0000000000d2';
const USERS = Array.from({ length: 6 }, (_, i) => `b0000000-0000-4000-8000-0000000000d${i}`);
const T0 = Date.parse('2026-11-20T12:00:00.000Z');

function record(user: string, n: number, seq: number): StoredEvent {
  const timeMs = T0 + n * 1000;
  return { id: `${user.slice(-2)}-${n}`, user_id: user, name: 'Pageview', time: new Date(timeMs).toISOString(), timeMs, properties: { n }, seq };
}

/**
 * User i gets 3 * i events (the first none), stored as single records and as blocks of appends of 4, their sequences
 * interleaved as a partition's are; the other organization's users get events under the same user ids.
 */
async function seed(store: Store): Promise<void> {
  let seq = 0;
  for (let round = 0; round < 20; round++) {
    const ops: BatchOp[] = [];
    for (const [i, user] of USERS.entries()) {
      const wanted = 3 * i;
      const from = round * 2;
      if (from >= wanted) continue;
      const run = Array.from({ length: Math.min(round % 2 === 0 ? 1 : 4, wanted - from) }, (_, k) => record(user, from + k, ++seq));
      if (run.length === 1) pushEventOps(ops, ORG, run[0] as StoredEvent);
      else pushEventRunOps(ops, ORG, run);
      pushEventOps(ops, OTHER_ORG, record(user, from, ++seq));
    }
    if (ops.length > 0) await store.batch(ops);
  }
}

for (const kind of ['memory', 'LevelDB'] as const) {
  describe(`readHistories on the ${kind} store`, () => {
    let store: Store;
    let cleanup: () => Promise<void>;
    beforeEach(async () => {
      if (kind === 'memory') {
        store = new MemoryStore();
        cleanup = async () => undefined;
      } else {
        const dir = await tempDir('audience-histories-');
        store = await openLevelStore(dir.path);
        cleanup = async () => {
          await store.close();
          await dir.remove();
        };
      }
      await seed(store);
    });
    afterEach(async () => cleanup());

    it('answers each user what a read of that user alone answers, with and without a cut', async () => {
      for (const limit of [2, 6, 100]) {
        const chunks = await readHistories(store, ORG, USERS, limit, 10_000);
        // The first user has no events: nothing to answer for it.
        expect([...chunks.keys()]).toEqual(USERS.slice(1));
        for (const [user, chunk] of chunks) {
          const alone = await readHistoryChunk(store, ORG, user, 0, limit);
          expect(chunk.lastSeq).toBe(alone.lastSeq);
          expect(chunk.done).toBe(alone.done);
          expect(chunk.events.count).toBe(alone.events.count);
          expect(decodeValues<StoredEvent>(chunk.events.bytes)).toEqual(decodeValues<StoredEvent>(alone.events.bytes));
        }
      }
    });

    it('leaves out the users it was not asked for and the last one a bound on values stopped at', async () => {
      const asked = [USERS[1], USERS[3], USERS[5]] as string[];
      expect([...(await readHistories(store, ORG, asked, 100, 10_000)).keys()]).toEqual(asked);
      // Users 1..5 hold 3, 6, 9, 12, 15 events in fewer values (blocks of 4): a bound inside user 3's values.
      const values = async (user: string) => (await store.encodedValues({ gte: `e!${ORG}!${user}!`, lt: `e!${ORG}!${user}"` })).length;
      const bound = (await values(USERS[1] as string)) + (await values(USERS[2] as string)) + 1;
      const cut = await readHistories(store, ORG, USERS, 100, bound);
      expect([...cut.keys()]).toEqual([USERS[1], USERS[2]]);
      // A bound at the end of a user's values still leaves it out: the read cannot tell that it ended there.
      const exact = await readHistories(store, ORG, USERS, 100, bound - 1);
      expect([...exact.keys()]).toEqual([USERS[1]]);
    });
  });
}
