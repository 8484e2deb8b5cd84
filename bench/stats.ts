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
  /** Rounds in which it beat the first variant (undefined for the first). */
  readonly roundsWon: number | undefined;
  /** Rounds both it and the first variant ran, ties left out (undefined for the first). */
  readonly roundsCompared: number | undefined;
  /** Its median over the first variant's, minus 1 (undefined for the first). */
  readonly change: number | undefined;
}

/**
 * Per variant (in the order given), `figure` over its runs compared with the first variant round by round; a round
 * is won by the higher figure, or by the lower one with `lowerWins` (CPU per request). A round whose figures are
 * equal is not compared (the sign test leaves ties out).
 */
export function compareVariants<R extends RoundRun>(
  names: readonly string[],
  runs: readonly R[],
  figure: (run: R) => number,
  lowerWins = false,
): VariantComparison[] {
  const first = names[0];
  const byRound = (name: string): Map<number, R> => new Map(runs.filter((r) => r.variant === name).map((r) => [r.round, r]));
  const reference = first === undefined ? new Map<number, R>() : byRound(first);
  const referenceMedian = median([...reference.values()].map(figure));
  return names.map((name) => {
    const own = median(runs.filter((r) => r.variant === name).map(figure));
    if (name === first) return { median: own, roundsWon: undefined, roundsCompared: undefined, change: undefined };
    let roundsWon = 0;
    let roundsCompared = 0;
    for (const [round, mine] of byRound(name)) {
      const theirs = reference.get(round);
      if (theirs === undefined || figure(mine) === figure(theirs)) continue;
      roundsCompared++;
      if (lowerWins ? figure(mine) < figure(theirs) : figure(mine) > figure(theirs)) roundsWon++;
    }
    return { median: own, roundsWon, roundsCompared, change: own / referenceMedian - 1 };
  });
}

/**
 * The two-sided sign test of `won` rounds out of `rounds`: the chance that two builds no different would split the
 * rounds at least this unevenly, each round a coin toss. Of what the A/B scripts print, this is what says whether a
 * change is told apart from the machine's noise: on this shared VM two variants of one build came out up to 28 %
 * apart at the medians of six to eight rounds, one ahead in 3 of 4 rounds in shorter runs (docs/performance.md, How
 * changes are judged); 3 of 4 is p = 0.63, and it takes 6 rounds of 6 (p = 0.031) or 8 of 9 (p = 0.039) to fall
 * below 0.05.
 */
export function signTestP(won: number, rounds: number): number {
  if (!(Number.isInteger(won) && Number.isInteger(rounds) && rounds >= 0 && won >= 0 && won <= rounds)) throw new Error(`won ${won} of ${rounds} rounds`);
  if (rounds === 0) return 1;
  const extreme = Math.max(won, rounds - won);
  let tail = 0;
  let ways = 1; // C(rounds, i), from i = rounds down
  for (let i = rounds; i >= extreme; i--) {
    tail += ways;
    ways = (ways * i) / (rounds - i + 1);
  }
  return Math.min(1, (2 * tail) / 2 ** rounds);
}

/** `, faster in W of N rounds (sign test p = P)` for a variant compared with the first; empty for the first. */
export function roundsWonText(comparison: Pick<VariantComparison, 'roundsWon' | 'roundsCompared'>, word = 'faster'): string {
  const { roundsWon, roundsCompared } = comparison;
  if (roundsWon === undefined || roundsCompared === undefined) return '';
  return `, ${word} in ${roundsWon} of ${roundsCompared} rounds (sign test p = ${signTestP(roundsWon, roundsCompared).toFixed(2)})`;
}
