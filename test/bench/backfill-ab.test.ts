// bench/backfill-ab.ts: builds of the backfill bench run in turn, the order reversed every other round, and
// summarised by each sweep's median and the rounds each candidate won against the first build.

import { describe, expect, it } from 'vitest';
import { runBackfillAb, summarise, type BackfillAbRun } from '../../bench/backfill-ab.js';
import type { SweepFigures } from '../../bench/backfill.js';

const sweep = (replayedEventsPerSecond: number, main = 1, owners = 1): SweepFigures => ({
  sweepSeconds: 1_000_000 / replayedEventsPerSecond,
  replayedEventsPerSecond,
  audienceSize: 10,
  sweepMainThreadCpuSeconds: main,
  sweepOwnerThreadsCpuSeconds: owners,
  sweepAllThreadsCpuSeconds: main + owners + 1,
});

const result = (variant: string, round: number, first: number, later: number, owners = 1): BackfillAbRun => ({ variant, round, first: sweep(first), later: sweep(later, 1, owners) });

describe('backfill A/B bench', () => {
  it('summarises each sweep\'s median, and the rounds a candidate won on each against the first build', () => {
    const variants = [
      { name: 'before', dist: 'ab/before', env: {} },
      { name: 'after', dist: 'dist', env: {} },
    ];
    const runs = [
      result('before', 0, 300, 500, 0.9),
      result('after', 0, 280, 600, 0.6),
      result('after', 1, 350, 650, 0.5),
      result('before', 1, 320, 550, 0.8),
      result('before', 2, 310, 520, 0.7),
      result('after', 2, 330, 700, 0.55),
    ];
    const [before, after] = summarise(variants, runs);
    expect(before).toEqual({
      variant: 'before',
      first: { eventsPerSecond: 310, roundsWon: undefined, roundsCompared: undefined, change: undefined },
      later: { eventsPerSecond: 520, roundsWon: undefined, roundsCompared: undefined, change: undefined },
      laterMainCpuSeconds: 1,
      laterOwnerCpuSeconds: 0.8,
    });
    // First sweep: slower in round 0, faster in rounds 1 and 2; later sweep: faster in every round.
    expect(after?.first.roundsWon).toBe(2);
    expect(after?.later.roundsWon).toBe(3);
    expect(after?.later.roundsCompared).toBe(3);
    expect(after?.first.eventsPerSecond).toBe(330);
    expect(after?.later.change).toBeCloseTo(650 / 520 - 1, 10);
    expect(after?.laterOwnerCpuSeconds).toBe(0.55);
  });

  it('runs each build\'s bench/backfill.js, with a variant\'s environment, and reads its JSON', async () => {
    const lines: string[] = [];
    const tiny = ['--users', '30', '--eventsPerUser', '20', '--foldEvery', '8'];
    const variants = [
      { name: 'one', dist: 'dist', env: {} },
      { name: 'two', dist: 'dist', env: {} },
    ];
    // A variant's environment reaches its process: one node refuses to start with fails the comparison.
    await expect(runBackfillAb([{ name: 'bad', dist: 'dist', env: { NODE_OPTIONS: '--no-such-node-option' } }, ...variants], 1, tiny, () => undefined)).rejects.toThrow();
    const summary = await runBackfillAb(variants, 2, tiny, (line) => lines.push(line));
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(/^round 1 one: first sweep [\d,]+ events\/s .*; later sweep [\d,]+ events\/s/);
    expect(lines[2]).toMatch(/^round 2 two: /);
    expect(summary.map((s) => s.variant)).toEqual(['one', 'two']);
    for (const s of summary) {
      expect(s.first.eventsPerSecond).toBeGreaterThan(0);
      expect(s.later.eventsPerSecond).toBeGreaterThan(0);
    }
  }, 180_000);
});
