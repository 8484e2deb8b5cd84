// What each key of an event costs LevelDB (issue 12 "fewest writes per event"): N events written in group batches
// of B as the store writes them (server/store/level.ts: msgpack values, one chained batch) with the previous
// layout, the current one and two candidates for a next step, timed, with what LevelDB's compactions wrote
// (`leveldb.stats`) and the directory's size. `current` writes each event as one with a client's id (`ei!`
// included); `no-id-index` as one with an id the server minted, which carries its event's time and needs no `ei!`
// (what the server writes for such events since 2026-11-29, server/domain/events/event-id.ts). The candidates (not
// what the server writes): `no-time-index`, the current layout without `et!` (what a user whose events arrive in
// time order would need if arrival order served reads by time); `short-ids`, the current layout with the
// organization and user ids as short dictionary codes (a few characters) instead of two 36-character UUIDs in every
// key and in the record. And the live audience size
// counters (D19) a batch writes besides its events, 2.2 changed counters per event over 100 cohorts and 16
// partitions (two, and a third every fifth event: this model's choice): `counter-keys`, the current layout plus a
// key per changed counter (as until 2026-11-27); `counter-journal`, plus what server/ingest/tick/sizes.ts writes
// now (one journal entry per batch, folded into the counters' keys every 1,024 entries). And the global transitions
// log (`t!`, server/ingest/tick/commit-log.ts) beside the current layout, 0.9 entries of five transitions per event:
// `log-entries`, a key per entry as a map with named fields (as the pipeline wrote it until 2026-11-28); `log-compact`,
// a key per entry in its stored form (server/domain/reactions/log.ts); `log-grouped`, a batch's entries (as maps) in
// one value; for the first two, `logBytesPerEntry` is an entry's stored bytes. And `stateless-runs`: what the
// stateless route publishes (D24), each call's 10 events of one user appended at once, so stored as a block
// (server/domain/events/blocks.ts) with a time-index key each and ids the server minted (no `ei!`), the compact log
// entries beside them (run it with the route's publication groups as the batch, e.g. 770). Each line also gives the
// process's CPU seconds (LevelDB's threads included).
// Run: npm run build && node dist/bench/store-keys.js [events] [batch] [layout...] (default every layout; each twice,
// alternating)

import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ClassicLevel } from 'classic-level';
import type { BatchOp } from '../server/store/contract.js';
import { encodeValue, LEVEL_OPTIONS } from '../server/store/level.js';
import { eventOps, mintEventId, partitionSeqOps, pushEventRunOps, type StoredEvent } from '../server/domain/events/index.js';
import { clientIdKey, logKey, timeIndexKey, userEventKey } from '../server/domain/events/keys.js';
import { TrackBodies, userIdOf } from './workload/bodies.js';
import { sizeKey } from '../server/ingest/keys.js';
import { AudienceSizes, PendingCounts, SizeDeltas } from '../server/ingest/tick/sizes.js';
import { reactionsKeys, type TransitionLogEntry } from '../server/domain/reactions/contract.js';
import { storedLogEntry } from '../server/domain/reactions/log.js';

/** The counters the `i`th event changes (cohort codes of 100, its partition's): two, and a third every fifth event. */
function countersOf(i: number): number[] {
  const codes = [(i * 31) % 100, (i * 17 + 7) % 100];
  if (i % 5 === 0) codes.push((i * 13 + 3) % 100);
  return codes;
}

const LAYOUTS = ['previous', 'current', 'no-time-index', 'no-id-index', 'short-ids', 'counter-keys', 'counter-journal', 'log-entries', 'log-compact', 'log-grouped', 'stateless-runs'] as const;
/** Events of one stateless call (bench/workload/bodies.ts StatelessBodies), published as one append. */
const STATELESS_RUN = 10;
type Layout = (typeof LAYOUTS)[number];

/**
 * The transitions log entry of the `i`th event (server/ingest/tick/commit-log.ts), or none: in the pipeline bench's
 * steady state (`bench/pipeline.ts`, 30,000 users) 0.9 entries per event of ~330 B, so nine events of ten here, each
 * with five transitions.
 */
function logEntryOf(i: number, org: string, user: string, eventId: string, timeMs: number): TransitionLogEntry | undefined {
  if (i % 10 === 9) return undefined;
  const transitions = Array.from({ length: 5 }, (_, k) => ({ cohort: (i * 7 + k * 13) % 100, kind: (i + k) % 2 === 0 ? ('entered' as const) : ('exited' as const), time: timeMs }));
  return { org, user, event_id: eventId, transitions, at: timeMs };
}

/**
 * The stored bytes of a log entry in the layouts that write one per key (the value as `level.ts` encodes it), over
 * the entries of the first `events` events, measured after the timed writes (so their cost is not in the timing).
 */
function logBytesOf(layout: Layout, org: string, events: number): { logBytesPerEntry?: number } {
  if (layout !== 'log-entries' && layout !== 'log-compact') return {};
  let entries = 0;
  let bytes = 0;
  for (let i = 0; i < events; i++) {
    const entry = logEntryOf(i, org, userIdOf(42, (i * 7919) % 100_000), randomUUID(), Date.UTC(2026, 0, 1) + i * 10);
    if (entry === undefined) continue;
    entries++;
    bytes += encodeValue(layout === 'log-entries' ? entry : storedLogEntry(entry)).byteLength;
  }
  return entries === 0 ? {} : { logBytesPerEntry: Math.round(bytes / entries) };
}

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
  // LevelDB as the server opens its store (level.ts: memtables, compression).
  const db = new ClassicLevel<string, Uint8Array>(dir, LEVEL_OPTIONS);
  await db.open();
  const org = randomUUID();
  const bodies = new TrackBodies(42, 100_000, 0);
  const partitions = 16;
  const seqs = new Array<number>(partitions).fill(0);
  const sizes = new AudienceSizes();
  const counts = new Map<string, number>();
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  let puts = 0;
  let cursor = 0;
  for (let written = 0; written < events; written += batch) {
    const ops: BatchOp[] = [];
    const touched = new Set<number>();
    const deltas = new Map<number, SizeDeltas>();
    const entries: TransitionLogEntry[] = [];
    // stateless-runs: the current call's events, appended as one run once it has its 10 (or at the batch's end).
    const runs = layout === 'stateless-runs';
    let run: StoredEvent[] = [];
    for (let i = written; i < Math.min(events, written + batch); i++) {
      // The unit a user and a partition are drawn for: the event, or a stateless call's run of events.
      const unit = runs ? Math.floor(i / STATELESS_RUN) : i;
      const user = userIdOf(42, (unit * 7919) % 100_000);
      const body = JSON.parse(bodies.forUser(i % 100_000)) as { name: string; properties: Record<string, unknown> };
      const timeMs = Date.UTC(2026, 0, 1) + i * 10;
      const partition = unit % partitions;
      const seq = ++(seqs[partition] as number);
      touched.add(partition);
      const shortIds = layout === 'short-ids';
      const userId = shortIds ? ((i * 7919) % 100_000).toString(36) : user;
      const record = { id: runs ? mintEventId(timeMs, randomUUID()) : randomUUID(), user_id: userId, name: body.name, time: new Date(timeMs).toISOString(), timeMs, properties: body.properties };
      if (runs) {
        run.push({ ...record, seq });
        if (run.length === STATELESS_RUN) {
          pushEventRunOps(ops, org, run);
          run = [];
        }
      } else if (layout === 'previous') ops.push(...previousOps(partition, seq, org, record));
      else {
        const current = eventOps({ org: shortIds ? '1' : org, event: { ...record, seq } });
        ops.push(...(layout === 'no-time-index' ? current.filter((op) => !op.key.startsWith('et!')) : layout === 'no-id-index' ? current.filter((op) => !op.key.startsWith('ei!')) : current));
      }
      if (layout === 'log-entries' || layout === 'log-compact' || layout === 'log-grouped' || runs) {
        const entry = logEntryOf(i, org, user, record.id, timeMs);
        if (entry !== undefined) entries.push(entry);
      }
      if (layout === 'counter-keys' || layout === 'counter-journal') {
        let changes = deltas.get(partition);
        if (changes === undefined) deltas.set(partition, (changes = new SizeDeltas()));
        for (const code of countersOf(i)) changes.add(org, code, 1, i % 3 === 0 ? -1 : 1);
      }
    }
    if (run.length > 0) pushEventRunOps(ops, org, run);
    if (layout === 'counter-keys') {
      // A key per changed counter, [generation, count], as AudienceSizes.opsFor wrote them.
      for (const [partition, changes] of deltas) {
        for (const { code, gen, delta } of changes.deltas) {
          const at = `${code}/${partition}`;
          const count = (counts.get(at) ?? 0) + delta;
          counts.set(at, count);
          ops.push({ type: 'put', key: sizeKey(org, code, partition), value: [gen, count] });
        }
      }
    }
    // A key per entry (what the pipeline writes), or the batch's entries as one value under its first cursor.
    if (layout === 'log-entries') for (const entry of entries) ops.push({ type: 'put', key: reactionsKeys.logEntry(++cursor), value: entry });
    if (layout === 'log-compact' || layout === 'stateless-runs') for (const entry of entries) ops.push({ type: 'put', key: reactionsKeys.logEntry(++cursor), value: storedLogEntry(entry) });
    if (layout === 'log-grouped' && entries.length > 0) {
      ops.push({ type: 'put', key: reactionsKeys.logEntry(cursor + 1), value: entries });
      cursor += entries.length;
    }
    if (entries.length > 0) ops.push({ type: 'put', key: reactionsKeys.logCursor(), value: cursor });
    let committed = (): void => undefined;
    if (layout === 'counter-journal') {
      const pending = new PendingCounts();
      for (const [partition, changes] of deltas) sizes.count(partition, changes, pending);
      const counterWrites = sizes.batchOps(pending);
      ops.push(...counterWrites.ops);
      committed = () => {
        counterWrites.written();
        for (const [partition, changes] of deltas) sizes.apply(partition, changes);
      };
    }
    if (layout !== 'previous') for (const partition of touched) ops.push(...partitionSeqOps(partition, seqs[partition] as number));
    puts += ops.length;
    const chained = db.batch();
    for (const op of ops) {
      if (op.type === 'put') chained.put(op.key, encodeValue(op.value));
      else chained.del(op.key);
    }
    await chained.write();
    committed();
  }
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  const stats = await db.getProperty('leveldb.stats');
  await db.close();
  const bytes = await directoryBytes(dir);
  await rm(dir, { recursive: true, force: true });
  return { layout, events, batch, seconds: Number(seconds.toFixed(2)), eventsPerSecond: Math.round(events / seconds), putsPerEvent: Number((puts / events).toFixed(2)), cpuSeconds: Number(((cpu.user + cpu.system) / 1e6).toFixed(2)), compactionWriteMb: compactionWriteMb(stats), dataDirMb: Number((bytes / 2 ** 20).toFixed(1)), ...logBytesOf(layout, org, Math.min(events, 10_000)) };
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
