// The segment step's shortcuts keep E5 / E13 answers: final clause answers (plan/sticky.ts) are not re-evaluated,
// and a cohort whose last decision read the context is re-decided from the context alone while no clause of it
// went stale.

import { describe, expect, it } from 'vitest';
import type { SegmentContext } from '../api.js';
import type { Clause } from '../query/ast.js';
import { compilePlan } from '../plan/compile.js';
import { T0, MINUTE, between, cohort, ev, expr, gte, holdsAfter, lt, runEvents } from '../../test/support/engine-queries.js';
import { segment } from './segment.js';
import { CLAUSE_FINAL, CLAUSE_STALE, newUserState } from './user-state.js';

const inS: Clause = { kind: 'membership', op: 'in_third_party_segment', provider: 'p', segment: 's' };

/** A context whose answer for 3rd/p/s the test changes between calls. */
function switchable(): { ctx: SegmentContext; set: (value: boolean) => void } {
  let member = false;
  return {
    ctx: { inImportedSegment: (relation, provider, segment) => member && relation === '3rd' && provider === 'p' && segment === 's', connectionRows: () => [] },
    set: (value) => {
      member = value;
    },
  };
}

describe('final clause answers', () => {
  it('E4: an all-time count past a between range stays out, and its clause is final', () => {
    const events = [1, 2, 3, 4, 5].map((i) => ev('A', T0 + i * MINUTE));
    const run = runEvents([cohort(1, expr('A', { frequency: between(1, 2) }))], events);
    expect(holdsAfter(run, 1)).toEqual([true, true, false, false, false]);
    expect(run.state.flags[run.plan.cohorts.length]).toBe(CLAUSE_FINAL);
  });

  it('E4: an upward-closed all-time count is final once true; a sliding one stays re-evaluated', () => {
    const cs = [cohort(1, expr('A', { frequency: gte(2) })), cohort(2, expr('A', { frequency: lt(2), during: { kind: 'the_last', value: 1, unit: 'minutes', ms: MINUTE } }))];
    const run = runEvents(cs, [ev('A', T0), ev('A', T0 + 1000), ev('A', T0 + 2000), ev('B', T0 + 5 * MINUTE)]);
    expect(holdsAfter(run, 1)).toEqual([false, true, true, true]);
    expect(holdsAfter(run, 2)).toEqual([true, false, false, true]);
    const base = run.plan.cohorts.length;
    const position = (code: number): number => run.plan.positionOfCode.get(code) as number;
    expect(run.state.flags[base + (run.plan.cohortStart[position(1)] as number)]).toBe(CLAUSE_FINAL | 1);
    expect(run.state.flags[base + (run.plan.cohortStart[position(2)] as number)]).toBeLessThan(CLAUSE_FINAL);
  });

  it('a new binding forgets final answers (stale until evaluated again)', () => {
    const cs = [cohort(1, expr('A', { frequency: gte(1) }))];
    const state = newUserState();
    segment(compilePlan(cs, 1), state, [ev('A', T0)], switchable().ctx);
    const next = compilePlan(cs, 2);
    segment(next, state, [], switchable().ctx);
    expect(state.flags[next.cohorts.length]).toBe(CLAUSE_STALE);
  });
});

describe('cohorts decided by the context (E13)', () => {
  it('follows the context at every event while no slot clause changes, and slot changes as they come', () => {
    const { ctx, set } = switchable();
    const plan = compilePlan([cohort(1, [expr('A'), inS], expr('B', { frequency: between(1, 1) }))], 1);
    const state = newUserState();
    const steps: [string, boolean][] = [
      ['B', true], // A absent, s holds, one B: in
      ['C', false], // nothing counted changes; the context alone says out
      ['C', true], // and in again
      ['A', false], // A now holds: in whatever the context says (settled)
      ['C', false],
      ['B', false], // two B: out
    ];
    const after = steps.map(([name, member], i) => {
      set(member);
      return segment(plan, state, [ev(name, T0 + i * MINUTE)], ctx).memberships;
    });
    expect(after).toEqual([[1], [], [1], [1], [1], []]);
  });
});
