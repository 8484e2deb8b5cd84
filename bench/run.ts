// `npm run bench [-- --quick] [-- --only NAME[,NAME]] [-- --cpu-prof DIR]`: runs every benchmark (HTTP ingestion,
// ingestion with fsync, stateless segmentation, engine, reference, backfill, memory) and regenerates bench/README.md.

import { cpus, loadavg, release, totalmem, type } from 'node:os';
import { readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { backfillArgs, runBackfillProcess, type BackfillBenchOptions } from './backfill.js';
import { runEngineBench, type EngineBenchOptions } from './engine.js';
import { runHttpBenches, type HttpBenchOptions } from './http.js';
import type { LoadSettings } from './load.js';
import { runMemoryBench, type MemoryBenchOptions } from './memory.js';
import { runReferenceBench, type ReferenceBenchOptions } from './reference.js';
import { runReactionsBench } from './reactions.js';
import { runDashboardBench, type DashboardBenchOptions } from './dashboard.js';
import { runClusterBench } from './cluster/bench.js';
import { backfillRate, renderResults, writeReadme, type BenchResults, type Outcome } from './report.js';

export const BENCHMARKS = ['ingest', 'fsync', 'stateless', 'threads', 'floor', 'engine', 'reference', 'backfill', 'memory', 'reactions', 'dashboard', 'cluster'] as const;
/** `serve --threads` values of the threads sweep: the main thread alone, one owner, two owners. */
export const THREADS_SWEEP = [0, 1, 2] as const;
export type BenchName = (typeof BENCHMARKS)[number];

interface Settings {
  readonly users: number;
  readonly runs: number;
  readonly load: LoadSettings;
  readonly seedConnections: number;
  readonly statelessUsers: number;
  readonly engine: Partial<EngineBenchOptions>;
  readonly reference: ReferenceBenchOptions;
  readonly memory: MemoryBenchOptions;
  /** The same with `--decoded-states`: the owner holds its least recently used states packed. */
  readonly memoryEncoded: MemoryBenchOptions;
  /** The same with as many appends in flight as the HTTP benchmarks' connections. */
  readonly memoryFewInFlight: MemoryBenchOptions;
  /** bench/backfill.ts's settings (its defaults in a full run), run in a process of its own (runBackfillProcess). */
  readonly backfill: Partial<BackfillBenchOptions>;
  /** Users of the reactions benchmark's delivery part. */
  readonly reactionUsers: number;
  readonly dashboard: DashboardBenchOptions;
  /** Users seeded into each cluster of the cluster benchmark, and its load. */
  readonly cluster: { readonly users: number; readonly load: LoadSettings };
}

const SEED = 42;
const COHORTS = 100;

export const FULL: Settings = {
  users: 100_000,
  runs: 3,
  load: { connections: 50, pipelining: 1, durationSeconds: 15, warmupSeconds: 5, timeoutSeconds: 10 },
  seedConnections: 64,
  statelessUsers: 2_000,
  engine: {},
  reference: { seed: SEED, cohorts: COHORTS, history: 10_000, users: 3, events: 10 },
  memory: { users: 1_000_000, steps: 10 },
  memoryEncoded: { users: 100_000, steps: 1, decodedStates: 16_384 },
  memoryFewInFlight: { users: 100_000, steps: 1, inFlight: 50 },
  backfill: {},
  reactionUsers: 5_000,
  dashboard: { cohorts: 1000, runs: 5 },
  cluster: { users: 5_000, load: { connections: 50, pipelining: 1, durationSeconds: 10, warmupSeconds: 3, timeoutSeconds: 10 } },
};

/** A smoke check (under 2 minutes): same shape, smaller; its figures are not the README's. */
export const QUICK: Settings = {
  users: 5_000,
  runs: 1,
  load: { connections: 50, pipelining: 1, durationSeconds: 3, warmupSeconds: 1, timeoutSeconds: 10 },
  seedConnections: 64,
  statelessUsers: 200,
  engine: { users: 2_000, eventsPerUser: 10, runs: 3, largeUsers: 20_000, largeEventsPerUser: 2, longHistory: 10_000, historyUsers: 5, historyRepetitions: 20 },
  reference: { seed: SEED, cohorts: COHORTS, history: 10_000, users: 1, events: 3 },
  memory: { users: 20_000, steps: 2 },
  memoryEncoded: { users: 20_000, steps: 1, decodedStates: 2_048 },
  memoryFewInFlight: { users: 20_000, steps: 1, inFlight: 50 },
  backfill: { users: 500 },
  reactionUsers: 1_000,
  dashboard: { cohorts: 1000, runs: 2 },
  cluster: { users: 500, load: { connections: 50, pipelining: 1, durationSeconds: 3, warmupSeconds: 1, timeoutSeconds: 10 } },
};

const BENCH_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bench');

function parseArgs(argv: readonly string[]): { quick: boolean; only: Set<BenchName>; cpuProfileDir: string | undefined } {
  let quick = false;
  let cpuProfileDir: string | undefined;
  const only = new Set<BenchName>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--quick') quick = true;
    else if (arg === '--only' || arg === '--cpu-prof') {
      const value = argv[++i];
      if (value === undefined) throw new Error(`${arg} needs a value`);
      if (arg === '--cpu-prof') cpuProfileDir = value;
      else
        for (const name of value.split(',')) {
          if (!(BENCHMARKS as readonly string[]).includes(name)) throw new Error(`--only: unknown benchmark "${name}" (one of ${BENCHMARKS.join(', ')})`);
          only.add(name as BenchName);
        }
    } else throw new Error(`unknown argument "${arg}"; usage: npm run bench [-- --quick] [--only ${BENCHMARKS.join('|')}[,...]] [--cpu-prof DIR]`);
  }
  return { quick, only: only.size > 0 ? only : new Set(BENCHMARKS), cpuProfileDir };
}

const started = Date.now();
function progress(line: string): void {
  const seconds = ((Date.now() - started) / 1000).toFixed(0).padStart(4);
  process.stderr.write(`[${seconds} s] ${line}\n`);
}

async function attempt<T>(name: string, run: () => Promise<T> | T): Promise<Outcome<T>> {
  const at = new Date().toISOString().slice(0, 16).replace('T', ' ') + ' UTC';
  try {
    return { ok: true, at, value: await run() };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    progress(`${name} failed: ${reason}`);
    return { ok: false, at, reason: reason.split('\n')[0] as string };
  }
}

/** bench/backfill.ts in a process of its own; its result as the report reads results of any date (a record). */
async function runBackfill(settings: Partial<BackfillBenchOptions>): Promise<Record<string, unknown>> {
  return { ...(await runBackfillProcess(backfillArgs(settings))) };
}

export async function main(argv: readonly string[]): Promise<void> {
  const args = parseArgs(argv);
  const settings = args.quick ? QUICK : FULL;
  const has = (name: BenchName): boolean => args.only.has(name);
  const command = `npm run bench${args.quick ? ' -- --quick' : ''}`;
  progress(`${command}: ${[...args.only].join(', ')}${args.quick ? ' (quick smoke check: figures are not written to README.md)' : ''}`);

  const previous = args.quick || args.only.size === BENCHMARKS.length ? {} : await loadResults();
  const results: { -readonly [K in keyof BenchResults]: BenchResults[K] } = {
    ...previous,
    command,
    machine: {
      cpu: cpus()[0]?.model.trim() ?? 'unknown CPU',
      cores: cpus().length,
      memoryBytes: totalmem(),
      os: `${type()} ${release()}`,
      node: process.version,
      loadAverage: loadavg()[0] as number,
    },
    load: settings.load,
    runs: settings.runs,
    users: settings.users,
  };

  if (has('ingest') || has('fsync') || has('stateless') || has('threads') || has('floor')) {
    const options: HttpBenchOptions = {
      seed: SEED,
      users: settings.users,
      cohorts: COHORTS,
      runs: settings.runs,
      load: settings.load,
      seedConnections: settings.seedConnections,
      statelessUsers: settings.statelessUsers,
      which: { ingest: has('ingest'), fsync: has('fsync'), stateless: has('stateless'), threads: has('threads'), floor: has('floor') },
      threadsSweep: THREADS_SWEEP,
      ...(args.cpuProfileDir !== undefined && { cpuProfileDir: args.cpuProfileDir }),
    };
    progress('HTTP benchmarks: seeding, then baseline/audience pairs');
    results.http = await attempt('http', () => runHttpBenches(options, progress));
    // A partial run (--only ingest) keeps the earlier figures of the HTTP benchmarks it did not run.
    const before = previous.http;
    if (before?.ok === true && results.http.ok) {
      const fresh = results.http.value;
      const kept = before.value;
      const earlier = (['ingest', 'fsync', 'stateless', 'threads', 'floor', 'floorStateless'] as const).filter((name) => fresh[name] === undefined && kept[name] !== undefined);
      if (earlier.length > 0) {
        const keptValues = Object.fromEntries(earlier.map((name) => [name, kept[name]]));
        results.http = { ...results.http, value: { ...fresh, ...keptValues, earlier: { at: kept.earlier?.at ?? before.at, benchmarks: earlier } } };
      }
    }
  }
  if (has('engine')) {
    progress('engine benchmark (bench/engine.ts), in process');
    results.engine = await attempt('engine', () => runEngineBench(settings.engine));
    if (results.engine.ok) {
      const e = results.engine.value;
      const large = e.largeWorkingSet === undefined ? '' : `, ${Math.round(e.largeWorkingSet.eventsPerSecond).toLocaleString('en')} at ${e.largeWorkingSet.users.toLocaleString('en')} users`;
      progress(`  ${Math.round(e.eventsPerSecond).toLocaleString('en')} events/s${large}, history-cost ratio ${e.historyCostRatio.toFixed(2)}`);
    }
  }
  if (has('reference')) {
    progress('engine vs reference evaluator at 10,000 events of history');
    results.reference = await attempt('reference', () => runReferenceBench(settings.reference));
    if (results.reference.ok) progress(`  ${Math.round(results.reference.value.ratio).toLocaleString('en')}x`);
  }
  if (has('backfill')) {
    progress('backfill benchmark (bench/backfill.ts)');
    results.backfill = await attempt('backfill', () => runBackfill(settings.backfill));
    const rate = results.backfill.ok ? backfillRate(results.backfill.value) : undefined;
    if (rate !== undefined) progress(`  ${Math.round(rate).toLocaleString('en')} events/s replayed`);
  }
  if (has('memory')) {
    progress(`memory benchmark: ${settings.memory.users.toLocaleString('en')} users`);
    results.memory = await attempt('memory', () => runMemoryBench(settings.memory, progress));
    const encoded = settings.memoryEncoded;
    progress(`memory benchmark with --decoded-states ${encoded.decodedStates?.toLocaleString('en')}: ${encoded.users.toLocaleString('en')} users`);
    results.memoryEncoded = await attempt('memory', () => runMemoryBench(encoded, progress));
    const few = settings.memoryFewInFlight;
    progress(`memory benchmark with ${few.inFlight?.toLocaleString('en')} appends in flight: ${few.users.toLocaleString('en')} users`);
    results.memoryFewInFlight = await attempt('memory', () => runMemoryBench(few, progress));
  }

  if (has('dashboard')) {
    progress(`dashboard benchmark (bench/dashboard.ts): ${settings.dashboard.cohorts} cohorts in headless Chromium`);
    results.dashboard = await attempt('dashboard', () => runDashboardBench(settings.dashboard));
    if (results.dashboard.ok) progress(`  rendered in ${results.dashboard.value.renderMs.median.toFixed(0)} ms (median)`);
  }
  if (has('reactions')) {
    progress('reactions benchmark (bench/reactions.ts): deliveries, stream, deadline lag');
    results.reactions = await attempt('reactions', () => runReactionsBench({ users: settings.reactionUsers, load: settings.load }, progress));
    if (results.reactions.ok) {
      const { deliveries, deadlines } = results.reactions.value;
      progress(`  ${Math.round(deliveries.perSecond)} deliveries/s; deadline lag p50 ${deadlines.lagMs.p50.toFixed(1)} ms, max ${deadlines.lagMs.max.toFixed(1)} ms`);
    }
  }

  if (has('cluster')) {
    progress('cluster benchmark (bench/cluster/bench.ts): 1, 2 and 3 nodes over one nats-server, then failover');
    results.cluster = await attempt('cluster', () =>
      runClusterBench({ seed: SEED, users: settings.cluster.users, cohorts: COHORTS, load: settings.cluster.load, seedConnections: settings.seedConnections, nodeCounts: [1, 2, 3], partitions: 16 }, progress),
    );
  }

  const section = renderResults(results);
  process.stdout.write(`${section}\n`);
  if (args.quick) {
    await writeFile(join(BENCH_DIR, 'results-quick.json'), `${JSON.stringify(results, null, 2)}\n`);
    progress('quick run: results in bench/results-quick.json; README.md unchanged');
  } else {
    await writeFile(join(BENCH_DIR, 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
    await writeReadme(join(BENCH_DIR, 'README.md'), section);
    progress('wrote bench/README.md and bench/results.json');
  }
}

async function loadResults(): Promise<Partial<BenchResults>> {
  try {
    return JSON.parse(await readFile(join(BENCH_DIR, 'results.json'), 'utf8')) as Partial<BenchResults>;
  } catch {
    return {};
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    process.stderr.write(`bench: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  });
}
