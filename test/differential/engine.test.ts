// The differential test: random valid cohorts and event streams (with re-evaluations on changed imported data, E20,
// inactive cohorts, E21, and clock advances at and around the engine's deadlines, D36), fixed seeds, run through the
// compiled engine (step by step, with a state encode/decode between steps, and events in random batches) against the
// naive reference evaluator (engine/SEMANTICS.md). A mismatch fails with a shrunk reproduction. D36's deadlines are
// also checked never to be late against the reference.

import { describe, expect, it } from 'vitest';
import { findLateDeadline, findMismatch, listInvalidQueries, readsRowsByClock, shrinkScenario, type FeedMode } from './compare.js';
import { evaluateReferenceSteps, isReevaluation } from '../reference/index.js';
import { buildScenario, describeScenario, type Scenario, type ScenarioSize } from './scenario.js';

const RUNS: ReadonlyArray<{ from: number; count: number; size: ScenarioSize }> = [
  { from: 1, count: 500, size: { cohorts: 4, events: 30 } },
  { from: 1001, count: 80, size: { cohorts: 8, events: 60 } },
  { from: 2001, count: 300, size: { cohorts: 2, events: 12 } },
  { from: 3001, count: 150, size: { cohorts: 4, events: 40, transitionHeavy: true } },
  // E20 re-evaluations with changed imported data between events, and E21 inactive cohorts named by others
  { from: 4001, count: 300, size: { cohorts: 4, events: 30, reevaluations: 0.15, inactive: 0.15 } },
  { from: 5001, count: 150, size: { cohorts: 5, events: 40, transitionHeavy: true, reevaluations: 0.2, inactive: 0.2 } },
  // D36 clock advances (same ctx) at random offsets, long silences, at nextDeadline and one ms before it, with
  // session-scoped cohorts (the session timeout) and transition clauses hearing them
  { from: 6001, count: 300, size: { cohorts: 4, events: 30, clock: 0.3 } },
  { from: 7001, count: 200, size: { cohorts: 4, events: 30, transitionHeavy: true, clock: 0.35, reevaluations: 0.1 } },
  // `first N` / `last N` past 32 (packed bit rings, grown past 64 bits as events come), over enough events of one
  // name (a third are PageviewEngagement) to fill and wrap them, with states encoded and decoded between steps
  { from: 8001, count: 60, size: { cohorts: 4, events: 300, wideCounts: true, reevaluations: 0.05 } },
  // more cohorts than one 32-bit word of decision bits (plan.ts dirtyBase / recheckBase), with transition clauses
  // naming cohorts in earlier words, re-evaluations and clock advances
  { from: 9001, count: 24, size: { cohorts: 70, events: 40, transitionHeavy: true, reevaluations: 0.1, clock: 0.2 } },
];

/** Seeds whose never-late check (D36) runs: the clock runs, and the others (deadlines after plain events too). */
const CLOCK_RUNS = RUNS.filter(({ size }) => size.clock !== undefined);

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

describe('D36: nextDeadline is never late', () => {
  it('after each step, the reference at nextDeadline - 1 (or a year on, when there is none) has the same memberships', () => {
    const checked = RUNS.flatMap(({ from, size }) => Array.from({ length: 100 }, (_, i) => ({ seed: from + i, size })));
    let run = 0;
    for (const { seed, size } of checked) {
      const scenario = buildScenario(seed, size);
      // E14 rows judged against now are not covered by nextDeadline (SEMANTICS.md E22).
      if (readsRowsByClock(scenario.cohorts)) continue;
      run++;
      const late = findLateDeadline(scenario);
      if (late !== undefined) expect.fail([`deadline late after input ${late.inputIndex}: ${JSON.stringify(late)}`, describeScenario(scenario)].join('\n'));
    }
    // Most scenarios are checked (the skipped ones read rows by the clock).
    expect(run).toBeGreaterThan(checked.length / 2);
  });

  it('the clock runs reach deadlines: clock advances make transitions at the session timeout and at window ends', () => {
    let atDeadline = 0;
    for (const { from, count, size } of CLOCK_RUNS) {
      for (let seed = from; seed < from + count; seed++) atDeadline += countClockTransitions(buildScenario(seed, size));
    }
    expect(atDeadline).toBeGreaterThan(250);
  });
});

/** Transitions (by the reference) at clock advances: re-evaluations that keep the ctx before them (same object). */
function countClockTransitions(scenario: Scenario): number {
  const steps = evaluateReferenceSteps(scenario.cohorts, scenario.inputs, scenario.ctx);
  let ctx = scenario.ctx;
  let count = 0;
  scenario.inputs.forEach((input, i) => {
    if (!isReevaluation(input)) return;
    if (input.ctx === ctx) count += steps[i]?.transitions.length ?? 0;
    ctx = input.ctx;
  });
  return count;
}
