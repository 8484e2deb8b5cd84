// A restart over LevelDB: identity, events (log, indexes, ids, snapshots) and schemas written through
// the domain areas are read back whole after the store is closed and reopened by fresh instances.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ServiceError } from '../../errors.js';
import { openLevelStore } from '../../store/level.js';
import { Identity } from '../identity/identity.js';
import { sequentialIds } from '../../../test/support/identity.js';
import { SchemaRegistry } from '../schemas/registry.js';
import { eventOps, partitionSeqOps, snapshotOps } from './ops.js';
import {
  findByClientId,
  lastSeq,
  readSnapshot,
  readUserEvents,
  replayUserEvents,
} from './read.js';
import { toWireRecord } from './record.js';
import { readTransitionLog } from '../reactions/log.js';
import { buildEventRecord, validateTrackBody } from './validate.js';
import { partitionOf } from './keys.js';

const ORG = 'a0000000-0000-4000-8000-0000000000f1';
const NOW = new Date('2026-11-20T12:00:00.000Z');
const PARTITIONS = 4;

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'audience-domain-'));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

describe('restart over LevelDB', () => {
  it('reads identity, events and schemas back after close and reopen', async () => {
    const store = await openLevelStore(dir);
    const identity = new Identity(store, { newId: sequentialIds(1) });
    const schemas = new SchemaRegistry(store);
    const eventIds = sequentialIds(2);
    const seqs = new Map<number, number>();

    const anonymous = await identity.createUser(ORG);
    await identity.identify(ORG, anonymous, [
      { id: 'a@x', tag: 'email', priority: 1 },
      { id: 'odd!%id', tag: 'crm', priority: 2 },
      { id: 'x', tag: '\u{1F600}', priority: 3 }, // above the BMP: sorts after '\uffff' in UTF-8 byte order
    ]);

    // The ingest path in miniature: validate, resolve, check the schema, one batch per event.
    const bodies = [
      { name: 'Pageview', user_id: anonymous, time: '2026-11-20T11:00:00Z', properties: { url: '/a', tags: [] } },
      { name: 'Pageview', aliases: [{ id: 'a@x', tag: 'email', priority: 0 }], time: '2026-11-20T10:00:00Z' },
      { name: 'Purchase', aliases: [{ id: 'new', tag: 'email', priority: 0 }], properties: { cart: { total: 3.5 } } },
      {
        name: 'Pageview',
        user_id: anonymous,
        time: '2026-11-20T10:00:00Z',
        id: 'e1000000-0000-4000-8000-000000000001',
        properties: { url: '/b', tags: ['x'], $document: { id: 'd' } },
      },
    ];
    const written = [];
    for (const body of bodies) {
      const input = validateTrackBody(body, NOW);
      const { userId } = await identity.resolveForTrack(ORG, input);
      const schemaOps = await schemas.check(ORG, input.name, input.properties);
      const record = buildEventRecord(input, userId, eventIds);
      const partition = partitionOf(ORG, userId, PARTITIONS);
      const seq = (seqs.get(partition) ?? 0) + 1;
      seqs.set(partition, seq);
      await store.batch([...eventOps({ org: ORG, event: { ...record, seq, timeMs: input.timeMs } }), ...partitionSeqOps(partition, seq), ...schemaOps]);
      written.push(record);
    }
    const home = partitionOf(ORG, anonymous, PARTITIONS);
    await store.batch(snapshotOps(ORG, anonymous, 2, { memberships: [1] }));
    const newcomer = written[2]?.user_id as string;
    await store.close();

    const reopened = await openLevelStore(dir);
    try {
      const fresh = new Identity(reopened, { newId: sequentialIds(3) });
      expect((await fresh.listAliases(ORG, anonymous)).map((view) => `${view.tag}:${view.id}`).sort()).toEqual([
        'crm:odd!%id',
        'email:a@x',
        '\u{1F600}:x',
      ]);
      expect(await fresh.findAliasUser(ORG, { tag: 'email', id: 'new' })).toBe(newcomer);
      expect(await fresh.identify(ORG, newcomer, [{ id: 'a@x', tag: 'email', priority: 1 }])).toBe(anonymous);

      const events = await readUserEvents(reopened, ORG, anonymous);
      expect(events.map(toWireRecord)).toEqual([written[1], written[3], written[0]]);
      expect((await collect(replayUserEvents(reopened, ORG, anonymous))).map((event) => event.id)).toEqual(
        [written[0], written[1], written[3]].map((record) => record?.id),
      );
      expect(await findByClientId(reopened, ORG, anonymous, 'e1000000-0000-4000-8000-000000000001')).toMatchObject({
        properties: { url: '/b', tags: ['x'], $document: { id: 'd' } },
      });
      expect(await lastSeq(reopened, home)).toBe(seqs.get(home));
      // No event here moved anyone: the transitions log is empty (server/store/layout.ts), the sequence is kept apart.
      expect(await collect(readTransitionLog(reopened))).toEqual([]);
      expect(await readSnapshot(reopened, ORG, anonymous)).toEqual({ seq: 2, state: { memberships: [1] } });

      const registry = new SchemaRegistry(reopened);
      expect(await registry.get(ORG, 'Pageview')).toEqual({
        properties: {
          url: { type: 'string' },
          tags: { type: 'list', items: { type: 'string' } },
          $document: { type: 'object', properties: { id: { type: 'string' } } },
        },
      });
      const mismatch = await Promise.resolve(registry.check(ORG, 'Purchase', { cart: { total: 'x' } })).catch((error: unknown) => error);
      expect(mismatch).toBeInstanceOf(ServiceError);
      expect((mismatch as ServiceError).code).toBe(1007);
    } finally {
      await reopened.close();
    }
  });
});
