// Benchmarks (1)-(3) over HTTP: POST /v2.0/events, the same with --fsync, and stateless segmentation (10 events and
// a passed-back state), each run interleaved with a run of the bare uWS baseline on the same bodies and settings;
// the threads sweep: POST /v2.0/events with the server restarted on the same data at each `--threads` value; and the
// floor: the same track calls served by bench/floor-server.ts --engine (what this machine allows).

import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runLoad, sendAll, type LoadResult, type LoadSettings, type LoadTarget } from './load.js';
import { startAudience, startBaseline, startFloor, waitForIdle, type Keys, type Running } from './processes.js';
import { ratiosOf, spreadOf, type Spread } from './stats.js';
import { StatelessBodies, TrackBodies, userIdOf } from './workload/bodies.js';
import { generateWireCohorts } from './workload/cohorts.js';
import { seedWorkload, type Progress, type SeedReport } from './workload/seed.js';
import { withUsage, type RunUsage } from './usage.js';

export interface HttpBenchOptions {
  readonly seed: number;
  readonly users: number;
  readonly cohorts: number;
  readonly runs: number;
  readonly load: LoadSettings;
  readonly seedConnections: number;
  /** Users whose state stateless calls pass back (each prepared by one call without state). */
  readonly statelessUsers: number;
  readonly which: { readonly ingest: boolean; readonly fsync: boolean; readonly stateless: boolean; readonly threads: boolean; readonly floor: boolean };
  /** The `--threads` values of the sweep. */
  readonly threadsSweep: readonly number[];
  readonly cpuProfileDir?: string;
}

export interface Comparison {
  readonly runs: readonly LoadResult[];
  readonly baselineRuns: readonly LoadResult[];
  readonly rps: Spread;
  readonly baselineRps: Spread;
  /** Per-run ratio to the baseline run beside it. */
  readonly ratio: Spread;
  readonly p99: Spread;
  readonly p50: Spread;
  readonly baselineP99: Spread;
  readonly non2xx: number;
  /** Where the cores went during the audience runs (usage.ts), each figure over the runs. */
  readonly usage?: { readonly [K in keyof RunUsage]: Spread };
}

export interface HttpBenchResult {
  readonly seedReport: SeedReport;
  readonly ingest?: Comparison;
  readonly fsync?: Comparison & { readonly via: string };
  /** `stateBytes`: the JSON text of `internal_state` (what the client carries sealed); `wholeStateBytes`: of `state`. */
  readonly stateless?: Comparison & { readonly stateBytes: number; readonly wholeStateBytes?: number };
  /** The threads sweep: ingestion at each `serve --threads` value. */
  readonly threads?: readonly (Comparison & { readonly threads: number })[];
  /**
   * The floor (bench/floor-server.ts with `--engine`): the same track calls stored and segmented by the least a server
   * can do, for what this machine allows (no keys, identity, validation, schemas, idempotency, counters, log).
   */
  readonly floor?: Comparison;
  /**
   * The same stateless calls served by the floor: the caller's state decoded, the events segmented on it, the answer
   * sent, and the events published (stored one put each, segmented against the user's resident state), nothing else.
   */
  readonly floorStateless?: Comparison;
  readonly dataDirBytes: number;
  /** Rows kept from an earlier run by a partial one (`--only ingest`): which, and when they were measured. */
  readonly earlier?: { readonly at: string; readonly benchmarks: readonly string[] };
}

function compare(runs: LoadResult[], baselineRuns: LoadResult[], usages: RunUsage[] = []): Comparison {
  const usage =
    usages.length === 0
      ? undefined
      : (Object.fromEntries((Object.keys(usages[0] as RunUsage) as (keyof RunUsage)[]).map((k) => [k, spreadOf(usages.map((u) => u[k]))])) as Comparison['usage']);
  return {
    ...(usage !== undefined && { usage }),
    runs,
    baselineRuns,
    rps: spreadOf(runs.map((r) => r.rps)),
    baselineRps: spreadOf(baselineRuns.map((r) => r.rps)),
    ratio: ratiosOf(runs.map((r) => r.rps), baselineRuns.map((r) => r.rps)),
    p99: spreadOf(runs.map((r) => r.latency.p99)),
    p50: spreadOf(runs.map((r) => r.latency.p50)),
    baselineP99: spreadOf(baselineRuns.map((r) => r.latency.p99)),
    non2xx: runs.reduce((sum, r) => sum + r.non2xx + r.errors + r.timeouts, 0),
  };
}

/** A benchmark's audience runs, the baseline runs beside them, and what the server used in each audience run. */
type Runs = [LoadResult[], LoadResult[], RunUsage[]];

const describeUsage = (u: RunUsage): string =>
  `server ${u.serverCores.toFixed(2)} cores (main thread ${u.mainCores.toFixed(2)}, owners ${u.ownerCores.toFixed(2)}, other threads ${u.otherCores.toFixed(2)}), load generator ${u.loadGeneratorCores.toFixed(2)}` +
  (Number.isFinite(u.eventsPerGroup) ? `, ${u.eventsPerGroup.toFixed(1)} events per group, ${u.groupMs.toFixed(1)} ms per group${Number.isFinite(u.ownersMs) ? ` (${u.ownersMs.toFixed(1)} with the owners)` : ''}, ${u.groupsPerBatch.toFixed(2)} groups per store batch, ${(u.residentShare * 100).toFixed(0)} % of users resident${Number.isFinite(u.keptStateShare) ? ` (stateless states kept ${(u.keptStateShare * 100).toFixed(0)} %)` : ''}, ${u.snapshotsPerThousand.toFixed(0)} snapshots and ${u.deadlinesPerThousand.toFixed(0)} deadline re-evaluations per 1,000 events` : '');

const describe = (r: LoadResult): string =>
  `${Math.round(r.rps).toLocaleString('en')} req/s, p50 ${r.latency.p50.toFixed(2)} ms, p99 ${r.latency.p99.toFixed(2)} ms` +
  (r.non2xx + r.errors + r.timeouts > 0 ? `, ${r.non2xx} non-2xx ${r.errors} errors ${r.timeouts} timeouts ${JSON.stringify(r.statusCodes)}` : '');

export async function runHttpBenches(options: HttpBenchOptions, progress: Progress): Promise<HttpBenchResult> {
  const dataDir = await mkdtemp(join(tmpdir(), 'audience-bench-'));
  const running: Running[] = [];
  let floorDir: string | undefined;
  const startServer = async (fsync: boolean, threads?: number): Promise<Running> => {
    const server = await startAudience({
      dataDir,
      fsync,
      ...(threads !== undefined && { threads }),
      ...(options.cpuProfileDir !== undefined && { cpuProfileDir: options.cpuProfileDir }),
    });
    running.push(server);
    return server;
  };
  try {
    const baseline = await startBaseline();
    running.push(baseline);
    let server = await startServer(false);
    const keys = server.keys as Keys;
    progress(`server under test ${server.url} (pid ${server.pid}), baseline ${baseline.url} (pid ${baseline.pid}), data ${dataDir}`);
    const { wire } = generateWireCohorts(options.seed, options.cohorts);
    const seedReport = await seedWorkload(server.url, keys, { seed: options.seed, users: options.users, cohorts: wire, connections: options.seedConnections }, progress);
    progress(`seeded ${seedReport.users.toLocaleString('en')} users, ${seedReport.events.toLocaleString('en')} events in ${seedReport.seconds.toFixed(0)} s`);

    const track = new TrackBodies(options.seed, options.users);
    const trackTarget = (url: string): LoadTarget => ({ url, path: '/v2.0/events', headers: { 'x-api-key': keys.publicKey }, body: () => track.next() });
    // A restarted server holds no user in memory; a long-running one holds its active users, and their aliases in
    // its identity cache. One track call per user first, naming both its id and its alias (bound at seeding, so
    // nothing is written), so the --fsync and threads rows measure their setting, not loading every state from
    // LevelDB nor reading each alias the first time a call names it.
    const warm = async (label: string): Promise<void> => {
      const warmed = await sendAll(server.url, '/v2.0/events', { 'x-api-key': keys.publicKey }, options.users, (i) => track.firstFor(i), { connections: options.load.connections });
      if (warmed.failures > 0) throw new Error(`warming ${label}: ${warmed.failures} track calls failed, the first: ${warmed.firstFailure ?? ''}`);
      progress(`  ${label}: one track call for each of ${options.users.toLocaleString('en')} users first (${Math.round(warmed.rps).toLocaleString('en')} req/s)`);
    };
    const settle = async (label: string): Promise<void> => {
      const waited = await waitForIdle(server.pid, 60);
      if (waited > 2) progress(`  (${label}: waited ${waited.toFixed(0)} s for the server to go idle)`);
    };
    const pair = async (name: string, [runs, baselineRuns, usages]: Runs, target: (url: string) => LoadTarget, run: number): Promise<void> => {
      const b = await runLoad(target(baseline.url), options.load);
      baselineRuns.push(b);
      progress(`  ${name} run ${run}/${options.runs}: baseline ${describe(b)}`);
      await settle(name);
      const { result: r, usage } = await withUsage(server, () => runLoad(target(server.url), options.load));
      runs.push(r);
      usages.push(usage);
      progress(`  ${name} run ${run}/${options.runs}: audience ${describe(r)}  (ratio ${(r.rps / b.rps).toFixed(3)}; ${describeUsage(usage)})`);
    };

    // A server's stateless calls pass back the states that server prepared (one call without state per user).
    const statelessTargetOf = (prepared: readonly { id: string; state: string }[], bodies: StatelessBodies) => (url: string): LoadTarget => ({
      url,
      path: '/ccs/v1/segmentation/stateless',
      headers: { 'x-api-key': keys.publicKey },
      body: () => {
        const user = prepared[bodies.pickIndex(prepared.length)] as { id: string; state: string };
        return bodies.withState(user.id, user.state);
      },
    });
    let statelessTarget: ((url: string) => LoadTarget) | undefined;
    let stateBytes = 0;
    let wholeStateBytes = 0;
    if (options.which.stateless) {
      progress(`preparing ${options.statelessUsers.toLocaleString('en')} stateless users' states`);
      const stateless = new StatelessBodies(options.seed);
      const prepared = await prepareStates(server.url, keys.publicKey, options, stateless);
      wholeStateBytes = prepared.reduce((sum, p) => sum + Buffer.byteLength(p.state), 0) / prepared.length;
      stateBytes = prepared.reduce((sum, p) => sum + Buffer.byteLength(JSON.stringify((JSON.parse(p.state) as { internal_state: unknown }).internal_state)), 0) / prepared.length;
      statelessTarget = statelessTargetOf(prepared, stateless);
    }

    await settle('after seeding');
    const ingest: Runs = [[], [], []];
    const statelessRuns: Runs = [[], [], []];
    for (let run = 1; run <= options.runs; run++) {
      if (options.which.ingest) await pair('ingest', ingest, trackTarget, run);
      if (statelessTarget !== undefined) await pair('stateless', statelessRuns, statelessTarget, run);
    }

    const result: { -readonly [K in keyof HttpBenchResult]: HttpBenchResult[K] } = { seedReport, dataDirBytes: 0 };
    if (options.which.ingest) result.ingest = compare(...ingest);
    if (statelessTarget !== undefined) result.stateless = { ...compare(...statelessRuns), stateBytes, wholeStateBytes };

    if (options.which.fsync) {
      await server.stop();
      server = await startServer(true);
      const via = 'audience serve --fsync';
      progress(`restarted the server with fsync (${via}), same data`);
      await warm('fsync start');
      await settle('fsync start');
      const fsync: Runs = [[], [], []];
      for (let run = 1; run <= options.runs; run++) await pair('ingest --fsync', fsync, trackTarget, run);
      result.fsync = { ...compare(...fsync), via };
    }
    if (options.which.threads) {
      const sweep: (Comparison & { threads: number })[] = [];
      for (const threads of options.threadsSweep) {
        await server.stop();
        server = await startServer(false, threads);
        progress(`restarted the server with --threads ${threads}, same data`);
        await warm(`threads ${threads} start`);
        await settle(`threads ${threads} start`);
        const runs: Runs = [[], [], []];
        for (let run = 1; run <= options.runs; run++) await pair(`ingest --threads ${threads}`, runs, trackTarget, run);
        sweep.push({ ...compare(...runs), threads });
      }
      result.threads = sweep;
    }
    await server.stop();
    result.dataDirBytes = await directoryBytes(dataDir);
    if (options.which.floor) {
      floorDir = await mkdtemp(join(tmpdir(), 'audience-bench-floor-'));
      server = await startFloor(floorDir, ['--engine']);
      running.push(server);
      progress(`the floor (bench/floor-server.ts --engine, pid ${server.pid}) on a fresh data dir, the same track calls`);
      await warm('floor start');
      await settle('floor start');
      const runs: Runs = [[], [], []];
      for (let run = 1; run <= options.runs; run++) await pair('floor --engine', runs, trackTarget, run);
      // Its usage is the process's CPU alone: it serves no /metrics.
      result.floor = compare(...runs);
      progress(`the floor: preparing ${options.statelessUsers.toLocaleString('en')} stateless users' states, then the same stateless calls`);
      const floorBodies = new StatelessBodies(options.seed);
      const floorTarget = statelessTargetOf(await prepareStates(server.url, keys.publicKey, options, floorBodies), floorBodies);
      await settle('floor stateless');
      const statelessRuns: Runs = [[], [], []];
      for (let run = 1; run <= options.runs; run++) await pair('floor stateless', statelessRuns, floorTarget, run);
      result.floorStateless = compare(...statelessRuns);
      await server.stop();
    }
    return result;
  } finally {
    for (const process of running) await process.stop();
    await rm(dataDir, { recursive: true, force: true });
    if (floorDir !== undefined) await rm(floorDir, { recursive: true, force: true });
  }
}

/** One call without state per stateless user; keeps the returned state (JSON text) to pass back. */
async function prepareStates(url: string, publicKey: string, options: HttpBenchOptions, bodies: StatelessBodies): Promise<Array<{ id: string; state: string }>> {
  const out: Array<{ id: string; state: string }> = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < options.statelessUsers) {
      const i = next++;
      const id = userIdOf(options.seed, i);
      const response = await fetch(`${url}/ccs/v1/segmentation/stateless`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': publicKey },
        body: bodies.initial(id),
      });
      const json = (await response.json()) as { state?: unknown };
      if (response.status !== 200 || json.state === undefined) throw new Error(`stateless preparation answered ${response.status}: ${JSON.stringify(json).slice(0, 300)}`);
      out.push({ id, state: JSON.stringify(json.state) });
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  return out;
}

async function directoryBytes(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    total += entry.isDirectory() ? await directoryBytes(path) : (await stat(path)).size;
  }
  return total;
}
