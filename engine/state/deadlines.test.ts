// D36: nextDeadline (the earliest instant a silent user's memberships can change) and the session timeout in
// evaluateAt (D31). Every case runs on the generated hot paths and on the generic loops (state/generated.ts), and
// with an encode / decode round trip before the deadline is asked.

import { describe, expect, it } from 'vitest';
import type { CohortDefinition } from '../api.js';
import { EMPTY_CONTEXT } from '../api.js';
import { compilePlan } from '../plan/compile.js';
import type { Plan } from '../plan/plan.js';
import type { Clause, During } from '../query/ast.js';
import { decodeState, encodeState } from './codec.js';
import { evaluateAt, nextDeadline, segment } from './segment.js';
import { SESSION_GAP_MS } from './trackers.js';
import { DAY, HOUR, MINUTE, T0, cohort, eq, ev, expr, gte, lt } from '../../test/support/engine-queries.js';
import { newUserState, type UserState } from './user-state.js';

const thisSession: During = { kind: 'this_session' };
const inInterval: During = { kind: 'in_interval', start: T0, end: T0 + HOUR };
const theLast = (ms: number): During => ({ kind: 'the_last', value: ms / 1000, unit: 'seconds', ms });

/** Both plan flavours (generated code, generic loops) and both state paths (kept, round-tripped). */
function variants(cohorts: CohortDefinition[]): Array<{ name: string; plan: Plan; keep: (state: UserState) => UserState }> {
  const generated = compilePlan(cohorts, 1);
  const generic = compilePlan(cohorts, 1, { generateCode: false });
  const roundTrip = (state: UserState): UserState => decodeState(encodeState(state));
  return [
    { name: 'generated', plan: generated, keep: (state) => state },
    { name: 'generic', plan: generic, keep: (state) => state },
    { name: 'generated, round trip', plan: generated, keep: roundTrip },
    { name: 'generic, round trip', plan: generic, keep: roundTrip },
  ];
}

describe('nextDeadline (D36)', () => {
  it('the_last on an expression slot: the deadline is when the event leaves the window; evaluateAt there makes the exit', () => {
    for (const { name, plan, keep } of variants([cohort(1, expr('Click', { during: theLast(10 * MINUTE) }))])) {
      let state = newUserState();
      expect(nextDeadline(plan, state), name).toBe(Number.POSITIVE_INFINITY); // no events (E5)
      segment(plan, state, [ev('Click', T0)], EMPTY_CONTEXT);
      segment(plan, state, [ev('Other', T0 + 4 * MINUTE)], EMPTY_CONTEXT);
      state = keep(state);
      const deadline = nextDeadline(plan, state);
      expect(deadline, name).toBe(T0 + 10 * MINUTE);
      expect(evaluateAt(plan, state, deadline - 1, EMPTY_CONTEXT).transitions, name).toEqual([]);
      expect(evaluateAt(plan, state, deadline, EMPTY_CONTEXT).transitions, name).toEqual([
        { cohort: 1, kind: 'exited', time: T0 + 10 * MINUTE, eventIndex: -1 },
      ]);
      // The window emptied: nothing changes by the clock any more.
      expect(nextDeadline(plan, state), name).toBe(Number.POSITIVE_INFINITY);
    }
  });

  it('the_last on an engagement slot (engaged_time): the seconds leave the window at the deadline', () => {
    const clause: Clause = { kind: 'engaged_time', seconds: gte(5), during: theLast(HOUR) };
    for (const { name, plan, keep } of variants([cohort(1, clause)])) {
      let state = newUserState();
      segment(plan, state, [ev('PageviewEngagement', T0, { engaged_time: 3 }), ev('PageviewEngagement', T0 + MINUTE, { engaged_time: 3 })], EMPTY_CONTEXT);
      state = keep(state);
      expect(nextDeadline(plan, state), name).toBe(T0 + HOUR);
      expect(evaluateAt(plan, state, T0 + HOUR, EMPTY_CONTEXT).transitions.map((t) => t.kind), name).toEqual(['exited']);
      // The second event's seconds are still in the window; they leave a minute later (no membership change).
      expect(nextDeadline(plan, state), name).toBe(T0 + HOUR + MINUTE);
      evaluateAt(plan, state, T0 + HOUR + MINUTE, EMPTY_CONTEXT);
      expect(nextDeadline(plan, state), name).toBe(Number.POSITIVE_INFINITY);
    }
  });

  it('the_last on a transition slot: has_entered within the last 5 minutes ends at entry + 5 minutes', () => {
    const cohorts = [
      cohort(1, expr('Signup')),
      cohort(2, { kind: 'transition', op: 'has_entered', segment: 1, during: theLast(5 * MINUTE) } satisfies Clause),
    ];
    for (const { name, plan, keep } of variants(cohorts)) {
      let state = newUserState();
      expect(segment(plan, state, [ev('Signup', T0)], EMPTY_CONTEXT).memberships, name).toEqual([1, 2]);
      state = keep(state);
      expect(nextDeadline(plan, state), name).toBe(T0 + 5 * MINUTE);
      expect(evaluateAt(plan, state, T0 + 5 * MINUTE, EMPTY_CONTEXT).transitions, name).toEqual([
        { cohort: 2, kind: 'exited', time: T0 + 5 * MINUTE, eventIndex: -1 },
      ]);
      expect(nextDeadline(plan, state), name).toBe(Number.POSITIVE_INFINITY);
    }
  });

  it('fixed windows (in_interval) and all-time counts give no deadline: a count of past events cannot change by the clock', () => {
    const cohorts = [cohort(1, expr('Click', { during: inInterval })), cohort(2, expr('Click', { frequency: lt(2) })), cohort(3, expr('Click', { during: { kind: 'last', count: 1 } }))];
    for (const { name, plan, keep } of variants(cohorts)) {
      let state = newUserState();
      segment(plan, state, [ev('Click', T0 + MINUTE)], EMPTY_CONTEXT);
      state = keep(state);
      expect(nextDeadline(plan, state), name).toBe(Number.POSITIVE_INFINITY);
      // After the interval's end the count is still 1: the interval's end is no deadline.
      expect(evaluateAt(plan, state, T0 + 2 * HOUR, EMPTY_CONTEXT).memberships, name).toEqual([1, 2, 3]);
    }
  });
});

describe('the session timeout (D36 + D31)', () => {
  const cohorts = [
    cohort(1, expr('Click', { during: thisSession })),
    cohort(2, expr('Click', { during: thisSession, frequency: eq(0) })),
    cohort(3, { kind: 'transition', op: 'has_exited', segment: 1, during: thisSession } satisfies Clause),
  ];

  it('a derived session ends 30 minutes after its last event: this_session counts drop to zero then, and only once', () => {
    for (const { name, plan, keep } of variants(cohorts)) {
      let state = newUserState();
      expect(segment(plan, state, [ev('Click', T0), ev('Other', T0 + 10 * MINUTE)], EMPTY_CONTEXT).memberships, name).toEqual([1]);
      state = keep(state);
      const deadline = nextDeadline(plan, state);
      expect(deadline, name).toBe(T0 + 10 * MINUTE + SESSION_GAP_MS);
      expect(evaluateAt(plan, state, deadline - 1, EMPTY_CONTEXT).transitions, name).toEqual([]);
      state = keep(state);
      const ended = evaluateAt(plan, state, deadline, EMPTY_CONTEXT);
      // The exit of 1 belongs to the new (empty) session run, so has_exited this_session holds (E12, E20).
      expect(ended.transitions, name).toEqual([
        { cohort: 1, kind: 'exited', time: deadline, eventIndex: -1 },
        { cohort: 2, kind: 'entered', time: deadline, eventIndex: -1 },
        { cohort: 3, kind: 'entered', time: deadline, eventIndex: -1 },
      ]);
      expect(nextDeadline(plan, state), name).toBe(Number.POSITIVE_INFINITY);
      // Idempotent: a later re-evaluation (after a round trip too) changes nothing more.
      state = keep(state);
      expect(evaluateAt(plan, state, deadline + DAY, EMPTY_CONTEXT).transitions, name).toEqual([]);
      // The next event starts a new session (E2: the gap is measured from the last event): 3's exit is in the old one.
      expect(segment(plan, state, [ev('Click', deadline + DAY + MINUTE)], EMPTY_CONTEXT).memberships, name).toEqual([1]);
      expect(nextDeadline(plan, state), name).toBe(deadline + DAY + MINUTE + SESSION_GAP_MS);
    }
  });

  it('an event after the timeout without a re-evaluation still starts a new session (the old behaviour, E2)', () => {
    for (const { name, plan } of variants(cohorts)) {
      const state = newUserState();
      segment(plan, state, [ev('Click', T0)], EMPTY_CONTEXT);
      expect(segment(plan, state, [ev('Other', T0 + SESSION_GAP_MS)], EMPTY_CONTEXT).memberships, name).toEqual([2, 3]);
    }
  });

  it('a session with a given session_id does not time out by the clock: no deadline, the next event decides', () => {
    for (const { name, plan, keep } of variants(cohorts)) {
      let state = newUserState();
      segment(plan, state, [ev('Click', T0, {}, { session_id: 's1' })], EMPTY_CONTEXT);
      state = keep(state);
      expect(nextDeadline(plan, state), name).toBe(Number.POSITIVE_INFINITY);
      expect(evaluateAt(plan, state, T0 + 2 * HOUR, EMPTY_CONTEXT).transitions, name).toEqual([]);
      // The same id hours later is the same session (D31: the id decides).
      expect(segment(plan, state, [ev('Other', T0 + 3 * HOUR, {}, { session_id: 's1' })], EMPTY_CONTEXT).memberships, name).toEqual([1]);
    }
  });

  it('no deadline without timed or session-scoped slots, however the user behaves', () => {
    const plain = [cohort(1, expr('Click')), cohort(2, expr('Click', { during: { kind: 'current_view' } })), cohort(3, expr('Click', { during: { kind: 'first', count: 2 } }))];
    for (const { name, plan, keep } of variants(plain)) {
      let state = newUserState();
      segment(plan, state, [ev('Pageview', T0), ev('Click', T0 + MINUTE)], EMPTY_CONTEXT);
      state = keep(state);
      expect(nextDeadline(plan, state), name).toBe(Number.POSITIVE_INFINITY);
      expect(evaluateAt(plan, state, T0 + 40 * DAY, EMPTY_CONTEXT).transitions, name).toEqual([]);
    }
  });

  it('the earlier of the two sources wins: a window ending before the session does', () => {
    const mixed = [cohort(1, expr('Click', { during: thisSession })), cohort(2, expr('Click', { during: theLast(5 * MINUTE) }))];
    for (const { name, plan, keep } of variants(mixed)) {
      let state = newUserState();
      segment(plan, state, [ev('Click', T0)], EMPTY_CONTEXT);
      state = keep(state);
      expect(nextDeadline(plan, state), name).toBe(T0 + 5 * MINUTE);
      expect(evaluateAt(plan, state, T0 + 5 * MINUTE, EMPTY_CONTEXT).memberships, name).toEqual([1]);
      expect(nextDeadline(plan, state), name).toBe(T0 + SESSION_GAP_MS);
      expect(evaluateAt(plan, state, T0 + SESSION_GAP_MS, EMPTY_CONTEXT).memberships, name).toEqual([]);
    }
  });
});
