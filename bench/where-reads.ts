// How many `where` predicates the engine's generated hooks read per event, over the engine bench's sample plan and
// event pool: every group's predicate readers (and whole tests, for groups kept as one closure) are wrapped in a
// counter before the plan's hot paths are generated, then users' streams run one event per segment call. A count,
// not a time: it shows what a change to when the tests run does, apart from the VM's noise. `--dist DIR` counts
// another build (a copy of dist/ inside this project, as bench/engine-ab.ts takes); several are counted in turn.
// Not part of `npm run bench`.
// Run: npm run build && node dist/bench/where-reads.js [--users N] [--events N] [--dist DIR]...

import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

export interface WhereReadsOptions {
  readonly users: number;
  /** Events per user, one per segment call, users interleaved. */
  readonly events: number;
  readonly seed: number;
}

export const DEFAULT_WHERE_READS: WhereReadsOptions = { users: 2_000, events: 100, seed: 42 };

type EngineModule = typeof import('../engine/index.js');
type GeneratedModule = typeof import('../engine/state/generated.js');
type SampleModule = typeof import('../test/support/sample-cohorts.js');
type Plan = import('../engine/plan/plan.js').Plan;
type FilterGroup = import('../engine/plan/plan.js').FilterGroup;

/** Predicate reads per event of the build in `dist` (this build's modules when undefined). */
export async function countWhereReads(options: WhereReadsOptions = DEFAULT_WHERE_READS, dist?: string): Promise<number> {
  const load = async <M>(path: string): Promise<M> =>
    (await import(dist === undefined ? `../${path}` : pathToFileURL(resolve(dist, path)).href)) as M;
  const { compilePlan, newUserState, segment } = await load<EngineModule>('engine/index.js');
  const { generateHotPaths } = await load<GeneratedModule>('engine/state/generated.js');
  const { SampleGenerator } = await load<SampleModule>('test/support/sample-cohorts.js');
  const gen = new SampleGenerator(options.seed);
  // Compiled without code, its groups' tests wrapped, then generated: the hooks call the wrapped readers.
  const plan = compilePlan(gen.cohorts(100), 1, { generateCode: false });
  let reads = 0;
  for (const groups of plan.byEvent.values()) for (const group of groups) countReads(group, () => reads++);
  const counted: Plan = Object.create(plan, { hot: { value: generateHotPaths(plan) } }) as Plan;
  if (counted.hot === undefined) throw new Error('code generation is unavailable here');
  const contexts = Array.from({ length: 64 }, () => gen.context());
  const pool = gen.events(5_000);
  const states = Array.from({ length: options.users }, () => newUserState());
  for (let round = 0; round < options.events; round++) {
    for (let user = 0; user < options.users; user++) {
      const event = pool[(user * 7919 + round) % pool.length] as (typeof pool)[number];
      segment(counted, states[user] as (typeof states)[number], [event], contexts[user % contexts.length] as (typeof contexts)[number]);
    }
  }
  return reads / (options.users * options.events);
}

/** Wraps the group's predicate readers (or its whole test) so that each call counts one read. */
function countReads(group: FilterGroup, count: () => void): void {
  const mutable = group as { -readonly [K in keyof FilterGroup]: FilterGroup[K] };
  const { parts, test } = mutable;
  if (parts !== undefined) mutable.parts = { ...parts, reads: parts.reads.map((read) => (obj: unknown) => (count(), read(obj))) };
  else if (test !== undefined) mutable.test = (value) => (count(), test(value));
}

async function main(): Promise<void> {
  const options: { -readonly [K in keyof WhereReadsOptions]: WhereReadsOptions[K] } = { ...DEFAULT_WHERE_READS };
  const dists: string[] = [];
  const args = process.argv.slice(2);
  for (let i = 0; i < args.length; i += 2) {
    const [name, value] = [args[i], args[i + 1]];
    if (value === undefined) throw new Error(`${name} needs a value`);
    if (name === '--dist') dists.push(resolve(value));
    else if (name === '--users') options.users = Number(value);
    else if (name === '--events') options.events = Number(value);
    else throw new Error(`unknown option ${name}`);
  }
  for (const dist of dists.length === 0 ? [undefined] : dists) {
    const perEvent = await countWhereReads(options, dist);
    console.log(`${dist ?? 'this build'}: ${perEvent.toFixed(2)} predicate reads per event (${options.users} users, ${options.events} events each)`);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
