// The `--variant NAME=DIST[,FLAG...]` argument of the A/B scripts (bench/ab.ts, bench/engine-ab.ts,
// bench/backfill-ab.ts): a name, a build (a copy of dist/, or a word the script knows), and the flags after it; and
// what the in-process ones share: their arguments and their rounds.

import { roundOrder } from './stats.js';

export interface VariantArg {
  readonly name: string;
  readonly dist: string;
  readonly flags: readonly string[];
}

/** Splits `NAME=DIST[,FLAG...]`; throws when the name or the build is missing. */
export function parseVariantArg(value: string): VariantArg {
  const [name, rest] = value.split(/=(.*)/s);
  const [dist, ...flags] = (rest ?? '').split(',');
  if (!name || !dist) throw new Error(`--variant NAME=DIST[,FLAG...], not "${value}"`);
  return { name, dist, flags };
}

/**
 * The arguments of an in-process A/B script (bench/engine-ab.ts, bench/backfill-ab.ts): its `--variant`s, `--rounds N`
 * (`rounds` unless given) and every other argument, which goes to the measured script unchanged.
 */
export function parseAbArgs(argv: readonly string[], rounds: number): { variants: VariantArg[]; rounds: number; settings: string[] } {
  const variants: VariantArg[] = [];
  const settings: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const value = argv[i + 1];
    if (arg === '--variant' && value !== undefined) {
      variants.push(parseVariantArg(value));
      i++;
    } else if (arg === '--rounds' && value !== undefined) {
      rounds = Number(value);
      if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`--rounds takes a positive integer, got ${value}`);
      i++;
    } else {
      settings.push(arg);
    }
  }
  if (variants.length < 2) throw new Error('give at least two --variant NAME=DIST');
  return { variants, rounds, settings };
}

/** Runs every variant once per round, the order reversed every other round (stats.ts `roundOrder`), logging each run. */
export async function runRounds<V extends { readonly name: string }, R>(
  variants: readonly V[],
  rounds: number,
  runOnce: (variant: V, round: number) => Promise<R>,
  describe: (result: R) => string,
  log: (line: string) => void,
): Promise<R[]> {
  const runs: R[] = [];
  for (let round = 0; round < rounds; round++) {
    for (const variant of roundOrder(variants, round)) {
      const result = await runOnce(variant, round);
      runs.push(result);
      log(`round ${round + 1} ${variant.name}: ${describe(result)}`);
    }
  }
  return runs;
}
