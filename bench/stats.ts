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
