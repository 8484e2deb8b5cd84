// Summaries of repeated runs: median with min-max, and per-run ratios to a baseline measured beside each run; and
// the order of alternating rounds.

/** The order of what a round runs, round `round` from 0: as given, then reversed, alternating. */
export function roundOrder<T>(items: readonly T[], round: number): T[] {
  return round % 2 === 0 ? [...items] : [...items].reverse();
}

export interface Spread {
  readonly median: number;
  readonly min: number;
  readonly max: number;
  readonly runs: readonly number[];
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

export function spreadOf(values: readonly number[]): Spread {
  return { median: median(values), min: Math.min(...values), max: Math.max(...values), runs: [...values] };
}

/** Ratio of each run to the baseline run measured right before it. */
export function ratiosOf(values: readonly number[], baselines: readonly number[]): Spread {
  return spreadOf(values.map((value, i) => value / (baselines[i] as number)));
}

/** A run of an A/B script: which variant, in which round. */
export interface RoundRun {
  readonly variant: string;
  readonly round: number;
}

/** One variant's figure over its runs: the median and, against the first variant, how it compares. */
export interface VariantComparison {
  readonly median: number;
  /** Rounds in which it beat the first variant (higher wins; undefined for the first). */
  readonly roundsWon: number | undefined;
  /** Its median over the first variant's, minus 1 (undefined for the first). */
  readonly change: number | undefined;
}

/** Per variant (in the order given), `figure` over its runs compared with the first variant round by round. */
export function compareVariants<R extends RoundRun>(names: readonly string[], runs: readonly R[], figure: (run: R) => number): VariantComparison[] {
  const first = names[0];
  const byRound = (name: string): Map<number, R> => new Map(runs.filter((r) => r.variant === name).map((r) => [r.round, r]));
  const reference = first === undefined ? new Map<number, R>() : byRound(first);
  const referenceMedian = median([...reference.values()].map(figure));
  return names.map((name) => {
    const own = median(runs.filter((r) => r.variant === name).map(figure));
    if (name === first) return { median: own, roundsWon: undefined, change: undefined };
    let roundsWon = 0;
    for (const [round, mine] of byRound(name)) {
      const theirs = reference.get(round);
      if (theirs !== undefined && figure(mine) > figure(theirs)) roundsWon++;
    }
    return { median: own, roundsWon, change: own / referenceMedian - 1 };
  });
}
