// An owner's compute (work.ts) for a resident user whose imported data (E13, E14) stays, changes and comes back
// between tasks: the same captured data gives the same constant context object (tick/context.ts), so the engine may
// keep the decisions that read it alone; other data gives a new one, and the memberships follow the data.

import { describe, expect, it } from 'vitest';
import { toEngineEvent } from '../../domain/events/index.js';
import { EMPTY_CONTEXT_DATA, contextBytes, type ContextData } from '../tick/context.js';
import { residentBytes } from '../state/bytes.js';
import type { UserState } from '../../../engine/index.js';
import { cohort, event, ORG } from '../../../test/support/ingest.js';
import { ResidentStates } from './resident-states.js';
import { PlanCache, runWork, type WorkReply, type WorkTask, type WorkUser } from './work.js';

const COHORTS = [
  cohort(1, { event: 'Pageview', frequency: { greater_than_or_equal_to: 1 } }),
  cohort(3, { in_third_party_segment: { provider: 'acme', segment: 'sports' } }),
  cohort(4, { in_connections_import_segment: { provider: 'crm', filters: { property: 'plan', condition: { equal_to: 'pro' } } } }),
];

const dataWith = (plan: string): ContextData => ({
  segments: [['3rd', 'acme', 'sports']],
  rows: [['crm', [{ time: 1, properties: { plan, seats: [1, { n: 2 }] } }]]],
});

describe('an owner reuses a resident user\'s context while its imported data is the same', () => {
  const plans = new PlanCache();
  const residents = new ResidentStates();
  let n = 0;
  const step = (ctx: ContextData, resident: boolean): { memberships: readonly number[]; exited: readonly number[] } => {
    const user: WorkUser = { key: 'u', resident, state: null, replay: [], snapshot: false, steps: [{ kind: 'events', events: [toEngineEvent(event(++n))] }], ctx };
    const task: WorkTask = { groups: [{ org: ORG, version: 1, cohorts: COHORTS, users: [user] }] };
    const reply = runWork(task, plans, residents) as Extract<WorkReply, { groups: unknown }>;
    const result = reply.groups[0]?.[0]?.steps[0];
    if (result === undefined) throw new Error('no step result');
    return { memberships: result.memberships, exited: result.transitions.filter((t) => t.kind === 'exited').map((t) => t.cohort) };
  };
  const contextOfState = (): unknown => residents.get('u')?.context;

  it('keeps the object for equal data, takes a new one for other data, and the memberships follow the data', () => {
    expect(step(dataWith('pro'), false).memberships).toEqual([1, 3, 4]);
    const first = contextOfState();
    expect(first).toBeDefined();
    // Equal data decoded again (other objects, the same content): the same context object.
    expect(step(structuredClone(dataWith('pro')), true).memberships).toEqual([1, 3, 4]);
    expect(contextOfState()).toBe(first);
    // Kept with the state, its bytes count in the state's (D40: the main thread's cache is bounded by them).
    const state = residents.get('u') as UserState;
    expect(contextBytes(state.context)).toBeGreaterThan(400);
    expect(residentBytes(state)).toBe(residentBytes({ ...state, context: undefined } as UserState) + contextBytes(state.context));
    // A row's property changed: a new object, and the connections cohort is decided again.
    expect(step(dataWith('free'), true)).toEqual({ memberships: [1, 3], exited: [4] });
    const second = contextOfState();
    expect(second).not.toBe(first);
    // No imported data at all, then the first data again.
    expect(step(EMPTY_CONTEXT_DATA, true)).toEqual({ memberships: [1], exited: [3] });
    expect(step(dataWith('pro'), true).memberships).toEqual([1, 3, 4]);
    expect(contextOfState()).not.toBe(second);
    // A segment left (the rows the same): a new object again.
    expect(step({ segments: [], rows: dataWith('pro').rows }, true)).toEqual({ memberships: [1, 4], exited: [3] });
  });
});
