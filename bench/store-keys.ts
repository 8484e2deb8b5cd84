// What each key of an event costs LevelDB (issue 12 "fewest writes per event"): N events written in group batches
// of B as the store writes them (server/store/level.ts: msgpack values, one chained batch) with the previous layout,
// the current one and two candidates for a next step, timed, with what LevelDB's compactions wrote (`leveldb.stats`)
// and the directory's size. The candidates (not what the server writes): `no-time-index`, the current layout
// without `et!` (what a user whose events arrive in time order would need if arrival order served reads by time);
// `short-ids`, the current layout with the organization and user ids as short dictionary codes (a few characters)
// instead of two 36-character UUIDs in every key and in the record.
// Run: npm run build && node dist/bench/store-keys.js [events] [batch] [layout...] (default every layout; each twice,
// alternating)

import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ClassicLevel } from 'classic-level';
import type { BatchOp } from '../server/store/contract.js';
import { encodeValue, WRITE_BUFFER_BYTES } from '../server/store/level.js';
import { eventOps, partitionSeqOps } from '../server/domain/events/index.js';
import { clientIdKey, logKey, timeIndexKey, userEventKey } from '../server/domain/events/keys.js';
import { TrackBodies, userIdOf } from './workload/bodies.js';

const LAYOUTS = ['previous', 'current', 'no-time-index', 'short-ids'] as const;
type Layout = (typeof LAYOUTS)[number];

/** The previous layout: the log entry carried the whole record, written for every event, plus e!, et!, ei!. */
function previousOps(partition: number, seq: number, org: string, record: Record<string, unknown> & { user_id: string; id: string; timeMs: number }): BatchOp[] {
  const stored = { ...record, seq };
  return [
    { type: 'put', key: logKey(partition, seq), value: { kind: 'event', org, event: stored, transitions: [] } },
    { type: 'put', key: userEventKey(org, record.user_id, seq), value: stored },
    { type: 'put', key: timeIndexKey(org, record.user_id, record.timeMs, seq), value: seq },
    { type: 'put', key: clientIdKey(org, record.user_id, record.id), value: seq },
  ];
}

async function directoryBytes(dir: string): Promise<number> {
  let total = 0;
  for (const name of await readdir(dir)) total += (await stat(join(dir, name))).size;
  return total;
}

/** The MB LevelDB wrote in compactions (sum of the Write(MB) column of `leveldb.stats`). */
function compactionWriteMb(stats: string): number {
  let sum = 0;
  for (const line of stats.split('\n')) {
    const cells = line.trim().split(/\s+/);
    if (cells.length === 6 && /^\d+$/.test(cells[0] as string)) sum += Number(cells[5]);
  }
  return sum;
}

export async function runStoreKeysBench(layout: Layout, events: number, batch: number): Promise<Record<string, number | string>> {
  const dir = await mkdtemp(join(tmpdir(), `audience-store-keys-${layout}-`));
  // The memtable the server opens its store with (level.ts).
  const db = new ClassicLevel<string, Uint8Array>(dir, { keyEncoding: 'utf8', valueEncoding: 'view', writeBufferSize: WRITE_BUFFER_BYTES });
  await db.open();
  const org = randomUUID();
  const bodies = new TrackBodies(42, 100_000, 0);
  const partitions = 16;
  const seqs = new Array<number>(partitions).fill(0);
  const started = performance.now();
  let puts = 0;
  for (let written = 0; written < events; written += batch) {
    const ops: BatchOp[] = [];
    const touched = new Set<number>();
    for (let i = written; i < Math.min(events, written + batch); i++) {
      const user = userIdOf(42, (i * 7919) % 100_000);
      const body = JSON.parse(bodies.forUser(i % 100_000)) as { name: string; properties: Record<string, unknown> };
      const timeMs = Date.UTC(2026, 0, 1) + i * 10;
      const partition = i % partitions;
      const seq = ++(seqs[partition] as number);
      touched.add(partition);
      const shortIds = layout === 'short-ids';
      const userId = shortIds ? ((i * 7919) % 100_000).toString(36) : user;
      const record = { id: randomUUID(), user_id: userId, name: body.name, time: new Date(timeMs).toISOString(), timeMs, properties: body.properties };
      if (layout === 'previous') ops.push(...previousOps(partition, seq, org, record));
      else {
        const current = eventOps({ org: shortIds ? '1' : org, event: { ...record, seq } });
        ops.push(...(layout === 'no-time-index' ? current.filter((op) => !op.key.startsWith('et!')) : current));
      }
    }
    if (layout !== 'previous') for (const partition of touched) ops.push(...partitionSeqOps(partition, seqs[partition] as number));
    puts += ops.length;
    const chained = db.batch();
    for (const op of ops) if (op.type === 'put') chained.put(op.key, encodeValue(op.value));
    await chained.write();
  }
  const seconds = (performance.now() - started) / 1000;
  const stats = await db.getProperty('leveldb.stats');
  await db.close();
  const bytes = await directoryBytes(dir);
  await rm(dir, { recursive: true, force: true });
  return { layout, events, batch, seconds: Number(seconds.toFixed(2)), eventsPerSecond: Math.round(events / seconds), putsPerEvent: Number((puts / events).toFixed(2)), compactionWriteMb: compactionWriteMb(stats), dataDirMb: Number((bytes / 2 ** 20).toFixed(1)) };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const events = Number(process.argv[2] ?? '300000');
  const batch = Number(process.argv[3] ?? '25');
  const chosen = process.argv.slice(4) as Layout[];
  for (const layout of chosen) if (!LAYOUTS.includes(layout)) throw new Error(`unknown layout ${layout}; one of ${LAYOUTS.join(', ')}`);
  const layouts = chosen.length > 0 ? chosen : LAYOUTS;
  for (const layout of [...layouts, ...layouts]) {
    process.stdout.write(`${JSON.stringify(await runStoreKeysBench(layout, events, batch))}\n`);
  }
}
