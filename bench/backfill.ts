// Benchmark of the D19 backfill: events replayed per second when a cohort is created over an organization with at
// least 1,000,000 stored events (seeded through the ingest pipeline with a fixed seed, LevelDB in a temp directory,
// one event per append as the track route appends, folded into blocks behind the writes as a server folds them),
// timed from the create to the end of the sweep; then three more cohorts are created, one after another, each adding
// slots of the same kinds over the same events as the first one's (every stored event is replayed again), and their
// sweeps timed as well (later sweeps: V8 has compiled the sweep's code by then, which the first sweep of a process
// pays for as it runs; the median is reported). Seeded, fixed settings; JSON to stdout.
// `npm run bench` runs it in a process of its own with serve's Node options (runBackfillProcess), as a server runs
// its sweeps. Run: npm run build && node --max-semi-space-size=32 dist/bench/backfill.js [--users N]
// [--eventsPerUser N] [--eventsPerAppend N] [--foldEvery N] [--threads N] [--seed N] (the defaults are `npm run
// bench`'s)

import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { SERVE_NODE_OPTIONS } from '../cli/node-options.js';
import { compilePlan, newUserState, segment, validateQuery } from '../engine/index.js';
import { listUsers } from '../server/backfill/users.js';
import { unpackEngineEvents } from '../server/domain/events/index.js';
import { recordCount } from '../server/domain/events/blocks.js';
import { prefixUpperBound, userEventPrefix } from '../server/domain/events/keys.js';
import type { NewEvent } from '../server/ingest/index.js';
import { readHistoryChunk } from '../server/ingest/state/load.js';
import { closeServices, openServices } from '../server/services.js';
import type { Store } from '../server/store/contract.js';
import { openLevelStore } from '../server/store/level.js';
import { createRng } from '../test/differential/random.js';
import { threadCpuTicks, waitForIdle } from './processes.js';

export interface BackfillBenchOptions {
  readonly seed: number;
  readonly users: number;
  readonly eventsPerUser: number;
  /** Events per append while seeding (1: as the track route appends; more are stored as blocks at once). */
  readonly eventsPerAppend: number;
  /** The pipeline's `foldEvery` (server/ingest/fold.ts; the default of `serve --fold-every`; 0 never). */
  readonly foldEvery: number;
  /** Engine worker threads (piscina); 0 = main thread. */
  readonly threads: number;
  /** A cohort that exists while the events arrive (an organization rarely has none). */
  readonly existing: unknown;
  /** The query of the cohort created over the stored history. */
  readonly query: unknown;
  /**
   * The queries of the cohorts created one after another once that one is swept (the later sweeps). Each adds three
   * new slots of the first query's kinds over the same events, so that a later sweep replays every stored event as
   * the first one does: a count of every Pageview (`before` a time after every seeded event: a key of its own, where
   * the first query's plain frequency would share that query's slot), a Purchase ring and a Click count with `where`.
   */
  readonly laterQueries: readonly unknown[];
}

export const DEFAULT_BACKFILL_BENCH: BackfillBenchOptions = {
  seed: 42,
  users: 5_000,
  eventsPerUser: 200,
  eventsPerAppend: 1,
  foldEvery: 32,
  threads: 1,
  existing: { event: 'Signup' },
  query: {
    and: [
      { event: 'Pageview', frequency: { greater_than_or_equal_to: 125 } },
      { or: [{ event: 'Purchase', during: { the_last: { value: 7, unit: 'days' } } }, { event: 'Click', where: { property: 'properties.kind', condition: { equal_to: 'buy' } } }] },
    ],
  },
  laterQueries: [
    { equal_to: 'look' },
    { not_equal_to: 'buy' },
    { not_equal_to: 'look' },
  ].map((condition, i) => ({
    and: [
      { event: 'Pageview', during: { before: new Date(Date.UTC(2030, 0, 1 + i)).toISOString() }, frequency: { greater_than_or_equal_to: 100 + 10 * i } },
      { or: [{ event: 'Purchase', during: { the_last: { value: 14 + 7 * i, unit: 'days' } } }, { event: 'Click', where: { property: 'properties.kind', condition } }] },
    ],
  })),
};

export interface BackfillBenchResult {
  readonly settings: BackfillBenchOptions;
  readonly storedEvents: number;
  readonly seedSeconds: number;
  /** Seeding rate through the pipeline (appends acknowledged once durable). */
  readonly seedEventsPerSecond: number;
  /** After the last append, until the folds it asked for were written (the sweep starts after). */
  readonly foldTailSeconds: number;
  /** After the folds, until this process used under 5 % of a core over a second (LevelDB's compactions settled). */
  readonly settleSeconds: number;
  /** Records folded into blocks while seeding, and the values the history is then stored as (`e!`). */
  readonly eventsFolded: number;
  readonly storedValues: number;
  /** From the create to the end of the sweep (every user caught up, the size exact). */
  readonly sweepSeconds: number;
  readonly replayedEventsPerSecond: number;
  readonly usersPerSecond: number;
  readonly audienceSize: number;
  /** CPU seconds of this process's main thread, and of all its threads, during the sweep (from /proc). */
  readonly sweepMainThreadCpuSeconds: number;
  /** Of which the partition owners' threads (the replays); the rest is LevelDB's threads and V8's (the GC's helpers). */
  readonly sweepOwnerThreadsCpuSeconds: number;
  readonly sweepAllThreadsCpuSeconds: number;
  /**
   * The same for the later sweeps (new cohorts of `laterQueries`, one after another over the same history, once the
   * first sweep is done): what a sweep costs once V8 has compiled its code (the first sweep of a process compiles it
   * as it runs). `laterSweep` is the one of median rate; `laterSweepRates` all of them, in order.
   */
  readonly laterSweep: SweepFigures;
  readonly laterSweepRates: readonly number[];
  /** The Node options this process ran with (`npm run bench` gives serve's: runBackfillProcess). */
  readonly nodeOptions: readonly string[];
  /** The sweep's parts alone, one after another, on the same stored events (the sweep overlaps them): SweepParts. */
  readonly parts: SweepParts;
  readonly loadAverage: readonly number[];
}

/** One sweep's time, rate and CPU (as the first sweep's figures above). */
export interface SweepFigures {
  readonly sweepSeconds: number;
  readonly replayedEventsPerSecond: number;
  readonly audienceSize: number;
  readonly sweepMainThreadCpuSeconds: number;
  readonly sweepOwnerThreadsCpuSeconds: number;
  readonly sweepAllThreadsCpuSeconds: number;
}

/**
 * What each part of a sweep costs alone over the same stored events, so the README can say what bounds the rate:
 * listing the users (Store.skipKeys, as a new sweep's count does), reading each user's history in its own range
 * read (as a tick's catch-ups do when no history was read ahead), the same stored values read in one range per 256
 * users (as the sweep lists its users and reads their histories: server/backfill/users.ts `scanUsers`; the least
 * the layout costs through classic-level: one native read and one buffer per value, on the main thread), decoding
 * them (as the owner does: server/domain/events/engine-reader.ts) and replaying them through the new cohort alone.
 */
export interface SweepParts {
  readonly listSeconds: number;
  readonly perUserReadSeconds: number;
  readonly perUserReadMainThreadCpuSeconds: number;
  readonly bulkReadSeconds: number;
  readonly bulkReadMainThreadCpuSeconds: number;
  readonly decodeSeconds: number;
  readonly replaySeconds: number;
}

/** The shared seeded PRNG (mulberry32). */
const random = (seed: number): (() => number) => createRng(seed).next;

/** What bench/compiles.ts sets to have each sweep's start and end marked in V8's trace (markTrace). */
export const TRACE_MARKS_ENV = 'AUDIENCE_BENCH_TRACE_MARKS';
/** The text of a mark in the trace: `${TRACE_MARK}first:start`, `${TRACE_MARK}later-1:end`, ... */
export const TRACE_MARK = 'audience-bench-mark:';

/**
 * With TRACE_MARKS_ENV=1 and `--allow-natives-syntax` (bench/compiles.ts runs it so), writes a mark into V8's trace:
 * `%DebugPrint` prints to the stream `--trace-opt` and `--trace-deopt` print to, in order, so the compiles can be
 * counted per sweep. Otherwise it does nothing (the syntax is only parsed when asked for).
 */
const markTrace: (label: string) => void =
  process.env[TRACE_MARKS_ENV] === '1' ? (new Function('label', '%DebugPrint(label);') as (label: string) => void) : () => undefined;

/**
 * A user's events as the bench seeds them: Pageview (60 %), Click (30 %, with a `kind`) and Purchase (10 %), the
 * Pageviews and Purchases with a `path`.
 */
export function userEvents(next: () => number, user: number, count: number): NewEvent[] {
  let time = Date.parse('2026-01-01T00:00:00.000Z') + Math.floor(next() * 86_400_000);
  const events: NewEvent[] = [];
  for (let i = 0; i < count; i++) {
    time += Math.floor(next() * 3_600_000);
    const roll = next();
    const name = roll < 0.6 ? 'Pageview' : roll < 0.9 ? 'Click' : 'Purchase';
    const properties = name === 'Click' ? { kind: next() < 0.2 ? 'buy' : 'look' } : { path: `/p/${Math.floor(next() * 50)}` };
    events.push({ id: `b${user}-${i}`, name, time: new Date(time).toISOString(), timeMs: time, properties });
  }
  return events;
}

export async function runBackfillBench(overrides: Partial<BackfillBenchOptions> = {}): Promise<BackfillBenchResult> {
  const settings: BackfillBenchOptions = { ...DEFAULT_BACKFILL_BENCH, ...overrides };
  const dir = await mkdtemp(join(tmpdir(), 'audience-bench-backfill-'));
  const store = await openLevelStore(dir);
  const services = await openServices(store, { threads: settings.threads, log: (line) => process.stderr.write(`${line}\n`), tuning: { foldEvery: settings.foldEvery } });
  try {
    const org = await services.tenancy.initOrganization({ name: 'Bench', now: new Date(), newId: randomUUID, newKey: randomUUID });
    const create = async (query: unknown) => {
      const validated = validateQuery(query);
      if (!validated.ok) throw new Error(`invalid bench query: ${JSON.stringify(validated.problems)}`);
      const cohort = await services.cohorts.create({
        workspaceId: org.workspace_id,
        name: 'bench',
        query,
        ast: validated.query,
        references: validated.references,
        now: new Date(),
        newId: randomUUID,
      });
      services.pipeline.planChanged(org.organization_id);
      services.backfill.planChanged(org.organization_id);
      return cohort;
    };
    await create(settings.existing);
    await services.backfill.whenSwept(org.organization_id);
    const next = random(settings.seed);
    const seedStart = performance.now();
    // Users in waves so that every partition has appends in flight.
    const wave = 64;
    for (let first = 0; first < settings.users; first += wave) {
      const appends: Promise<unknown>[] = [];
      for (let u = first; u < Math.min(settings.users, first + wave); u++) {
        const user = `u${String(u).padStart(8, '0')}`;
        const events = userEvents(next, u, settings.eventsPerUser);
        appends.push(
          (async () => {
            for (let i = 0; i < events.length; i += settings.eventsPerAppend) {
              await services.pipeline.append({ org: org.organization_id, user, events: events.slice(i, i + settings.eventsPerAppend) });
            }
          })(),
        );
      }
      await Promise.all(appends);
    }
    const seedSeconds = (performance.now() - seedStart) / 1000;
    const storedEvents = settings.users * settings.eventsPerUser;
    const foldStart = performance.now();
    await services.pipeline.foldsIdle();
    const foldTailSeconds = (performance.now() - foldStart) / 1000;
    const { eventsFolded } = services.pipeline.stats();
    // A cohort is created over a history stored before: LevelDB's compactions of the seeding settle first (they would
    // otherwise share the cores with the sweep, by however much the seeding left them behind).
    const settleSeconds = await waitForIdle(process.pid, 120);

    const sweep = async (query: unknown, label: string): Promise<SweepFigures> => {
      const cpuBefore = await cpuSeconds();
      markTrace(`${TRACE_MARK}${label}:start`);
      const sweepStart = performance.now();
      const cohort = await create(query);
      await services.backfill.whenSwept(org.organization_id);
      const sweepSeconds = (performance.now() - sweepStart) / 1000;
      markTrace(`${TRACE_MARK}${label}:end`);
      const cpuAfter = await cpuSeconds();
      return {
        sweepSeconds: round(sweepSeconds),
        replayedEventsPerSecond: Math.round(storedEvents / sweepSeconds),
        audienceSize: services.pipeline.audienceSize(org.organization_id, cohort.code),
        sweepMainThreadCpuSeconds: round(cpuAfter.main - cpuBefore.main),
        sweepOwnerThreadsCpuSeconds: round(cpuAfter.owners - cpuBefore.owners),
        sweepAllThreadsCpuSeconds: round(cpuAfter.all - cpuBefore.all),
      };
    };
    const first = await sweep(settings.query, 'first');
    const later: SweepFigures[] = [];
    for (const [i, query] of settings.laterQueries.entries()) later.push(await sweep(query, `later-${i + 1}`));
    const byRate = [...later].sort((a, b) => a.replayedEventsPerSecond - b.replayedEventsPerSecond);
    const laterSweep = byRate[(byRate.length - 1) >> 1];
    if (laterSweep === undefined) throw new Error('the backfill bench needs at least one later query');
    const { parts, storedValues } = await measureParts(store, org.organization_id, settings.query);
    return {
      settings,
      storedEvents,
      seedSeconds: round(seedSeconds),
      seedEventsPerSecond: Math.round(storedEvents / seedSeconds),
      foldTailSeconds: round(foldTailSeconds),
      settleSeconds: round(settleSeconds),
      eventsFolded,
      storedValues,
      sweepSeconds: first.sweepSeconds,
      replayedEventsPerSecond: first.replayedEventsPerSecond,
      usersPerSecond: Math.round((first.replayedEventsPerSecond * settings.users) / storedEvents),
      audienceSize: first.audienceSize,
      sweepMainThreadCpuSeconds: first.sweepMainThreadCpuSeconds,
      sweepOwnerThreadsCpuSeconds: first.sweepOwnerThreadsCpuSeconds,
      sweepAllThreadsCpuSeconds: first.sweepAllThreadsCpuSeconds,
      laterSweep,
      laterSweepRates: later.map((figures) => figures.replayedEventsPerSecond),
      nodeOptions: process.execArgv,
      parts,
      loadAverage: loadavg().map(round),
    };
  } finally {
    await closeServices(services);
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/** This process's CPU seconds: its main thread and all its threads (clock ticks of 10 ms). */
async function cpuSeconds(): Promise<{ main: number; owners: number; all: number }> {
  const ticks = await threadCpuTicks(process.pid);
  let all = ticks.main;
  let owners = 0;
  for (const [tid, other] of ticks.others) {
    all += other;
    if (ticks.owners.has(tid)) owners += other;
  }
  return { main: ticks.main / 100, owners: owners / 100, all: all / 100 };
}

async function timed<T>(work: () => Promise<T>): Promise<{ value: T; seconds: number; mainCpuSeconds: number }> {
  const cpu = (await threadCpuTicks(process.pid)).main;
  const start = performance.now();
  const value = await work();
  const seconds = (performance.now() - start) / 1000;
  return { value, seconds, mainCpuSeconds: ((await threadCpuTicks(process.pid)).main - cpu) / 100 };
}

async function measureParts(store: Store, org: string, query: unknown): Promise<{ parts: SweepParts; storedValues: number }> {
  const list = await timed(async () => {
    const users: string[] = [];
    for (let after: string | null = null; ; ) {
      const batch = await listUsers(store, org, after, 256);
      users.push(...batch);
      if (batch.length < 256) return users;
      after = batch[batch.length - 1] as string;
    }
  });
  const users = list.value;
  const perUser = await timed(async () => {
    const histories = [];
    for (let i = 0; i < users.length; i += 32) {
      histories.push(...(await Promise.all(users.slice(i, i + 32).map((user) => readHistoryChunk(store, org, user, 0, Number.MAX_SAFE_INTEGER)))));
    }
    return histories;
  });
  const bulk = await timed(async () => {
    let events = 0;
    let values = 0;
    for (let i = 0; i < users.length; i += 256) {
      const last = users[Math.min(users.length, i + 256) - 1] as string;
      const range = { gte: userEventPrefix(org, users[i] as string), lt: prefixUpperBound(userEventPrefix(org, last)) };
      for (const bytes of await store.encodedValues(range)) {
        values++;
        events += recordCount(bytes);
      }
    }
    return { events, values };
  });
  const validated = validateQuery(query);
  if (!validated.ok) throw new Error('invalid bench query');
  const plan = compilePlan([{ code: 1, query: validated.query }], 1);
  const ctx = { inImportedSegment: () => false, connectionRows: () => [] };
  let decodeSeconds = 0;
  let replaySeconds = 0;
  let replayed = 0;
  for (const history of perUser.value) {
    const start = performance.now();
    // As an owner's catch-up decodes them: only the properties the replayed plan reads.
    const events = unpackEngineEvents(history.events, plan.eventPropertyKeys);
    const decoded = performance.now();
    segment(plan, newUserState(), events, ctx);
    replaySeconds += (performance.now() - decoded) / 1000;
    decodeSeconds += (decoded - start) / 1000;
    replayed += events.length;
  }
  if (replayed !== bulk.value.events) throw new Error(`read ${replayed} events per user but ${bulk.value.events} in bulk`);
  const parts: SweepParts = {
    listSeconds: round(list.seconds),
    perUserReadSeconds: round(perUser.seconds),
    perUserReadMainThreadCpuSeconds: round(perUser.mainCpuSeconds),
    bulkReadSeconds: round(bulk.seconds),
    bulkReadMainThreadCpuSeconds: round(bulk.mainCpuSeconds),
    decodeSeconds: round(decodeSeconds),
    replaySeconds: round(replaySeconds),
  };
  return { parts, storedValues: bulk.value.values };
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}

/** The numeric settings given as `--name value` (the names of BackfillBenchOptions: `--users 10000`). */
export function parseBackfillArgs(argv: readonly string[]): Partial<BackfillBenchOptions> {
  const numeric = ['seed', 'users', 'eventsPerUser', 'eventsPerAppend', 'foldEvery', 'threads'] as const;
  const out: { -readonly [K in (typeof numeric)[number]]?: number } = {};
  for (let i = 0; i < argv.length; i += 2) {
    const name = (argv[i] ?? '').replace(/^--/, '');
    const value = Number(argv[i + 1]);
    const known = numeric.find((key) => key === name);
    if (known === undefined) throw new Error(`unknown argument "${argv[i]}"; usage: node dist/bench/backfill.js [${numeric.map((key) => `--${key} N`).join('] [')}]`);
    if (!Number.isSafeInteger(value) || value < 0) throw new Error(`--${name}: expected a whole number, not "${argv[i + 1]}"`);
    out[known] = value;
  }
  return out;
}

/** The numeric `overrides` as this script's arguments (what parseBackfillArgs reads). */
export function backfillArgs(overrides: Partial<BackfillBenchOptions>): string[] {
  return Object.entries(overrides).flatMap(([name, value]) => (typeof value === 'number' ? [`--${name}`, String(value)] : []));
}

const execFileAsync = promisify(execFile);

/**
 * Runs a build's bench/backfill.js (`script`; this one by default) in a process of its own with serve's Node options,
 * as a server runs its sweeps, with `args` (parseBackfillArgs's) and `env` added to this process's environment; its
 * JSON result. Its stderr (the services' log) is kept and shown when it fails.
 */
export async function runBackfillProcess(args: readonly string[], script = fileURLToPath(import.meta.url), env: Readonly<Record<string, string>> = {}): Promise<BackfillBenchResult> {
  const { stdout } = await execFileAsync(process.execPath, [...SERVE_NODE_OPTIONS, script, ...args], { env: { ...process.env, ...env }, maxBuffer: 64 * 1024 * 1024 });
  return JSON.parse(stdout) as BackfillBenchResult;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const result = await runBackfillBench(parseBackfillArgs(process.argv.slice(2)));
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}
