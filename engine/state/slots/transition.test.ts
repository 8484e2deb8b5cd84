// Transition clauses (D35, E10–E12) and the order of transitions in the output (E19).

import { describe, expect, it } from 'vitest';
import { EMPTY_CONTEXT } from '../../api.js';
import type { Clause, During, Where } from '../../query/ast.js';
import { compilePlan } from '../../plan/compile.js';
import { segment } from '../segment.js';
import { newUserState } from '../user-state.js';
import { HOUR, T0, cohort, eq, ev, expr, holdsAfter, pred, runEvents, str, theLast } from '../../../test/support/engine-queries.js';

const transition = (op: Extract<Clause, { kind: 'transition' }>['op'], segment: number, during?: During, where?: Where): Clause => ({
  kind: 'transition',
  op,
  segment,
  ...(during && { during }),
  ...(where && { where }),
});
const inA = cohort(1, expr('A', { during: { kind: 'current_view' } }));

describe('transition clauses (E10–E12)', () => {
  it('E12: an entry caused by this very event is seen by cohorts naming it, whatever the codes', () => {
    const dependent = cohort(0, transition('has_entered', 1));
    const run = runEvents([dependent, inA], [ev('B', T0), ev('A', T0 + 1)]);
    expect(run.after).toEqual([[], [0, 1]]);
    expect(run.transitions.map((t) => [t.cohort, t.kind, t.eventIndex])).toEqual([
      [0, 'entered', 1],
      [1, 'entered', 1],
    ]);
  });

  it('has_exited, has_not_entered and has_not_exited', () => {
    const cs = [inA, cohort(2, transition('has_exited', 1)), cohort(3, transition('has_not_entered', 1)), cohort(4, transition('has_not_exited', 1))];
    const run = runEvents(cs, [ev('B', T0), ev('A', T0 + 1), ev('Pageview', T0 + 2)]);
    expect(run.after).toEqual([[3, 4], [1, 4], [2]]);
  });

  it('where applies to the event causing the transition', () => {
    const fromHome = cohort(2, transition('has_entered', 1, undefined, pred('properties.page', str('equal_to', 'home'))));
    expect(runEvents([inA, fromHome], [ev('A', T0, { page: 'home' })]).after).toEqual([[1, 2]]);
    expect(runEvents([inA, fromHome], [ev('A', T0, { page: 'cart' })]).after).toEqual([[1]]);
  });

  it('the_last: the entry leaves the window as time passes', () => {
    const recent = cohort(2, transition('has_entered', 1, theLast(HOUR)));
    const run = runEvents([inA, recent], [ev('A', T0), ev('Pageview', T0 + 1), ev('X', T0 + HOUR - 1), ev('X', T0 + HOUR)]);
    expect(holdsAfter(run, 2)).toEqual([true, true, true, false]);
  });

  it('this_session / current_view: the entry event is in the current run', () => {
    const inView = cohort(2, transition('has_entered', 1, { kind: 'current_view' }));
    const run = runEvents([inA, inView], [ev('A', T0), ev('Pageview', T0 + 1)]);
    expect(holdsAfter(run, 2)).toEqual([true, false]);
  });

  it('first N / last N are among the entries of the cohort', () => {
    const page = pred('properties.page', str('equal_to', 'home'));
    const first = cohort(2, transition('has_entered', 1, { kind: 'first', count: 1 }, page));
    const last = cohort(3, transition('has_entered', 1, { kind: 'last', count: 1 }, page));
    const run = runEvents([inA, first, last], [ev('A', T0, { page: 'home' }), ev('Pageview', T0 + 1), ev('A', T0 + 2, { page: 'cart' })]);
    expect(holdsAfter(run, 2)).toEqual([true, true, true]);
    expect(holdsAfter(run, 3)).toEqual([true, true, false]);
  });

  it('chains: a cohort naming a cohort that names another sees both transitions in one event', () => {
    const b = cohort(5, transition('has_entered', 1));
    const c = cohort(6, transition('has_entered', 5));
    expect(runEvents([c, b, inA], [ev('A', T0)]).after).toEqual([[1, 5, 6]]);
  });
});

describe('output order (E19)', () => {
  it('transitions are ordered by event index, then cohort code', () => {
    const plan = compilePlan([cohort(9, expr('A')), cohort(3, expr('A')), cohort(5, expr('B', { frequency: eq(0) }))], 1);
    const result = segment(plan, newUserState(), [ev('A', T0), ev('B', T0 + 1)], EMPTY_CONTEXT);
    expect(result.transitions.map((t) => [t.eventIndex, t.cohort, t.kind])).toEqual([
      [0, 3, 'entered'],
      [0, 5, 'entered'],
      [0, 9, 'entered'],
      [1, 5, 'exited'],
    ]);
    expect(result.transitions[0]?.time).toBe(T0);
    expect(result.memberships).toEqual([3, 9]);
  });
});
