// The process of benchmark (6): the real ingest pipeline (server/ingest, threads 0 as `serve` runs it) over LevelDB
// in a temp dir, with the 100 bench cohorts; one event appended for each of N users, RSS read at every step.
// Prints one JSON line per step and a final one. Run by bench/memory.ts: node dist/bench/memory-process.js N STEPS
// [--in-flight K] [--decoded-states D] [--malloc-trim-every S] [--compact-heap-every C] (K appends kept in flight,
// default 4,096; `serve --decoded-states`: the owner keeps D states decoded, the others packed; default all; `serve
// --malloc-trim-every`: glibc's free arena memory handed back every S seconds, `serve --compact-heap-every`: the heap
// compacted at a look every C seconds that finds it idle, each by default serve's, 0 never; the RSS is read before
// and after serve's idle passes, the compaction and then the trim).

import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { getHeapStatistics } from 'node:v8';
import { openIngestPipeline } from '../server/ingest/index.js';
import { DEFAULT_MALLOC_TRIM_SECONDS, MallocTrimmer, loadMallocTrim } from '../server/malloc-trim.js';
import { DEFAULT_HEAP_COMPACTION_SECONDS, HeapCompactor } from '../server/heap-compaction.js';
import type { NewEvent } from '../server/ingest/types.js';
import { openLevelStore } from '../server/store/level.js';
import { SampleGenerator } from '../test/support/sample-cohorts.js';
import { IN_FLIGHT as DEFAULT_IN_FLIGHT } from './memory.js';
import { TrackBodies, userIdOf } from './workload/bodies.js';

const users = Number(process.argv[2] ?? '1000000');
const steps = Number(process.argv[3] ?? '10');
/** The value after `flag` in the arguments, as a number (undefined when absent). */
function option(flag: string, min = 1): number | undefined {
  const at = process.argv.indexOf(flag);
  if (at < 0) return undefined;
  const value = Number(process.argv[at + 1]);
  if (!Number.isSafeInteger(value) || value < min) throw new Error(`${flag}: expected a whole number >= ${min}, not "${process.argv[at + 1]}"`);
  return value;
}
const decodedStates = option('--decoded-states');
const IN_FLIGHT = option('--in-flight') ?? DEFAULT_IN_FLIGHT;
const trimSeconds = option('--malloc-trim-every', 0) ?? DEFAULT_MALLOC_TRIM_SECONDS;
const compactionSeconds = option('--compact-heap-every', 0) ?? DEFAULT_HEAP_COMPACTION_SECONDS;
const SEED = 43;
const ORG = randomUUID();
const WARM_USERS = 1_000;
/** The resident states' byte bound (`serve --state-cache-bytes`): past it, users are snapshotted and forgotten. */
export const STATE_CACHE_BYTES = 1024 ** 3;

const dir = await mkdtemp(join(tmpdir(), 'audience-bench-memory-'));
const store = await openLevelStore(dir);
const cohorts = new SampleGenerator(42).cohorts(100);
const pipeline = await openIngestPipeline({
  store,
  threads: 0,
  fsync: false,
  cacheBytes: STATE_CACHE_BYTES,
  ...(decodedStates === undefined ? {} : { decodedStates }),
  plans: { planFor: () => ({ version: 1, cohorts }) },
  contexts: { contextFor: async () => ({ inImportedSegment: () => false, connectionRows: () => [] }) },
});
// serve's trimmer (server/malloc-trim.ts), as serve starts it; undefined with 0 or where there is no malloc_trim.
const loadedTrim = trimSeconds === 0 ? undefined : await loadMallocTrim();
if (loadedTrim !== undefined && 'unavailable' in loadedTrim) process.stderr.write(`no malloc_trim: ${loadedTrim.unavailable}\n`);
const trimmer = loadedTrim !== undefined && 'trim' in loadedTrim ? new MallocTrimmer({ trim: loadedTrim.trim, everyMs: trimSeconds * 1000 }) : undefined;
// serve's heap compactor (server/heap-compaction.ts): here the main thread's heap keeps the states.
const compactor = compactionSeconds === 0 ? undefined : new HeapCompactor({ everyMs: compactionSeconds * 1000 });
// The same event properties as the HTTP benchmark's track calls.
const bodies = new TrackBodies(SEED, users, 0);
const eventFor = (): NewEvent => {
  const body = JSON.parse(bodies.forUser(0)) as { name: string; properties: Record<string, unknown> };
  const timeMs = Date.now();
  return { id: randomUUID(), name: body.name, time: new Date(timeMs).toISOString(), timeMs, properties: body.properties };
};

async function appendUsers(from: number, count: number): Promise<void> {
  let next = from;
  const end = from + count;
  const lane = async (): Promise<void> => {
    while (next < end) {
      // A flat string, as the server's user ids are (parsed from a request body or read from the store): userIdOf
      // builds its id from slices and a template, a tree of ~13 string pieces a resident user would otherwise keep.
      const user = JSON.parse(JSON.stringify(userIdOf(SEED, next++))) as string;
      await pipeline.append({ org: ORG, user, events: [eventFor()] });
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
}

/**
 * The RSS's file-backed pages (`RssFile` of /proc/self/status; undefined where there is none): LevelDB's tables,
 * which it maps to read them, and the node binary. Pages of files the kernel can drop and read again, unlike the rest.
 */
function rssFileBytes(): number | undefined {
  try {
    const match = /^RssFile:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'));
    return match === null ? undefined : Number(match[1]) * 1024;
  } catch {
    return undefined;
  }
}

/**
 * RSS once the heap has settled (a GC when exposed, and a moment for LevelDB's background work): before serve's idle
 * passes, and after them (what serve's process holds once its next looks have found it idle: the heap compacted if
 * fragmented, then the allocator trimmed; the same without them).
 */
async function settledRss(): Promise<{ rssBytes: number; rssUntrimmedBytes: number; compactionMs?: number }> {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  await sleep(500);
  gc?.();
  const rssUntrimmedBytes = process.memoryUsage().rss;
  const compactions = (await compactor?.pass()) ?? [];
  // V8 unmaps the pages a compaction emptied on a background thread, within a moment.
  if (compactions.length > 0) await sleep(1000);
  await trimmer?.pass();
  // The pause serve's main thread would take for it (this process keeps its states there, as `--threads 0` does).
  const compactionMs = compactions.length === 0 ? undefined : compactions.reduce((sum, one) => sum + one.ms, 0);
  return { rssBytes: process.memoryUsage().rss, rssUntrimmedBytes, ...(compactionMs === undefined ? {} : { compactionMs }) };
}

try {
  await appendUsers(users, WARM_USERS);
  const base = await settledRss();
  process.stdout.write(`${JSON.stringify({ kind: 'start', ...base, mallocTrimSeconds: trimmer === undefined ? 0 : trimSeconds, heapCompactionSeconds: compactionSeconds })}\n`);
  const step = Math.ceil(users / steps);
  let seconds = 0;
  for (let done = 0; done < users; ) {
    const count = Math.min(step, users - done);
    const started = Date.now();
    await appendUsers(done, count);
    seconds += (Date.now() - started) / 1000;
    done += count;
    const { rssBytes, rssUntrimmedBytes, compactionMs } = await settledRss();
    const { heapUsed, arrayBuffers } = process.memoryUsage();
    // The V8 heap's pages in RSS: what it holds besides the live objects is free space it has not given back.
    const heapCommitted = getHeapStatistics().total_physical_size;
    const storeBytes = store.memoryBytes?.();
    process.stdout.write(`${JSON.stringify({ kind: 'step', users: done, rssBytes, rssUntrimmedBytes, compactionMs, rssFileBytes: rssFileBytes(), heapUsedBytes: heapUsed, heapCommittedBytes: heapCommitted, arrayBufferBytes: arrayBuffers, storeMemoryBytes: storeBytes, eventsPerSecond: done / seconds })}\n`);
  }
} finally {
  await trimmer?.stop();
  await compactor?.stop();
  await pipeline.close();
  await store.close();
  await rm(dir, { recursive: true, force: true });
}
