// bench/engine-ab.ts: builds of the engine bench run in turn, the order reversed every other round, and summarised
// by medians and by the rounds each candidate won against the first build.

import { describe, expect, it } from 'vitest';
import { runEngineAb, summarise, type EngineAbRun } from '../../bench/engine-ab.js';
import { roundOrder } from '../../bench/stats.js';

const result = (variant: string, round: number, eventsPerSecond: number, large?: number): EngineAbRun => ({
  variant,
  round,
  eventsPerSecond,
  eventsPerCpuSecond: eventsPerSecond / 2,
  largeEventsPerSecond: large,
});

describe('engine A/B bench', () => {
  it('alternates the order of the builds round by round', () => {
    expect([0, 1, 2, 3].map((round) => roundOrder(['a', 'b', 'c'], round).join(''))).toEqual(['abc', 'cba', 'abc', 'cba']);
  });

  it('summarises medians, and the rounds a candidate won against the first build', () => {
    const variants = [
      { name: 'before', dist: 'ab/before' },
      { name: 'after', dist: 'dist' },
    ];
    const runs = [
      result('before', 0, 100, 80),
      result('after', 0, 120, 90),
      result('after', 1, 90, 70),
      result('before', 1, 110, 75),
      result('before', 2, 105, 85),
      result('after', 2, 130, 95),
    ];
    const [before, after] = summarise(variants, runs);
    expect(before).toEqual({ variant: 'before', eventsPerSecond: 105, eventsPerCpuSecond: 52.5, largeEventsPerSecond: 80, roundsWon: undefined, roundsCompared: undefined, change: undefined });
    expect(after?.eventsPerSecond).toBe(120);
    expect(after?.largeEventsPerSecond).toBe(90);
    // Faster in rounds 0 and 2, slower in round 1.
    expect(after?.roundsWon).toBe(2);
    expect(after?.roundsCompared).toBe(3);
    expect(after?.change).toBeCloseTo(120 / 105 - 1, 10);
  });

  it('runs each build\'s bench/engine.js and reads its JSON', async () => {
    const lines: string[] = [];
    const tiny = ['--users', '50', '--eventsPerUser', '2', '--runs', '1', '--largeUsers', '0', '--longHistory', '20', '--historyUsers', '1', '--historyRepetitions', '1', '--referenceHistory', '10', '--referenceUsers', '1', '--referenceEvents', '1'];
    const summary = await runEngineAb([{ name: 'one', dist: 'dist' }, { name: 'two', dist: 'dist' }], 2, tiny, (line) => lines.push(line));
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(/^round 1 one: [\d,]+ events\/s/);
    expect(lines[1]).toMatch(/^round 1 two: /);
    expect(lines[2]).toMatch(/^round 2 two: /);
    expect(summary.map((s) => s.variant)).toEqual(['one', 'two']);
    for (const s of summary) expect(s.eventsPerSecond).toBeGreaterThan(0);
    expect(summary[1]?.roundsWon).toBeGreaterThanOrEqual(0);
    expect(summary[1]?.roundsWon).toBeLessThanOrEqual(2);
  }, 120_000);
});
