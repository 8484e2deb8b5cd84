// A bound state's memberships are kept twice: a flag per cohort position and a bit per cohort by code rank
// (plan.ts `memberBase`), which `membershipsOf` reads. The bits follow the flags through every step that sets them:
// the segment step, a re-evaluation, packing, cloning and binding to another plan.

import { describe, expect, it } from 'vitest';
import type { EngineEvent } from '../api.js';
import { SampleGenerator } from '../../test/support/sample-cohorts.js';
import { compilePlan } from '../plan/compile.js';
import type { Plan } from '../plan/plan.js';
import { cloneState } from './clone.js';
import { packState, unpackState } from './pack.js';
import { evaluateAt, segment } from './segment.js';
import { membershipsOf, newUserState, type UserState } from './user-state.js';

/** The memberships as the flags hold them, in code order (the scan membershipsOf made before the bits). */
function fromFlags(plan: Plan, state: UserState): number[] {
  return plan.codes.filter((code) => state.flags[plan.positionOfCode.get(code) as number] === 1);
}

describe('membership bits', () => {
  const gen = new SampleGenerator(7);
  const cohorts = gen.cohorts(70);
  const plan = compilePlan(cohorts, 1);
  const ctx = gen.context();
  const events = gen.events(600);

  it('read the same memberships as the flags after every step, packed, cloned and re-evaluated', () => {
    const states = Array.from({ length: 6 }, () => newUserState());
    let seen = 0;
    for (let i = 0; i < events.length; i++) {
      const state = states[i % states.length] as UserState;
      const result = segment(plan, state, [events[i] as EngineEvent], ctx);
      expect(result.memberships).toEqual(fromFlags(plan, state));
      seen += result.memberships.length;
      if (i % 7 === 0) {
        packState(state);
        unpackState(state);
        expect(membershipsOf(state)).toEqual(fromFlags(plan, state));
      }
      if (i % 11 === 0) expect(membershipsOf(cloneState(state))).toEqual(fromFlags(plan, state));
      if (i % 13 === 0) {
        const later = evaluateAt(plan, state, state.time + 86_400_000, ctx);
        expect(later.memberships).toEqual(fromFlags(plan, state));
      }
    }
    expect(seen).toBeGreaterThan(0);
  });

  it('carry over to another plan: the cohorts both plans have, at their new ranks', () => {
    const state = newUserState();
    for (const event of events.slice(0, 200)) segment(plan, state, [event], ctx);
    const before = membershipsOf(state);
    expect(before.length).toBeGreaterThan(0);
    // Every other cohort (the others disabled, E21): the kept ones' positions and ranks both move.
    const kept = cohorts.filter((_, i) => i % 2 === 0);
    const other = compilePlan(kept, 2, { inactive: cohorts.filter((_, i) => i % 2 === 1).map((cohort) => cohort.code) });
    segment(other, state, [], ctx);
    const codes = new Set(kept.map((cohort) => cohort.code));
    expect(membershipsOf(state)).toEqual(fromFlags(other, state));
    expect(membershipsOf(state)).toEqual(before.filter((code) => codes.has(code)));
  });
});
