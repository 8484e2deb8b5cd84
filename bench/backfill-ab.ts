// An A/B comparison of the backfill sweep: two (or more) builds' `bench/backfill.js` (each its own process, with
// serve's Node options), run in turn for several rounds, the order reversed every other round, so that each build
// meets the VM's slow and fast minutes alike. One run of the backfill bench moves by a third between hours here; what
// a change is worth is read from the rounds it won and the medians. A build is a compiled copy of the project whose
// imports find node_modules, e.g. a git worktree:
//   git worktree add ab/before <commit> && ln -s "$PWD/node_modules" ab/before/node_modules && (cd ab/before && npx tsc)
//   node dist/bench/backfill-ab.js --variant before=ab/before/dist --variant after=dist --rounds 3
// `--variant NAME=DIST[,env:NAME=VALUE...]` (environment variables of that variant's process); `--rounds N`
// (default 3); every other argument goes to bench/backfill.js unchanged. Prints one line per run (both sweeps' rates
// and the main thread's and the owners' CPU), then per variant the medians and, against the first, the rounds won.

import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { SERVE_NODE_OPTIONS } from '../cli/node-options.js';
import { compareVariants, median, roundsWonText, type VariantComparison } from './stats.js';
import { parseAbArgs, runRounds } from './variants.js';
import { runBackfillProcess, type SweepFigures } from './backfill.js';

export interface BackfillVariant {
  readonly name: string;
  /** A dist/ directory holding bench/backfill.js. */
  readonly dist: string;
  readonly env: Readonly<Record<string, string>>;
}

export interface BackfillAbRun {
  readonly variant: string;
  readonly round: number;
  readonly first: SweepFigures;
  readonly later: SweepFigures;
}

/** A sweep's median rate and, against the first variant, its rounds won (stats.ts) and the change of the medians. */
export interface SweepComparison extends Omit<VariantComparison, 'median'> {
  readonly eventsPerSecond: number;
}

export interface BackfillAbSummary {
  readonly variant: string;
  /** Median events replayed per second of the first and the later sweep, with the rounds won against the first variant. */
  readonly first: SweepComparison;
  readonly later: SweepComparison;
  /** Median CPU-seconds of the later sweep: the main thread and the partition owners. */
  readonly laterMainCpuSeconds: number;
  readonly laterOwnerCpuSeconds: number;
}

export function summarise(variants: readonly BackfillVariant[], runs: readonly BackfillAbRun[]): BackfillAbSummary[] {
  const names = variants.map(({ name }) => name);
  const first = compareVariants(names, runs, (r) => r.first.replayedEventsPerSecond);
  const later = compareVariants(names, runs, (r) => r.later.replayedEventsPerSecond);
  return names.map((name, i) => {
    const own = runs.filter((r) => r.variant === name);
    const sweep = ({ median: eventsPerSecond, ...against }: VariantComparison): SweepComparison => ({ eventsPerSecond, ...against });
    return {
      variant: name,
      first: sweep(first[i] as VariantComparison),
      later: sweep(later[i] as VariantComparison),
      laterMainCpuSeconds: median(own.map((r) => r.later.sweepMainThreadCpuSeconds)),
      laterOwnerCpuSeconds: median(own.map((r) => r.later.sweepOwnerThreadsCpuSeconds)),
    };
  });
}

async function runOnce(variant: BackfillVariant, round: number, settings: readonly string[]): Promise<BackfillAbRun> {
  const result = await runBackfillProcess(settings, resolve(variant.dist, 'bench', 'backfill.js'), variant.env);
  const first: SweepFigures = {
    sweepSeconds: result.sweepSeconds,
    replayedEventsPerSecond: result.replayedEventsPerSecond,
    audienceSize: result.audienceSize,
    sweepMainThreadCpuSeconds: result.sweepMainThreadCpuSeconds,
    sweepOwnerThreadsCpuSeconds: result.sweepOwnerThreadsCpuSeconds,
    sweepAllThreadsCpuSeconds: result.sweepAllThreadsCpuSeconds,
  };
  return { variant: variant.name, round, first, later: result.laterSweep };
}

const describeSweep = (s: SweepFigures): string =>
  `${s.replayedEventsPerSecond.toLocaleString('en-US')} events/s (main ${s.sweepMainThreadCpuSeconds}, owners ${s.sweepOwnerThreadsCpuSeconds}, all ${s.sweepAllThreadsCpuSeconds} CPU-s, audience ${s.audienceSize})`;

export async function runBackfillAb(variants: readonly BackfillVariant[], rounds: number, settings: readonly string[], log: (line: string) => void): Promise<BackfillAbSummary[]> {
  const describe = (result: BackfillAbRun): string => `first sweep ${describeSweep(result.first)}; later sweep ${describeSweep(result.later)}`;
  const runs = await runRounds(variants, rounds, (variant, round) => runOnce(variant, round, settings), describe, log);
  return summarise(variants, runs);
}

function parseArgs(argv: readonly string[]): { variants: BackfillVariant[]; rounds: number; settings: string[] } {
  const { variants, rounds, settings } = parseAbArgs(argv, 3);
  const withEnv = variants.map(({ name, dist, flags }) => {
    const env: Record<string, string> = {};
    for (const flag of flags) {
      const match = /^env:([^=]+)=(.*)$/s.exec(flag);
      if (match === null) throw new Error(`--variant takes NAME=DIST[,env:NAME=VALUE...] here, got the flag ${flag}`);
      env[match[1] as string] = match[2] as string;
    }
    return { name, dist, env };
  });
  return { variants: withEnv, rounds, settings };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { variants, rounds, settings } = parseArgs(process.argv.slice(2));
  const log = (line: string): void => void process.stdout.write(`${line}\n`);
  log(`backfill A/B: ${rounds} rounds, the order reversed every other round; node ${SERVE_NODE_OPTIONS.join(' ')}`);
  const summary = await runBackfillAb(variants, rounds, settings, log);
  const percent = (change: number | undefined): string => (change === undefined ? '' : ` (${(change * 100).toFixed(1)} %)`);
  for (const s of summary) {
    log(
      `${s.variant}: first sweep median ${Math.round(s.first.eventsPerSecond).toLocaleString('en-US')} events/s${percent(s.first.change)}${roundsWonText(s.first)}; ` +
        `later sweep ${Math.round(s.later.eventsPerSecond).toLocaleString('en-US')}${percent(s.later.change)}${roundsWonText(s.later)}; ` +
        `later sweep's CPU: main thread ${s.laterMainCpuSeconds.toFixed(2)} s, owners ${s.laterOwnerCpuSeconds.toFixed(2)} s`,
    );
  }
}
