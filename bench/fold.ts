// What folding single event records into blocks costs (server/domain/events/fold.ts, server/ingest/fold.ts): a user's
// records written one value per event (as the track route stores them), then folded as the folder folds them, in
// store batches of 32 users, timed: CPU per folded event over all the process's threads and on the main thread
// (LevelDB's later compaction of the rewritten bytes is not in it). Not part of `npm run bench`. JSON to stdout.
// Run: npm run build && node dist/bench/fold.js [--users 2000] [--events 32] [--runs 3]

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { foldOps } from '../server/domain/events/fold.js';
import { pushEventOps } from '../server/domain/events/ops.js';
import type { StoredEvent } from '../server/domain/events/record.js';
import type { BatchOp } from '../server/store/contract.js';
import { openLevelStore } from '../server/store/level.js';
import { threadCpuTicks, waitForIdle } from './processes.js';

export interface FoldBenchOptions {
  readonly users: number;
  /** Single records per user, folded at once (the folder's window: `--fold-every`). */
  readonly events: number;
  readonly runs: number;
  /** At most this many seconds waiting for LevelDB to settle after the writes, before the folds (0: none). */
  readonly settleSeconds: number;
}

export interface FoldRun {
  readonly folded: number;
  readonly seconds: number;
  /** CPU per folded event, µs: all the process's threads, and its main thread. */
  readonly cpuUsPerEvent: number;
  readonly mainCpuUsPerEvent: number;
}

const ORG = 'a0000000-0000-4000-8000-0000000000f0';
const T0 = Date.parse('2026-11-20T12:00:00.000Z');

export async function runFoldBench(options: FoldBenchOptions): Promise<FoldRun[]> {
  const runs: FoldRun[] = [];
  for (let run = 0; run < options.runs; run++) {
    const dir = await mkdtemp(join(tmpdir(), 'audience-bench-fold-'));
    const store = await openLevelStore(dir);
    try {
      const users = Array.from({ length: options.users }, (_, u) => `b0000000-0000-4000-8000-${String(u).padStart(12, '0')}`);
      const last = new Map<string, number>();
      let seq = 0;
      // One batch per round of every user's next event: a partition's sequences interleave users, as ingestion's do.
      for (let i = 0; i < options.events; i++) {
        const ops: BatchOp[] = [];
        for (const user of users) {
          const record: StoredEvent = { id: `${user}-${i}`, user_id: user, name: 'Pageview', time: new Date(T0 + i * 1000).toISOString(), timeMs: T0 + i * 1000, properties: { path: `/p/${i % 50}`, referrer: 'https://example.com/a' }, seq: ++seq };
          pushEventOps(ops, ORG, record);
          last.set(user, seq);
        }
        await store.batch(ops);
      }
      if (options.settleSeconds > 0) await waitForIdle(process.pid, options.settleSeconds);
      const before = await threadCpuTicks(process.pid);
      const cpu = process.cpuUsage();
      const start = performance.now();
      let folded = 0;
      for (let i = 0; i < users.length; i += 32) {
        const parts = await Promise.all(users.slice(i, i + 32).map((user) => foldOps(store, { org: ORG, user, throughSeq: last.get(user) as number, events: options.events })));
        await store.batch(parts.flatMap((part) => part.ops));
        for (const part of parts) folded += part.folded;
      }
      const seconds = (performance.now() - start) / 1000;
      const used = process.cpuUsage(cpu);
      const after = await threadCpuTicks(process.pid);
      runs.push({
        folded,
        seconds: round(seconds),
        cpuUsPerEvent: round((used.user + used.system) / folded),
        mainCpuUsPerEvent: round(((after.main - before.main) * 10_000) / folded),
      });
    } finally {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  }
  return runs;
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}

function parseArgs(argv: readonly string[]): FoldBenchOptions {
  const options = { users: 2000, events: 32, runs: 3, settleSeconds: 30 };
  for (let i = 0; i < argv.length; i += 2) {
    const flag = argv[i];
    const value = Number(argv[i + 1]);
    if (!Number.isSafeInteger(value) || value < 1) throw new Error(`${flag}: expected a whole number >= 1, not "${argv[i + 1]}"`);
    if (flag === '--users') options.users = value;
    else if (flag === '--events') options.events = value;
    else if (flag === '--runs') options.runs = value;
    else throw new Error(`unknown argument "${flag}"; usage: node dist/bench/fold.js [--users 2000] [--events 32] [--runs 3]`);
  }
  return options;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const options = parseArgs(process.argv.slice(2));
  process.stdout.write(`${JSON.stringify({ options, runs: await runFoldBench(options) }, null, 2)}\n`);
}
