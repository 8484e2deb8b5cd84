// The differential test: random valid cohorts and event streams (with re-evaluations on changed imported data, E20,
// and inactive cohorts, E21), fixed seeds, run through the compiled engine (step by step, with a state encode/decode
// between steps, and events in random batches) against the naive reference evaluator (engine/SEMANTICS.md). A
// mismatch fails with a shrunk reproduction.

import { describe, expect, it } from 'vitest';
import { findMismatch, listInvalidQueries, shrinkScenario, type FeedMode } from './compare.js';
import { buildScenario, describeScenario, type ScenarioSize } from './scenario.js';

const RUNS: ReadonlyArray<{ from: number; count: number; size: ScenarioSize }> = [
  { from: 1, count: 500, size: { cohorts: 4, events: 30 } },
  { from: 1001, count: 80, size: { cohorts: 8, events: 60 } },
  { from: 2001, count: 300, size: { cohorts: 2, events: 12 } },
  { from: 3001, count: 150, size: { cohorts: 4, events: 40, transitionHeavy: true } },
  // E20 re-evaluations with changed imported data between events, and E21 inactive cohorts named by others
  { from: 4001, count: 300, size: { cohorts: 4, events: 30, reevaluations: 0.15, inactive: 0.15 } },
  { from: 5001, count: 150, size: { cohorts: 5, events: 40, transitionHeavy: true, reevaluations: 0.2, inactive: 0.2 } },
];

const seeds = RUNS.flatMap(({ from, count, size }) => Array.from({ length: count }, (_, i) => ({ seed: from + i, size })));

describe('the generator makes valid queries only (a rejected one is a finding)', () => {
  it('validateQuery accepts every generated query', () => {
    const problems = seeds.flatMap(({ seed, size }) => listInvalidQueries(buildScenario(seed, size).cohorts).map((p) => `seed ${seed}: ${p}`));
    expect(problems).toEqual([]);
  });
});

describe('engine and reference agree after every step (E1–E21)', () => {
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
