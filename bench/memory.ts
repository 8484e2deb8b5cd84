// Benchmark (6): resident bytes per user. A separate process (bench/memory-process.ts) runs the real ingest pipeline
// over LevelDB with the 100 cohorts and appends one event for each of N users; its RSS is read at every step.

import { spawn } from 'node:child_process';
import { SERVE_NODE_OPTIONS } from '../cli/node-options.js';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Progress } from './workload/seed.js';

export interface MemoryBenchOptions {
  readonly users: number;
  readonly steps: number;
  /** `serve --decoded-states`: states the owner keeps decoded, the others packed (default all decoded). */
  readonly decodedStates?: number;
  /** Appends kept in flight (default IN_FLIGHT: fast to fill; the HTTP benchmarks keep 50, one per connection). */
  readonly inFlight?: number;
}

/** Appends in flight unless told: the pipeline's groups fill at once, so a million users take a few minutes. */
export const IN_FLIGHT = 4_096;

export interface MemoryPoint {
  readonly users: number;
  /** After serve's idle passes (server/heap-compaction.ts, then server/malloc-trim.ts) when the run had them. */
  readonly rssBytes: number;
  /** Before them; absent in results of older runs (no trim) and equal to rssBytes without them. */
  readonly rssUntrimmedBytes?: number;
  /** The pause of the heap compaction of that idle pass (absent when it compacted nothing, and in older runs). */
  readonly compactionMs?: number;
  readonly heapUsedBytes: number;
  /** The V8 heap's resident pages (used and free); absent in results of older runs. */
  readonly heapCommittedBytes?: number;
  /** LevelDB's estimate of its memtables and block cache (Store.memoryBytes); absent in results of older runs. */
  readonly storeMemoryBytes?: number;
  /** The RSS's file-backed pages (LevelDB's mapped tables, the node binary); absent in results of older runs. */
  readonly rssFileBytes?: number;
  /** Buffers outside the V8 heap (encoded states are Uint8Arrays). */
  readonly arrayBufferBytes: number;
  readonly bytesPerUser: number;
}

export interface MemoryBenchResult {
  readonly users: number;
  readonly baselineRssBytes: number;
  /** The warm-up's RSS before the idle passes (absent in results of older runs). */
  readonly baselineUntrimmedRssBytes?: number;
  /** Seconds between the trimmer's passes (0: none; absent in results of older runs, which had none). */
  readonly mallocTrimSeconds?: number;
  /** Seconds between the heap compactor's looks (0: none; absent in results of older runs, which had none). */
  readonly heapCompactionSeconds?: number;
  readonly points: readonly MemoryPoint[];
  /** (RSS at `users` - RSS after the warm-up) / users. */
  readonly bytesPerUser: number;
  /** `--decoded-states` of the run, when given. */
  readonly decodedStates?: number;
  /** Appends in flight (absent in results of older runs, which kept IN_FLIGHT). */
  readonly inFlight?: number;
  readonly eventsPerSecond: number;
}

const PROCESS = join(dirname(fileURLToPath(import.meta.url)), 'memory-process.js');

export function runMemoryBench(options: MemoryBenchOptions, progress: Progress): Promise<MemoryBenchResult> {
  return new Promise((resolve, reject) => {
    const inFlight = options.inFlight ?? IN_FLIGHT;
    const args = [PROCESS, String(options.users), String(options.steps), '--in-flight', String(inFlight)];
    if (options.decodedStates !== undefined) args.push('--decoded-states', String(options.decodedStates));
    const child = spawn(process.execPath, [...SERVE_NODE_OPTIONS, '--expose-gc', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    let buffered = '';
    let base = 0;
    let baseUntrimmed = 0;
    let trimSeconds = 0;
    let compactionSeconds = 0;
    let rate = 0;
    const points: MemoryPoint[] = [];
    child.stderr.setEncoding('utf8').on('data', (text: string) => {
      stderr = (stderr + text).slice(-4000);
    });
    child.stdout.setEncoding('utf8').on('data', (text: string) => {
      buffered += text;
      let newline: number;
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const line = JSON.parse(buffered.slice(0, newline)) as { kind: string; users: number; rssBytes: number; rssUntrimmedBytes: number; compactionMs?: number; mallocTrimSeconds: number; heapCompactionSeconds: number; heapUsedBytes: number; heapCommittedBytes: number; arrayBufferBytes: number; storeMemoryBytes?: number; rssFileBytes?: number; eventsPerSecond: number };
        buffered = buffered.slice(newline + 1);
        if (line.kind === 'start') {
          base = line.rssBytes;
          baseUntrimmed = line.rssUntrimmedBytes;
          trimSeconds = line.mallocTrimSeconds;
          compactionSeconds = line.heapCompactionSeconds;
          progress(`  memory: RSS ${mb(base)} after warm-up (${mb(baseUntrimmed)} before the idle passes; pid ${child.pid})`);
          continue;
        }
        const point = { users: line.users, rssBytes: line.rssBytes, rssUntrimmedBytes: line.rssUntrimmedBytes, ...(line.compactionMs === undefined ? {} : { compactionMs: line.compactionMs }), heapUsedBytes: line.heapUsedBytes, heapCommittedBytes: line.heapCommittedBytes, arrayBufferBytes: line.arrayBufferBytes, ...(line.storeMemoryBytes === undefined ? {} : { storeMemoryBytes: line.storeMemoryBytes }), ...(line.rssFileBytes === undefined ? {} : { rssFileBytes: line.rssFileBytes }), bytesPerUser: (line.rssBytes - base) / line.users };
        points.push(point);
        rate = line.eventsPerSecond;
        progress(`  ${point.users.toLocaleString('en')} users: RSS ${mb(point.rssBytes)}, heap ${mb(point.heapUsedBytes)} (of ${mb(point.heapCommittedBytes)}), buffers ${mb(point.arrayBufferBytes)}, ${point.bytesPerUser.toFixed(0)} B/user (${((point.rssUntrimmedBytes - baseUntrimmed) / point.users).toFixed(0)} before the idle passes; ${Math.round(rate).toLocaleString('en')} appends/s)`);
      }
    });
    child.once('error', reject);
    child.once('exit', (code) => {
      const last = points[points.length - 1];
      if (code !== 0 || last === undefined) reject(new Error(`memory process exited ${code}: ${stderr.split('\n').find((l) => l.trim() !== '') ?? ''}`));
      else resolve({ users: options.users, baselineRssBytes: base, baselineUntrimmedRssBytes: baseUntrimmed, mallocTrimSeconds: trimSeconds, heapCompactionSeconds: compactionSeconds, points, bytesPerUser: last.bytesPerUser, eventsPerSecond: rate, inFlight, ...(options.decodedStates === undefined ? {} : { decodedStates: options.decodedStates }) });
    });
  });
}

export function mb(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}
