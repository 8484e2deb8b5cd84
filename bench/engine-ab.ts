// An A/B comparison of the engine in process: two (or more) builds' `bench/engine.js`, run in turn for several
// rounds, the order reversed every other round, so that each build meets the VM's slow and fast minutes alike. Run to
// run the engine figure moves by ±10 % on a shared 2-core machine, more than most single changes; what a change is
// worth is read from the pairs (how many rounds the candidate won) and the medians, not from two full runs.
// A build is a copy of dist/ inside this project (so that its imports find node_modules), e.g.
//   npm run build && cp -r dist ab/before   # then change the code, npm run build again
//   node dist/bench/engine-ab.js --variant before=ab/before --variant after=dist --rounds 8
// `--rounds N` (default 6); every other argument goes to bench/engine.js unchanged (default: the quick settings
// `--runs 3 --largeUsers 0 --longHistory 1000 --referenceHistory 10 --historyRepetitions 1 --referenceUsers 1`;
// add `--largeUsers 100000` for the large working set). Prints one line per run, then per variant the medians and,
// against the first variant, the rounds won.

import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { compareVariants, median, roundsWonText, type VariantComparison } from './stats.js';
import { parseAbArgs, runRounds } from './variants.js';

const run = promisify(execFile);

export interface EngineVariant {
  readonly name: string;
  /** A dist/ directory holding bench/engine.js. */
  readonly dist: string;
}

export interface EngineAbRun {
  readonly variant: string;
  readonly round: number;
  readonly eventsPerSecond: number;
  readonly eventsPerCpuSecond: number;
  /** At the large working set, when the settings ask for one. */
  readonly largeEventsPerSecond: number | undefined;
}

/** A variant's medians and, on events/s against the first variant, its rounds won and change (stats.ts). */
export interface EngineAbSummary extends Omit<VariantComparison, 'median'> {
  readonly variant: string;
  readonly eventsPerSecond: number;
  readonly eventsPerCpuSecond: number;
  readonly largeEventsPerSecond: number | undefined;
}

export const QUICK_ENGINE_SETTINGS: readonly string[] = ['--runs', '3', '--largeUsers', '0', '--longHistory', '1000', '--referenceHistory', '10', '--historyRepetitions', '1', '--referenceUsers', '1'];

/** Medians per variant and, against the first, the rounds won and the change of the medians. */
export function summarise(variants: readonly EngineVariant[], runs: readonly EngineAbRun[]): EngineAbSummary[] {
  const names = variants.map(({ name }) => name);
  const rate = compareVariants(names, runs, (r) => r.eventsPerSecond);
  return names.map((name, i) => {
    const own = runs.filter((r) => r.variant === name);
    const large = own.map((r) => r.largeEventsPerSecond).filter((v): v is number => v !== undefined);
    const { median: eventsPerSecond, roundsWon, roundsCompared, change } = rate[i] as VariantComparison;
    return {
      variant: name,
      eventsPerSecond,
      eventsPerCpuSecond: median(own.map((r) => r.eventsPerCpuSecond)),
      largeEventsPerSecond: large.length === 0 ? undefined : median(large),
      roundsWon,
      roundsCompared,
      change,
    };
  });
}

async function runOnce(variant: EngineVariant, round: number, settings: readonly string[]): Promise<EngineAbRun> {
  const script = resolve(variant.dist, 'bench', 'engine.js');
  const { stdout } = await run(process.execPath, [script, ...settings], { maxBuffer: 64 * 1024 * 1024 });
  const result = JSON.parse(stdout) as { eventsPerSecond: number; eventsPerCpuSecond: number; largeWorkingSet?: { eventsPerSecond: number } };
  return {
    variant: variant.name,
    round,
    eventsPerSecond: result.eventsPerSecond,
    eventsPerCpuSecond: result.eventsPerCpuSecond,
    largeEventsPerSecond: result.largeWorkingSet?.eventsPerSecond,
  };
}

export async function runEngineAb(variants: readonly EngineVariant[], rounds: number, settings: readonly string[], log: (line: string) => void): Promise<EngineAbSummary[]> {
  const describe = (result: EngineAbRun): string => {
    const large = result.largeEventsPerSecond === undefined ? '' : `, ${Math.round(result.largeEventsPerSecond).toLocaleString('en-US')} at the large working set`;
    return `${Math.round(result.eventsPerSecond).toLocaleString('en-US')} events/s, ${Math.round(result.eventsPerCpuSecond).toLocaleString('en-US')} per CPU-second${large}`;
  };
  const runs = await runRounds(variants, rounds, (variant, round) => runOnce(variant, round, settings), describe, log);
  return summarise(variants, runs);
}

function parseArgs(argv: readonly string[]): { variants: EngineVariant[]; rounds: number; settings: string[] } {
  const { variants, rounds, settings } = parseAbArgs(argv, 6);
  for (const variant of variants) {
    if (variant.flags.length > 0) throw new Error(`--variant takes NAME=DIST here (no flags), got ${variant.name}=${variant.dist},${variant.flags.join(',')}`);
  }
  return { variants: variants.map(({ name, dist }) => ({ name, dist })), rounds, settings: settings.length === 0 ? [...QUICK_ENGINE_SETTINGS] : settings };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { variants, rounds, settings } = parseArgs(process.argv.slice(2));
  const log = (line: string): void => void process.stdout.write(`${line}\n`);
  log(`engine A/B: ${rounds} rounds, the order reversed every other round; settings: ${settings.join(' ')}`);
  const summary = await runEngineAb(variants, rounds, settings, log);
  for (const s of summary) {
    const large = s.largeEventsPerSecond === undefined ? '' : `, ${Math.round(s.largeEventsPerSecond).toLocaleString('en-US')} at the large working set`;
    const against = s.change === undefined ? '' : `; ${(s.change * 100).toFixed(1)} % against ${summary[0]?.variant}${roundsWonText(s)}`;
    log(`${s.variant}: median ${Math.round(s.eventsPerSecond).toLocaleString('en-US')} events/s, ${Math.round(s.eventsPerCpuSecond).toLocaleString('en-US')} per CPU-second${large}${against}`);
  }
}
