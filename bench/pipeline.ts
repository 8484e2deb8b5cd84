// The ingest pipeline alone (server/ingest/pipeline.ts over LevelDB, partition owners in piscina workers as `serve`
// starts them): no HTTP, no route, no identity resolution, no load generator sharing the cores. A closed loop keeps
// K appends in flight (one event each, the HTTP benchmark's track events for random users of a seeded population,
// the bench's 100 cohorts, no imported data), for several K, and reports per K the appends per second, the
// process's CPU per append (every thread: main, owners, LevelDB's, V8's), its main thread's and its busiest other
// thread's (the partition owner with one), and events per group.
// A group's CPU grows with its events: the least-squares line over the runs splits the cost into a part per group
// (a task to each owner and back, one store batch, the bookkeeping around them) and a part per event, which is what
// sets the price of an append at the group sizes the HTTP benchmark reaches (bench/README.md's usage table).
// Run: npm run build && node --max-semi-space-size=32 dist/bench/pipeline.js [--users N] [--in-flight 1,5,20,50]
// [--appends N] [--rounds R] [--threads N]

import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { newEvent, validateTrackBody, type NewEvent } from '../server/domain/events/index.js';
import { openIngestPipeline, type Pipeline } from '../server/ingest/pipeline.js';
import { openLevelStore } from '../server/store/level.js';
import { MapContexts, MapPlans } from '../test/support/ingest.js';
import { threadCpuTicks } from './processes.js';
import { median, roundOrder } from './stats.js';
import { generateWireCohorts } from './workload/cohorts.js';
import { TrackBodies, userIdOf } from './workload/bodies.js';

const ORG = 'a0000000-0000-4000-8000-00000000be11';
const SEED = 7;
/** Clock ticks per second of /proc's CPU times. */
const TICKS = 100;

export interface PipelineBenchOptions {
  readonly users: number;
  /** Appends in flight, one run each per round (in this order, then reversed in the next round). */
  readonly inFlight: readonly number[];
  /** Appends per run (K = 1 runs a fifth of them: each waits for its own group). */
  readonly appends: number;
  readonly rounds: number;
  /** Partition owners (`serve --threads`); 0 evaluates in the main thread. */
  readonly threads: number;
}

export const DEFAULT_PIPELINE_BENCH: PipelineBenchOptions = { users: 5_000, inFlight: [1, 5, 20, 50], appends: 15_000, rounds: 2, threads: 1 };

export interface PipelineRun {
  readonly inFlight: number;
  readonly appendsPerSecond: number;
  /** Microseconds of CPU per append: the process (every thread), its main thread, its busiest other thread (the owner). */
  readonly cpuUs: number;
  readonly mainCpuUs: number;
  readonly busiestOtherCpuUs: number;
  readonly eventsPerGroup: number;
  /** Microseconds of CPU per group: the process, its main thread. */
  readonly groupCpuUs: number;
  readonly groupMainCpuUs: number;
}

/** CPU per group = perGroup + perEvent x events, least squares over the runs (microseconds). */
export interface CostLine {
  readonly perGroupUs: number;
  readonly perEventUs: number;
}

export interface PipelineBenchResult {
  readonly settings: PipelineBenchOptions;
  readonly runs: readonly PipelineRun[];
  /** Undefined when every run had the same group size (one in-flight count): no line through one point. */
  readonly process: CostLine | undefined;
  readonly main: CostLine | undefined;
}

export async function runPipelineBench(overrides: Partial<PipelineBenchOptions> = {}, progress: (line: string) => void = () => undefined): Promise<PipelineBenchResult> {
  const settings = { ...DEFAULT_PIPELINE_BENCH, ...overrides };
  const dir = await mkdtemp(join(tmpdir(), 'audience-bench-pipeline-'));
  const store = await openLevelStore(dir);
  let pipeline: Pipeline | undefined;
  try {
    pipeline = await openIngestPipeline({
      store,
      plans: new MapPlans(ORG, generateWireCohorts(SEED, 100).definitions),
      contexts: new MapContexts(),
      threads: settings.threads,
    });
    let groups = 0;
    pipeline.onCommitted(() => {
      groups += 1;
    });
    const events = new EventSource(settings.users);
    const run = pipeline;
    // The appends of a run are made before it is timed (what the route would hand over), then sent K at a time.
    const loop = async (inFlight: number, appends: readonly Append[]): Promise<void> => {
      let sent = 0;
      const client = async (): Promise<void> => {
        while (sent < appends.length) {
          const { user, event } = appends[sent++] as Append;
          await run.append({ org: ORG, user, events: [event] });
        }
      };
      await Promise.all(Array.from({ length: inFlight }, client));
    };
    // Every user resident before the measured runs, as in a server that has been running.
    await loop(50, events.take(settings.users * 2));
    const runs: PipelineRun[] = [];
    for (let round = 0; round < settings.rounds; round++) {
      const order = roundOrder(settings.inFlight, round);
      for (const inFlight of order) {
        const appends = events.take(inFlight === 1 ? Math.max(1, Math.floor(settings.appends / 5)) : settings.appends);
        const groupsBefore = groups;
        const cpuBefore = process.cpuUsage();
        const threadsBefore = await threadCpuTicks(process.pid);
        const start = performance.now();
        await loop(inFlight, appends);
        const count = appends.length;
        const seconds = (performance.now() - start) / 1000;
        const cpu = process.cpuUsage(cpuBefore);
        const threadsAfter = await threadCpuTicks(process.pid);
        const mainUs = ((threadsAfter.main - threadsBefore.main) / TICKS) * 1e6;
        let busiestTicks = 0;
        for (const [tid, ticks] of threadsAfter.others) busiestTicks = Math.max(busiestTicks, ticks - (threadsBefore.others.get(tid) ?? 0));
        const cpuUs = cpu.user + cpu.system;
        const groupCount = Math.max(1, groups - groupsBefore);
        const result: PipelineRun = {
          inFlight,
          appendsPerSecond: count / seconds,
          cpuUs: cpuUs / count,
          mainCpuUs: mainUs / count,
          busiestOtherCpuUs: ((busiestTicks / TICKS) * 1e6) / count,
          eventsPerGroup: count / groupCount,
          groupCpuUs: cpuUs / groupCount,
          groupMainCpuUs: mainUs / groupCount,
        };
        runs.push(result);
        progress(formatRun(result));
      }
    }
    return {
      settings,
      runs,
      process: costLine(runs.map((r) => [r.eventsPerGroup, r.groupCpuUs])),
      main: costLine(runs.map((r) => [r.eventsPerGroup, r.groupMainCpuUs])),
    };
  } finally {
    await pipeline?.close();
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
}

interface Append {
  readonly user: string;
  readonly event: NewEvent;
}

/** The HTTP benchmark's track events (bench/workload/bodies.ts), validated as the route does, for random users. */
class EventSource {
  private readonly bodies: TrackBodies;
  private readonly users: string[];
  private random = 0x2545f491;

  constructor(users: number) {
    this.bodies = new TrackBodies(SEED, users);
    this.users = Array.from({ length: users }, (_, i) => userIdOf(SEED, i));
  }

  take(count: number): Append[] {
    return Array.from({ length: count }, () => this.next());
  }

  private next(): Append {
    // xorshift32: a fixed sequence of users, independent of the bodies' own choices.
    this.random ^= this.random << 13;
    this.random ^= this.random >>> 17;
    this.random ^= this.random << 5;
    const i = (this.random >>> 0) % this.users.length;
    const input = validateTrackBody(JSON.parse(this.bodies.forUser(i)), new Date());
    return { user: this.users[i] as string, event: newEvent(input, randomUUID) };
  }
}

function costLine(points: readonly (readonly [number, number])[]): CostLine | undefined {
  const n = points.length;
  if (new Set(points.map(([x]) => x.toFixed(1))).size < 2) return undefined;
  const mx = points.reduce((sum, [x]) => sum + x, 0) / n;
  const my = points.reduce((sum, [, y]) => sum + y, 0) / n;
  let sxy = 0;
  let sxx = 0;
  for (const [x, y] of points) {
    sxy += (x - mx) * (y - my);
    sxx += (x - mx) * (x - mx);
  }
  const perEventUs = sxy / sxx;
  return { perGroupUs: my - perEventUs * mx, perEventUs };
}

function formatRun(r: PipelineRun): string {
  return (
    `${String(r.inFlight).padStart(3)} in flight: ${Math.round(r.appendsPerSecond).toLocaleString('en-US')} appends/s, ` +
    `CPU ${Math.round(r.cpuUs)} us/append (main thread ${Math.round(r.mainCpuUs)}, busiest other ${Math.round(r.busiestOtherCpuUs)}), ` +
    `${r.eventsPerGroup.toFixed(1)} events/group, ${Math.round(r.groupCpuUs)} us/group (main ${Math.round(r.groupMainCpuUs)})`
  );
}

function parseArgs(argv: readonly string[]): Partial<PipelineBenchOptions> {
  const out: { -readonly [K in keyof PipelineBenchOptions]?: PipelineBenchOptions[K] } = {};
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (value === undefined) throw new Error(`${flag}: a value is missing`);
    const number = (): number => {
      const n = Number(value);
      if (!Number.isSafeInteger(n) || n < 0) throw new Error(`${flag}: expected a whole number, not "${value}"`);
      return n;
    };
    if (flag === '--users') out.users = Math.max(1, number());
    else if (flag === '--appends') out.appends = Math.max(1, number());
    else if (flag === '--rounds') out.rounds = Math.max(1, number());
    else if (flag === '--threads') out.threads = number();
    else if (flag === '--in-flight') {
      out.inFlight = value.split(',').map((part) => {
        const n = Number(part);
        if (!Number.isSafeInteger(n) || n < 1) throw new Error(`--in-flight: expected whole numbers >= 1, not "${part}"`);
        return n;
      });
    } else throw new Error(`unknown argument "${flag}"; usage: node dist/bench/pipeline.js [--users N] [--in-flight 1,5,20,50] [--appends N] [--rounds R] [--threads N]`);
  }
  return out;
}

async function main(): Promise<void> {
  const result = await runPipelineBench(parseArgs(process.argv.slice(2)), (line) => console.log(line));
  const byK = new Map<number, PipelineRun[]>();
  for (const run of result.runs) byK.set(run.inFlight, [...(byK.get(run.inFlight) ?? []), run]);
  console.log('\n| in flight | appends/s | CPU per append | main thread per append | busiest other thread per append | events per group |');
  console.log('|---|---|---|---|---|---|');
  for (const [k, runs] of byK) {
    const m = (pick: (run: PipelineRun) => number): number => median(runs.map(pick));
    console.log(`| ${k} | ${Math.round(m((r) => r.appendsPerSecond)).toLocaleString('en-US')} | ${Math.round(m((r) => r.cpuUs))} µs | ${Math.round(m((r) => r.mainCpuUs))} µs | ${Math.round(m((r) => r.busiestOtherCpuUs))} µs | ${m((r) => r.eventsPerGroup).toFixed(1)} |`);
  }
  if (result.process !== undefined && result.main !== undefined) {
    const line = (cost: CostLine): string => `${Math.round(cost.perGroupUs)} µs per group + ${Math.round(cost.perEventUs)} µs per event`;
    console.log(`\nCPU per group, least squares over the ${result.runs.length} runs: process ${line(result.process)}; main thread ${line(result.main)}`);
  } else console.log('\nCPU per group: a line needs runs of two group sizes at least (--in-flight with two counts)');
  console.log(JSON.stringify({ settings: result.settings, process: result.process, main: result.main }));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : String(error));
    process.exit(1);
  });
}
