// An A/B comparison on one seeded data directory: two (or more) builds of the server, or one build with different
// `serve` flags, each started in turn over the same data and measured right after a baseline run, for several
// rounds, the order reversed every other round. What `npm run bench` cannot show quickly: whether a change moves
// the ingestion or stateless ratio beyond the run-to-run noise (each variant gets the same data, the same warm-up
// and the same neighbours).
// A build to compare is a copy of dist/ inside this project (so that its imports find node_modules), e.g.
//   npm run build && cp -r dist ab/before   # then change the code, npm run build again
//   node dist/bench/ab.js --variant before=ab/before --variant after=dist --users 100000 --rounds 3
// `--variant NAME=DIST[,FLAG...]` (flags comma-separated: `--variant fsync=dist,--fsync`; a flag `node:OPTION` is
// given to node before the script instead of `npm start`'s (cli/node-options.ts): `--variant v8default=dist,
// node:--max-semi-space-size=16`; a flag `env:NAME=VALUE` sets an environment variable of the server: `--variant
// jemalloc=dist,env:LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2`); DIST `floor` runs this build's floor
// server instead (bench/floor-server.ts: the least a server can do with the calls: `--variant floor=floor` stores
// the track calls, `--variant engine=floor,--engine` also segments them; stateless calls are segmented and their
// events published either way); `--mode ingest|stateless`;
// `--users`, `--rounds`, `--seconds` (measured, after 2 s of warm-up). Prints one line per run and the medians,
// with the server's CPU time per request (all threads, and its main thread, from /proc over the run) and its ingest
// groups (events, time from start to commit and its phases: reads, the owners' round trip, building the writes, the
// write until committed; from /metrics): on a shared machine the
// ratio moves with the neighbours' load, the CPU a request costs less. Each variant after the first is also compared
// with the first round by round (ratio higher, CPU per request lower) with the sign test's p (stats.ts `signTestP`:
// 3 rounds won of 4 is p = 0.63, what two runs of one build gave here). `--rate N` caps the load at N requests per
// second (no baseline runs then, no ratio). It is autocannon's overallRate: each connection sends as fast as it is
// answered until it has made its share of the second, then waits for the next second, so the requests come in a
// burst at the start of each second, not as an even stream. The server is idle the rest of the second, so a
// request's CPU moves less with how busy the two cores are; the latencies are those of the bursts.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { runLoad, sendAll, type LoadSettings, type LoadTarget } from './load.js';
import { startAudience, startBaseline, startFloor, waitForIdle, type Running } from './processes.js';
import { compareVariants, median, roundOrder, roundsWonText, type VariantComparison } from './stats.js';
import { withUsage } from './usage.js';
import { parseVariantArg } from './variants.js';
import { StatelessBodies, TrackBodies, userIdOf } from './workload/bodies.js';
import { generateWireCohorts } from './workload/cohorts.js';
import { seedWorkload } from './workload/seed.js';

export interface Variant {
  readonly name: string;
  /** A dist/ directory holding cli/bin.js. */
  readonly dist: string;
  readonly args: readonly string[];
  /** Node options before the script (none: those `npm start` gives). */
  readonly nodeArgs: readonly string[];
  /** Environment variables of the server, besides the bench's own. */
  readonly env: Readonly<Record<string, string>>;
}

export interface AbOptions {
  readonly variants: readonly Variant[];
  readonly mode: 'ingest' | 'stateless';
  readonly users: number;
  readonly rounds: number;
  readonly seconds: number;
  /** Requests per second of the measured runs (undefined: as fast as answered, against a baseline). */
  readonly rate?: number | undefined;
}

export interface AbRun {
  readonly variant: string;
  readonly round: number;
  readonly rps: number;
  readonly baselineRps: number;
  readonly ratio: number;
  readonly p99: number;
  /** The server's CPU microseconds per answered request (all threads; its main thread), over the run. */
  readonly cpuUs: number;
  readonly mainCpuUs: number;
  /** Events per ingest group, a group's mean time from start to commit and the owners' round trip in it (ms). */
  readonly eventsPerGroup: number;
  readonly groupMs: number;
  readonly ownersMs: number;
  /** The group's other phases (ms): its reads, building its writes, its write until committed. */
  readonly readsMs: number;
  readonly buildMs: number;
  readonly writeMs: number;
}

const SEED = 42;
/** dist/ of this build (this file is dist/bench/ab.js once compiled). */
const THIS_DIST = join(dirname(fileURLToPath(import.meta.url)), '..');
const STATELESS_USERS = 200;

/** A variant whose DIST is this word runs the floor server (bench/floor-server.ts) of this build instead of a build's `serve`. */
const FLOOR = 'floor';

/**
 * `serve` of the variant's build over `dataDir` on an ephemeral port; or the floor server over a fresh temp dir of
 * its own (removed at its stop: it keeps nothing between runs).
 */
async function serve(variant: Variant, dataDir: string): Promise<Running> {
  const nodeArgs = variant.nodeArgs.length > 0 ? variant.nodeArgs : undefined;
  if (variant.dist !== FLOOR) return startAudience({ dataDir, cliBin: join(resolve(variant.dist), 'cli', 'bin.js'), args: variant.args, nodeArgs, env: variant.env });
  const own = await mkdtemp(join(tmpdir(), 'audience-floor-'));
  const removeOwn = (): Promise<void> => rm(own, { recursive: true, force: true });
  const floor = await startFloor(own, variant.args, nodeArgs).catch(async (error: unknown) => {
    await removeOwn();
    throw error;
  });
  return { ...floor, stop: () => floor.stop().then(removeOwn) };
}

export async function runAb(options: AbOptions, log: (line: string) => void): Promise<AbRun[]> {
  if (options.variants.length === 0) throw new Error('at least one --variant is needed');
  // The data is seeded through the first audience build given (this build's when every variant is a floor).
  const first = options.variants.find((variant) => variant.dist !== FLOOR) ?? { name: 'seed', dist: THIS_DIST, args: [], nodeArgs: [], env: {} };
  const dataDir = await mkdtemp(join(tmpdir(), 'audience-ab-'));
  const baseline = await startBaseline();
  const load: LoadSettings = { connections: 50, pipelining: 1, durationSeconds: options.seconds, warmupSeconds: 2, timeoutSeconds: 10, rate: options.rate };
  const runs: AbRun[] = [];
  try {
    let server = await serve(first, dataDir);
    const keys = server.keys;
    if (keys === undefined) throw new Error('the first start printed no keys');
    const { wire } = generateWireCohorts(SEED, 100);
    await seedWorkload(server.url, keys, { seed: SEED, users: options.users, cohorts: wire, connections: 64 }, log);
    const stateless = new StatelessBodies(SEED);
    // As in bench/http.ts, each server under test prepares the states its stateless calls pass back (one call without
    // state per user), so that a server keeps what it sealed (routes/segmentation/recent-states.ts) as it would.
    let prepared: { id: string; state: string }[] = [];
    const prepare = async (url: string): Promise<void> => {
      prepared = [];
      for (let i = 0; i < STATELESS_USERS; i++) {
        const id = userIdOf(SEED, i);
        const response = await fetch(`${url}/ccs/v1/segmentation/stateless`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': keys.publicKey },
          body: stateless.initial(id),
        });
        const json = (await response.json()) as { state?: unknown };
        if (response.status !== 200) throw new Error(`preparing a stateless user answered ${response.status}`);
        prepared.push({ id, state: JSON.stringify(json.state) });
      }
    };
    await server.stop();
    const track = new TrackBodies(SEED, options.users);
    const headers = { 'x-api-key': keys.publicKey };
    const target = (url: string): LoadTarget =>
      options.mode === 'ingest'
        ? { url, path: '/v2.0/events', headers, body: () => track.next() }
        : {
            url,
            path: '/ccs/v1/segmentation/stateless',
            headers,
            body: () => {
              const user = prepared[stateless.pickIndex(prepared.length)] as { id: string; state: string };
              return stateless.withState(user.id, user.state);
            },
          };
    for (let round = 1; round <= options.rounds; round++) {
      // The order reversed every other round (stats.ts), so that no variant always runs first: run in one order, two
      // variants of one build gave the second 8 % less CPU per request at the medians, in 5 of 6 rounds (p = 0.22;
      // docs/performance.md, How changes are judged).
      for (const variant of roundOrder(options.variants, round - 1)) {
        server = await serve(variant, dataDir);
        try {
          // As the bench's restarted servers: one track call per user first, naming its id and its alias, so the users
          // are resident and their aliases cached (bench/http.ts `warm`).
          await sendAll(server.url, '/v2.0/events', headers, options.users, (i) => track.firstFor(i), { connections: 50 });
          if (options.mode === 'stateless') await prepare(server.url);
          await waitForIdle(server.pid, 60);
          const b = options.rate === undefined ? await runLoad(target(baseline.url), load) : undefined;
          await waitForIdle(server.pid, 60);
          const { result: a, usage } = await withUsage(server, () => runLoad(target(server.url), load));
          const perRequest = (cores: number): number => (cores / a.rps) * 1e6;
          const run: AbRun = {
            variant: variant.name,
            round,
            rps: a.rps,
            baselineRps: b?.rps ?? Number.NaN,
            ratio: b === undefined ? Number.NaN : a.rps / b.rps,
            p99: a.latency.p99,
            cpuUs: perRequest(usage.serverCores),
            mainCpuUs: perRequest(usage.mainCores),
            eventsPerGroup: usage.eventsPerGroup,
            groupMs: usage.groupMs,
            ownersMs: usage.ownersMs,
            readsMs: usage.readsMs,
            buildMs: usage.buildMs,
            writeMs: usage.writeMs,
          };
          runs.push(run);
          log(
            `round ${round} ${variant.name}: ${Math.round(a.rps)} req/s, ${b === undefined ? 'fixed rate' : `baseline ${Math.round(b.rps)}, ratio ${run.ratio.toFixed(3)}`}, ` +
              `p99 ${a.latency.p99.toFixed(1)} ms, server CPU ${Math.round(run.cpuUs)} µs/request (main thread ${Math.round(run.mainCpuUs)}), ` +
              `${Number.isFinite(run.eventsPerGroup) ? `groups of ${run.eventsPerGroup.toFixed(1)} events in ${run.groupMs.toFixed(2)} ms` : 'no ingest groups reported'}${Number.isFinite(run.ownersMs) ? ` (reads ${run.readsMs.toFixed(2)}, owners ${run.ownersMs.toFixed(2)}, build ${run.buildMs.toFixed(2)}, write ${run.writeMs.toFixed(2)})` : ''}${Number.isFinite(usage.residentShare) ? `, users resident ${(usage.residentShare * 100).toFixed(1)} %, per 1,000 events ${usage.snapshotsPerThousand.toFixed(0)} snapshots and ${usage.deadlinesPerThousand.toFixed(0)} re-evaluations` : ''}${Number.isFinite(usage.keptStateShare) ? `, stateless states kept ${(usage.keptStateShare * 100).toFixed(0)} %` : ''}, non-2xx ${a.non2xx}`,
          );
        } finally {
          await server.stop();
        }
      }
    }
    return runs;
  } finally {
    await baseline.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

function parseArgs(argv: readonly string[]): AbOptions {
  const variants: Variant[] = [];
  let mode: AbOptions['mode'] = 'ingest';
  let users = 5_000;
  let rounds = 3;
  let seconds = 8;
  let rate: number | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--help' || arg === '-h') {
      process.stdout.write(`${USAGE}\n`);
      process.exit(0);
    }
    const value = argv[i + 1];
    if (value === undefined) throw new Error(`${arg} needs a value`);
    i++;
    if (arg === '--variant') {
      const { name, dist, flags } = parseVariantArg(value);
      const args = flags.filter((flag) => !flag.startsWith('node:') && !flag.startsWith('env:'));
      const nodeArgs = flags.filter((flag) => flag.startsWith('node:')).map((flag) => flag.slice('node:'.length));
      const env: Record<string, string> = {};
      for (const flag of flags.filter((f) => f.startsWith('env:'))) {
        const [key, setting] = flag.slice('env:'.length).split(/=(.*)/s);
        if (!key || setting === undefined) throw new Error(`env:NAME=VALUE, not "${flag}"`);
        env[key] = setting;
      }
      variants.push({ name, dist, args, nodeArgs, env });
    } else if (arg === '--mode' && (value === 'ingest' || value === 'stateless')) mode = value;
    else if (arg === '--users') users = Number(value);
    else if (arg === '--rounds') rounds = Number(value);
    else if (arg === '--seconds') seconds = Number(value);
    else if (arg === '--rate') rate = Number(value);
    else throw new Error(`unknown argument ${arg}`);
  }
  for (const [name, n] of [['--users', users], ['--rounds', rounds], ['--seconds', seconds]] as const) {
    if (!Number.isSafeInteger(n) || n < 1) throw new Error(`${name} must be a positive integer`);
  }
  if (rate !== undefined && !(Number.isSafeInteger(rate) && rate >= 1)) throw new Error('--rate must be a positive integer');
  return { variants, mode, users, rounds, seconds, rate };
}

const USAGE =
  'usage: node dist/bench/ab.js --variant NAME=DIST[,FLAG...] [--variant ...] [--mode ingest|stateless] [--users N] [--rounds N]\n' +
  '       [--seconds N] [--rate N]; DIST is a copy of dist/ or `floor` (bench/floor-server.ts); a FLAG is a serve flag (--fsync),\n' +
  '       node:OPTION or env:NAME=VALUE (the header of bench/ab.ts)';

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  let options: AbOptions;
  try {
    options = parseArgs(process.argv.slice(2));
    if (options.variants.length === 0) throw new Error('at least one --variant is needed');
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n${USAGE}\n`);
    process.exit(2);
  }
  const runs = await runAb(options, (line) => process.stdout.write(`${line}\n`));
  const names = options.variants.map(({ name }) => name);
  const ratio = compareVariants(names, runs, (run) => run.ratio);
  const cpuPerRequest = compareVariants(names, runs, (run) => run.cpuUs, true);
  const percent = (change: number | undefined): string => `${((change ?? 0) * 100).toFixed(1)} %`;
  options.variants.forEach((variant, i) => {
    const own = runs.filter((run) => run.variant === variant.name);
    const ratios = own.map((run) => run.ratio.toFixed(3)).join(', ');
    const cpu = own.map((run) => Math.round(run.cpuUs)).join(', ');
    const r = ratio[i] as VariantComparison;
    const c = cpuPerRequest[i] as VariantComparison;
    const against =
      i === 0 ? '' : `; against ${names[0]}: ratio ${percent(r.change)}${roundsWonText(r, 'higher')}, server CPU ${percent(c.change)}${roundsWonText(c, 'lower')}`;
    process.stdout.write(
      `${variant.name}: median ratio ${median(own.map((run) => run.ratio)).toFixed(3)} (${ratios}), median p99 ${median(own.map((run) => run.p99)).toFixed(1)} ms, ` +
        `median server CPU ${Math.round(median(own.map((run) => run.cpuUs)))} µs/request (${cpu}), main thread ${Math.round(median(own.map((run) => run.mainCpuUs)))}${against}\n`,
    );
  });
}
