// A partition owner's work alone, in process (no threads, no store, no HTTP): tasks as the main thread packs them
// (server/ingest/worker/messages.ts), each unpacked, run (work.ts `runWork`) and its reply packed, as worker.ts
// does. Resident users of the sample generator's 100 cohorts, each with the imported data the generator gives
// (segments, connections rows) or none, one event per user per task, users interleaved. Prints µs of CPU per event
// in each part, per round, and their medians. Builds given with `--dist` are compared in alternating rounds (a copy
// of dist/ inside this project, as bench/ab.ts takes), so a change to the owner can be judged apart from the HTTP
// runs' noise. Not part of `npm run bench`.
// Run: npm run build && node --max-semi-space-size=32 dist/bench/owner.js [--users N] [--per-task N] [--rounds N]
// [--with-data SHARE] [--decoded-states N] [--context-each-task] [--dist DIR]... (`--decoded-states`: the owner's packed
// tier, as serve's; `--context-each-task`: every task carries each user's imported data, as before 2026-12-05)

import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { median } from './stats.js';

export interface OwnerBenchOptions {
  readonly users: number;
  readonly perTask: number;
  readonly rounds: number;
  /** Share of the users with imported data (0–1). */
  readonly withData: number;
  /** dist/ directories to compare (their server/ingest modules are the ones measured). */
  readonly dists: readonly string[];
  /** `serve --decoded-states`: states each owner keeps decoded, the others packed (undefined: all decoded). */
  readonly decodedStates?: number;
  /**
   * Send each resident user's imported data with every task, as builds before 2026-12-05 did (and must be given:
   * they cannot take a task without it). By default a resident user's unchanged data crosses as null, as serve's
   * main thread sends it (tick.ts `unchangedContext`).
   */
  readonly contextEachTask?: boolean;
}

export interface OwnerRound {
  readonly dist: string;
  readonly round: number;
  /** µs of CPU per event: unpacking the task, runWork, packing the reply. */
  readonly unpack: number;
  readonly run: number;
  readonly pack: number;
  readonly total: number;
}

type WorkModule = typeof import('../server/ingest/worker/work.js');
type ResidentsModule = typeof import('../server/ingest/worker/resident-states.js');
type ContextModule = typeof import('../server/ingest/tick/context.js');
type MessagesModule = typeof import('../server/ingest/worker/messages.js');
type SampleModule = typeof import('../test/support/sample-cohorts.js');

const ORG = 'a0000000-0000-4000-8000-00000000a001';

/** One build's owner, its residents warmed (every user's state created by a first task). */
async function ownerOf(dist: string, options: OwnerBenchOptions): Promise<(round: number) => OwnerRound> {
  const load = async <M>(path: string): Promise<M> => (await import(pathToFileURL(resolve(dist, path)).href)) as M;
  const { PlanCache, runWork } = await load<WorkModule>('server/ingest/worker/work.js');
  const { ResidentStates } = await load<ResidentsModule>('server/ingest/worker/resident-states.js');
  const { captureContext, probesOf, EMPTY_CONTEXT_DATA } = await load<ContextModule>('server/ingest/tick/context.js');
  const { packMessage, unpackMessage } = await load<MessagesModule>('server/ingest/worker/messages.js');
  const { SampleGenerator } = await load<SampleModule>('test/support/sample-cohorts.js');
  const gen = new SampleGenerator(42);
  const cohorts = gen.cohorts(100);
  const probes = probesOf(cohorts);
  const every = options.withData > 0 ? Math.max(1, Math.round(1 / options.withData)) : 0;
  const data = Array.from({ length: options.users }, (_, u) => (every > 0 && u % every === 0 ? captureContext(gen.context(), probes) : EMPTY_CONTEXT_DATA));
  const pool = gen.events(5_000);
  const plans = new PlanCache();
  const residents = new ResidentStates(options.decodedStates);
  let time = Date.UTC(2026, 0, 1);
  let next = 0;
  const cpu = (): number => {
    const used = process.cpuUsage();
    return used.user + used.system;
  };
  const pass = (resident: boolean): { unpack: number; run: number; pack: number } => {
    const spent = { unpack: 0, run: 0, pack: 0 };
    for (let first = 0; first < options.users; first += options.perTask) {
      const users = [];
      for (let u = first; u < Math.min(options.users, first + options.perTask); u++) {
        time += 10;
        const event = { ...(pool[next++ % pool.length] as (typeof pool)[number]), time };
        const ctx = resident && options.contextEachTask !== true ? null : (data[u] as (typeof data)[number]);
        users.push({ key: `${ORG}!user-${u}`, resident, state: null, replay: [], snapshot: false, steps: [{ kind: 'events' as const, events: [event] }], ctx });
      }
      const bytes = packMessage({ groups: [{ org: ORG, version: 1, ...(resident ? {} : { cohorts }), users }] });
      const t0 = cpu();
      const task = unpackMessage<Parameters<typeof runWork>[0]>(bytes);
      const t1 = cpu();
      const reply = runWork(task, plans, residents);
      const t2 = cpu();
      if (packMessage(reply).byteLength === 0 || !('groups' in reply)) throw new Error('the owner answered no groups');
      const t3 = cpu();
      spent.unpack += t1 - t0;
      spent.run += t2 - t1;
      spent.pack += t3 - t2;
    }
    return spent;
  };
  pass(false);
  return (round) => {
    const spent = pass(true);
    const per = (us: number): number => Math.round((us / options.users) * 100) / 100;
    return { dist, round, unpack: per(spent.unpack), run: per(spent.run), pack: per(spent.pack), total: per(spent.unpack + spent.run + spent.pack) };
  };
}

export async function runOwnerBench(options: OwnerBenchOptions, log: (line: string) => void): Promise<OwnerRound[]> {
  const owners = [];
  for (const dist of options.dists) owners.push(await ownerOf(dist, options));
  const rounds: OwnerRound[] = [];
  for (let round = 1; round <= options.rounds; round++) {
    const order = round % 2 === 1 ? owners : [...owners].reverse();
    for (const owner of order) {
      const result = owner(round);
      rounds.push(result);
      log(`round ${round} ${result.dist}: unpack ${result.unpack} + runWork ${result.run} + pack ${result.pack} = ${result.total} µs of CPU per event`);
    }
  }
  for (const dist of options.dists) {
    const mine = rounds.filter((r) => r.dist === dist);
    const m = (pick: (r: OwnerRound) => number): string => median(mine.map(pick)).toFixed(2);
    log(`${dist}: medians unpack ${m((r) => r.unpack)}, runWork ${m((r) => r.run)}, pack ${m((r) => r.pack)}, total ${m((r) => r.total)} µs per event`);
  }
  return rounds;
}

export function parseOwnerArgs(argv: readonly string[], ownDist: string): OwnerBenchOptions {
  const options: { users: number; perTask: number; rounds: number; withData: number; dists: string[]; decodedStates?: number; contextEachTask?: boolean } = { users: 30_000, perTask: 20, rounds: 6, withData: 1 / 3, dists: [] };
  for (let i = 0; i < argv.length; i += 2) {
    const name = argv[i];
    if (name === '--context-each-task') {
      options.contextEachTask = true;
      i -= 1;
      continue;
    }
    const value = argv[i + 1];
    if (value === undefined) throw new Error(`${name ?? ''}: a value is missing`);
    if (name === '--dist') options.dists.push(resolve(value));
    else if (name === '--decoded-states') {
      const n = Number(value);
      if (!Number.isSafeInteger(n) || n < 1) throw new Error(`--decoded-states: not a valid value: "${value}"`);
      options.decodedStates = n;
    }
    else if (name === '--users' || name === '--per-task' || name === '--rounds' || name === '--with-data') {
      const n = Number(value);
      const share = name === '--with-data';
      if (!Number.isFinite(n) || n < 0 || (share ? n > 1 : !Number.isSafeInteger(n) || n < 1)) throw new Error(`${name}: not a valid value: "${value}"`);
      if (name === '--users') options.users = n;
      else if (name === '--per-task') options.perTask = n;
      else if (name === '--rounds') options.rounds = n;
      else options.withData = n;
    } else throw new Error(`unknown argument "${name ?? ''}"; usage: node dist/bench/owner.js [--users N] [--per-task N] [--rounds N] [--with-data SHARE] [--decoded-states N] [--context-each-task] [--dist DIR]...`);
  }
  if (options.dists.length === 0) options.dists.push(ownDist);
  return options;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const ownDist = resolve(fileURLToPath(new URL('..', import.meta.url)));
  await runOwnerBench(parseOwnerArgs(process.argv.slice(2), ownDist), (line) => process.stdout.write(`${line}\n`));
}
