// evaluateAt (E20): re-evaluation without an event when imported data changes (D27): transitions at index -1 and the
// effective now, windows aged, nothing counted, `where` on no properties, sessions measured from events (D31).

import { describe, expect, it } from 'vitest';
import type { ConnectionRow, SegmentContext } from '../api.js';
import { EMPTY_CONTEXT } from '../api.js';
import { compilePlan } from '../plan/compile.js';
import type { Clause } from '../query/ast.js';
import { decodeState, encodeState } from './codec.js';
import { evaluateAt, segment } from './segment.js';
import { HOUR, MINUTE, T0, cohort, eq, ev, expr, gte, pred, theLast } from '../../test/support/engine-queries.js';
import { newUserState } from './user-state.js';

const inSports: Clause = { kind: 'membership', op: 'in_third_party_segment', provider: 'acme', segment: 'sports' };

function contextWith(segments: string[], rows: Record<string, ConnectionRow[]> = {}): SegmentContext {
  return {
    inImportedSegment: (relation, provider, segment) => segments.includes(`${relation}/${provider}/${segment}`),
    connectionRows: (provider) => rows[provider] ?? [],
  };
}

describe('evaluateAt (E20)', () => {
  it('an imported segment added after the last event enters the cohort, at index -1 and time now; removed, it exits', () => {
    const plan = compilePlan([cohort(5, inSports)], 1);
    const state = newUserState();
    expect(segment(plan, state, [ev('A', T0)], EMPTY_CONTEXT).memberships).toEqual([]);
    const added = evaluateAt(plan, state, T0 + MINUTE, contextWith(['3rd/acme/sports']));
    expect(added.memberships).toEqual([5]);
    expect(added.transitions).toEqual([{ cohort: 5, kind: 'entered', time: T0 + MINUTE, eventIndex: -1 }]);
    expect(added.state).toBe(state);
    const removed = evaluateAt(plan, state, T0 + 2 * MINUTE, EMPTY_CONTEXT);
    expect(removed.transitions).toEqual([{ cohort: 5, kind: 'exited', time: T0 + 2 * MINUTE, eventIndex: -1 }]);
    expect(state.count).toBe(1);
  });

  it('a user with no events is not evaluated (E5)', () => {
    const plan = compilePlan([cohort(5, inSports), cohort(6, expr('A', { frequency: eq(0) }))], 1);
    const state = newUserState();
    const result = evaluateAt(plan, state, T0, contextWith(['3rd/acme/sports']));
    expect(result).toMatchObject({ transitions: [], memberships: [] });
    expect(state.count).toBe(0);
    expect(segment(plan, state, [ev('B', T0 + 1)], contextWith(['3rd/acme/sports'])).memberships).toEqual([5, 6]);
  });

  it('windows are judged at now: a the_last window empties without an event; nothing new is counted', () => {
    const plan = compilePlan([cohort(1, expr('Click', { during: theLast(10 * MINUTE) })), cohort(2, expr('Click', { frequency: eq(1) }))], 1);
    const state = newUserState();
    expect(segment(plan, state, [ev('Click', T0)], EMPTY_CONTEXT).memberships).toEqual([1, 2]);
    expect(evaluateAt(plan, state, T0 + 10 * MINUTE - 1, EMPTY_CONTEXT).transitions).toEqual([]);
    const aged = evaluateAt(plan, state, T0 + 10 * MINUTE, EMPTY_CONTEXT);
    expect(aged.transitions).toEqual([{ cohort: 1, kind: 'exited', time: T0 + 10 * MINUTE, eventIndex: -1 }]);
    expect(aged.memberships).toEqual([2]);
  });

  it('now never goes back: an earlier now re-evaluates at the previous effective time (E1)', () => {
    const plan = compilePlan([cohort(5, inSports)], 1);
    const state = newUserState();
    segment(plan, state, [ev('A', T0 + HOUR)], EMPTY_CONTEXT);
    const result = evaluateAt(plan, state, T0, contextWith(['3rd/acme/sports']));
    expect(result.transitions).toEqual([{ cohort: 5, kind: 'entered', time: T0 + HOUR, eventIndex: -1 }]);
    expect(evaluateAt(plan, state, Number.NaN, EMPTY_CONTEXT).transitions[0]?.time).toBe(T0 + HOUR);
  });

  it('a later event is no earlier than the re-evaluation (E1): a before-window misses it', () => {
    const plan = compilePlan([cohort(1, expr('Click', { during: { kind: 'before', time: T0 + HOUR } }))], 1);
    const state = newUserState();
    segment(plan, state, [ev('A', T0)], EMPTY_CONTEXT);
    evaluateAt(plan, state, T0 + 2 * HOUR, EMPTY_CONTEXT);
    expect(segment(plan, state, [ev('Click', T0 + MINUTE)], EMPTY_CONTEXT).transitions).toEqual([]);
  });

  it('entries it causes are seen by transition clauses (E12), whose where sees no properties (E15)', () => {
    const empty = pred('properties.page', { family: 'string', op: 'is_empty' });
    const home = pred('properties.page', { family: 'string', op: 'equal_to', values: ['home'] });
    const plan = compilePlan(
      [
        cohort(1, inSports),
        cohort(2, { kind: 'transition', op: 'has_entered', segment: 1, where: empty }),
        cohort(3, { kind: 'transition', op: 'has_entered', segment: 1, where: home }),
        cohort(4, { kind: 'transition', op: 'has_entered', segment: 1, during: { kind: 'this_session' } }),
      ],
      1,
    );
    const state = newUserState();
    segment(plan, state, [ev('A', T0, { page: 'home' })], EMPTY_CONTEXT);
    const result = evaluateAt(plan, state, T0 + MINUTE, contextWith(['3rd/acme/sports']));
    expect(result.memberships).toEqual([1, 2, 4]);
    expect(result.transitions.map((t) => [t.cohort, t.eventIndex])).toEqual([[1, -1], [2, -1], [4, -1]]);
  });

  it('the session gap is measured from the last event, not the re-evaluation (D31); the state keeps that across encoding', () => {
    const plan = compilePlan([cohort(1, expr('Click', { during: { kind: 'this_session' }, frequency: gte(2) }))], 1);
    for (const roundTrip of [false, true]) {
      let state = newUserState();
      segment(plan, state, [ev('Click', T0)], EMPTY_CONTEXT);
      evaluateAt(plan, state, T0 + 20 * MINUTE, EMPTY_CONTEXT);
      if (roundTrip) state = decodeState(encodeState(state));
      // 40 minutes after the last event: a new session although the re-evaluation was 20 minutes ago.
      expect(segment(plan, state, [ev('Click', T0 + 40 * MINUTE)], EMPTY_CONTEXT).memberships).toEqual([]);
      expect(segment(plan, state, [ev('Click', T0 + 41 * MINUTE)], EMPTY_CONTEXT).memberships).toEqual([1]);
    }
  });

  it('connections clauses read the new rows at now (E14)', () => {
    const plan = compilePlan([cohort(1, { kind: 'connections', op: 'in_connections_import_segment', provider: 'crm', frequency: gte(1), during: theLast(HOUR) })], 1);
    const state = newUserState();
    segment(plan, state, [ev('A', T0)], EMPTY_CONTEXT);
    const rows = { crm: [{ time: T0 + 30 * MINUTE, properties: {} }] };
    expect(evaluateAt(plan, state, T0 + 40 * MINUTE, contextWith([], rows)).memberships).toEqual([1]);
    expect(evaluateAt(plan, state, T0 + 90 * MINUTE, contextWith([], rows)).memberships).toEqual([]);
  });

  it('after a plan change it evaluates every cohort of the new plan at now', () => {
    const v1 = compilePlan([cohort(1, expr('A'))], 1);
    const v2 = compilePlan([cohort(1, expr('A')), cohort(2, expr('B', { frequency: eq(0) }))], 2);
    const state = newUserState();
    segment(v1, state, [ev('A', T0)], EMPTY_CONTEXT);
    const result = evaluateAt(v2, state, T0 + MINUTE, EMPTY_CONTEXT);
    expect(result.memberships).toEqual([1, 2]);
    expect(result.transitions).toEqual([{ cohort: 2, kind: 'entered', time: T0 + MINUTE, eventIndex: -1 }]);
  });
});
