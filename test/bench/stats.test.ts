// bench/stats.ts: how the A/B scripts compare variants round by round, and the sign test that says whether the rounds
// a candidate won tell it apart from the machine's noise.

import { describe, expect, it } from 'vitest';
import { compareVariants, roundsWonText, signTestP } from '../../bench/stats.js';

describe('signTestP', () => {
  it('is the two-sided binomial tail of a split at least this uneven', () => {
    // 3 of 4: P(X >= 3) = 5/16, twice that.
    expect(signTestP(3, 4)).toBeCloseTo(10 / 16, 12);
    expect(signTestP(1, 4)).toBeCloseTo(10 / 16, 12);
    expect(signTestP(4, 4)).toBeCloseTo(2 / 16, 12);
    expect(signTestP(6, 6)).toBeCloseTo(2 / 64, 12);
    // 8 of 9: (C(9,8) + C(9,9)) / 512, twice that.
    expect(signTestP(8, 9)).toBeCloseTo((2 * 10) / 512, 12);
    expect(signTestP(7, 8)).toBeCloseTo((2 * 9) / 256, 12);
  });

  it('is 1 for an even split, a lone round or none', () => {
    expect(signTestP(2, 4)).toBe(1);
    expect(signTestP(3, 6)).toBe(1);
    expect(signTestP(1, 1)).toBe(1);
    expect(signTestP(0, 0)).toBe(1);
  });

  it('refuses counts that are not a split of the rounds', () => {
    expect(() => signTestP(5, 4)).toThrow();
    expect(() => signTestP(-1, 4)).toThrow();
    expect(() => signTestP(1.5, 4)).toThrow();
  });
});

describe('compareVariants', () => {
  const run = (variant: string, round: number, figure: number) => ({ variant, round, figure });
  const runs = [
    run('a', 0, 10),
    run('b', 0, 12),
    run('b', 1, 9),
    run('a', 1, 11),
    run('a', 2, 10),
    run('b', 2, 13),
    run('b', 3, 14),
    run('a', 4, 12),
    run('b', 4, 12),
  ];

  it('counts the rounds both ran and those the candidate won, higher or lower winning', () => {
    const [a, higher] = compareVariants(['a', 'b'], runs, (r) => r.figure);
    expect(a).toEqual({ median: 10.5, roundsWon: undefined, roundsCompared: undefined, change: undefined });
    // Round 3 has no run of `a` and round 4 is a tie: three rounds compared, `b` higher in rounds 0 and 2.
    expect(higher).toEqual({ median: 12, roundsWon: 2, roundsCompared: 3, change: 12 / 10.5 - 1 });
    const [, lower] = compareVariants(['a', 'b'], runs, (r) => r.figure, true);
    expect(lower?.roundsWon).toBe(1);
    expect(lower?.roundsCompared).toBe(3);
  });

  it('words the rounds won with their p, and nothing for the first variant', () => {
    const [a, b] = compareVariants(['a', 'b'], runs, (r) => r.figure);
    expect(roundsWonText(a!)).toBe('');
    expect(roundsWonText(b!)).toBe(', faster in 2 of 3 rounds (sign test p = 1.00)');
    expect(roundsWonText({ roundsWon: 6, roundsCompared: 6 }, 'lower')).toBe(', lower in 6 of 6 rounds (sign test p = 0.03)');
  });
});
