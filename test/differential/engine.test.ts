// The differential test: random valid cohorts and event streams, fixed seeds, run through the compiled engine
// (event by event, with a state encode/decode between events, and in random batches) against the naive reference
// evaluator (engine/SEMANTICS.md). A mismatch fails with a shrunk reproduction.

import { describe, expect, it } from 'vitest';
import { findMismatch, listInvalidQueries, shrinkScenario, type FeedMode } from './compare.js';
import { buildScenario, describeScenario, type ScenarioSize } from './scenario.js';

const RUNS: ReadonlyArray<{ from: number; count: number; size: ScenarioSize }> = [
  { from: 1, count: 500, size: { cohorts: 4, events: 30 } },
  { from: 1001, count: 80, size: { cohorts: 8, events: 60 } },
  { from: 2001, count: 300, size: { cohorts: 2, events: 12 } },
  { from: 3001, count: 150, size: { cohorts: 4, events: 40, transitionHeavy: true } },
];

const seeds = RUNS.flatMap(({ from, count, size }) => Array.from({ length: count }, (_, i) => ({ seed: from + i, size })));

describe('the generator makes valid queries only (a rejected one is a finding)', () => {
  it('validateQuery accepts every generated query', () => {
    const problems = seeds.flatMap(({ seed, size }) => listInvalidQueries(buildScenario(seed, size).cohorts).map((p) => `seed ${seed}: ${p}`));
    expect(problems).toEqual([]);
  });
});

describe('engine and reference agree after every event (E1–E19)', () => {
  for (const mode of ['one-by-one', 'round-trip', 'batches'] as const satisfies readonly FeedMode[]) {
    it(`${mode}: memberships and transitions match the reference on ${seeds.length} fixed seeds`, () => {
      for (const { seed, size } of seeds) {
        const scenario = buildScenario(seed, size);
        if (findMismatch(scenario, mode) === undefined) continue;
        const shrunk = shrinkScenario(scenario, mode);
        const mismatch = findMismatch(shrunk, mode);
        expect.fail(
          [
            `engine differs from the reference (${mode}) at event ${mismatch?.eventIndex}`,
            describeScenario(shrunk),
            `expected: ${JSON.stringify(mismatch?.expected)}`,
            `actual:   ${JSON.stringify(mismatch?.actual)}`,
          ].join('\n'),
        );
      }
    });
  }
});
