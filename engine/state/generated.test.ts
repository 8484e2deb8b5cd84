// The generated hot paths (state/generated.ts) answer exactly as the generic loops do, and user-controlled text
// (event names, `where` values, providers) never reaches the generated source.

import { describe, expect, it } from 'vitest';
import type { CohortDefinition, EngineEvent, SegmentContext, Transition } from '../api.js';
import { EMPTY_CONTEXT } from '../api.js';
import { compilePlan } from '../plan/compile.js';
import type { Plan } from '../plan/plan.js';
import type { Where } from '../query/ast.js';
import { SampleGenerator } from '../../test/support/sample-cohorts.js';
import { evaluateAt, segment } from './segment.js';
import { cohort, expr, gte, pred, str } from '../../test/support/engine-queries.js';
import { newUserState } from './user-state.js';

function trace(plan: Plan, events: readonly EngineEvent[], ctx: SegmentContext): { transitions: Transition[]; memberships: number[][] } {
  const state = newUserState();
  const transitions: Transition[] = [];
  const memberships: number[][] = [];
  events.forEach((event, i) => {
    const result = segment(plan, state, [event], ctx);
    for (const t of result.transitions) transitions.push({ ...t, eventIndex: i });
    memberships.push(result.memberships);
    if (i % 17 === 16) {
      const again = evaluateAt(plan, state, event.time + 3_600_000, ctx);
      for (const t of again.transitions) transitions.push({ ...t, eventIndex: -1 - i });
      memberships.push(again.memberships);
    }
  });
  return { transitions, memberships };
}

/** 40 sample cohorts of `seed`, compiled with generated code and without. */
function samplePlans(seed: number): { gen: SampleGenerator; generated: Plan; generic: Plan } {
  const gen = new SampleGenerator(seed);
  const cohorts = gen.cohorts(40);
  return { gen, generated: compilePlan(cohorts, 1), generic: compilePlan(cohorts, 1, { generateCode: false }) };
}

describe('generated hot paths', () => {
  it('give the generic loops\' answers on sample cohorts and streams', () => {
    for (let seed = 1; seed <= 12; seed++) {
      const { gen, generated, generic } = samplePlans(seed);
      expect(generated.hot).toBeDefined();
      expect(generic.hot).toBeUndefined();
      for (let user = 0; user < 3; user++) {
        const ctx = gen.context();
        const events = gen.events(300);
        expect(trace(generated, events, ctx)).toEqual(trace(generic, events, ctx));
      }
    }
  });

  it('write out count, sum and flag updates that leave every number as the slots\' own methods do', () => {
    for (let seed = 1; seed <= 6; seed++) {
      const { gen, generated, generic } = samplePlans(seed);
      // The sample plans have slots of every kind that gives its code, and slots that keep their calls.
      const written = generated.slots.filter((slot) => slot.eventSource?.('m', '', []) !== undefined);
      expect(new Set(written.map((slot) => slot.constructor.name)).size).toBeGreaterThanOrEqual(3);
      expect(written.length).toBeLessThan(generated.slots.length);
      const ctx = gen.context();
      const ours = newUserState();
      const theirs = newUserState();
      gen.events(300).forEach((event, i) => {
        segment(generated, ours, [event], ctx);
        segment(generic, theirs, [event], ctx);
        if (i % 19 === 18) {
          evaluateAt(generated, ours, event.time + 5_400_000, ctx);
          evaluateAt(generic, theirs, event.time + 5_400_000, ctx);
        }
        // The same layout (one compilation of the same cohorts): the same numbers and rings after every step.
        expect(Array.from(ours.nums)).toEqual(Array.from(theirs.nums));
        expect(Array.from(ours.ints)).toEqual(Array.from(theirs.ints));
        expect(ours.objs).toEqual(theirs.objs);
      });
    }
  });

  it('test a `where` by its parts as compileWhere does: one predicate, and, or, and empty lists', () => {
    const sport = pred('properties.section', str('equal_to', 'sport'));
    const news = pred('properties.section', str('equal_to', 'news'));
    const cheap = pred('properties.price', { family: 'integer', comparison: { op: 'less_than', value: 50 } });
    const wheres: Where[] = [
      sport,
      { kind: 'and', items: [sport, cheap] },
      { kind: 'or', items: [news, cheap] },
      { kind: 'and', items: [] },
      { kind: 'or', items: [] },
    ];
    const cohorts: CohortDefinition[] = wheres.map((where, i) => cohort(i + 1, expr('Buy', { where, frequency: gte(1) })));
    const generated = compilePlan(cohorts, 1);
    const generic = compilePlan(cohorts, 1, { generateCode: false });
    expect(generated.hot).toBeDefined();
    const events: EngineEvent[] = [
      { name: 'Buy', time: 1_000, properties: { section: 'news', price: 80 } },
      { name: 'Buy', time: 2_000, properties: { section: 'sport', price: 80 } },
      { name: 'Buy', time: 3_000, properties: { section: 'sport', price: 20 } },
      { name: 'Buy', time: 4_000, properties: { price: 10 } },
    ];
    const ours = trace(generated, events, EMPTY_CONTEXT);
    expect(ours).toEqual(trace(generic, events, EMPTY_CONTEXT));
    // The first Buy (news, 80) enters 3 (news or cheap) and 4 (the empty `and` holds); the second (sport, 80) enters
    // 1; the third (sport, 20) enters 2 (sport and cheap); the empty `or` (5) never holds.
    expect(ours.memberships.at(-1)).toEqual([1, 2, 3, 4]);
    expect(ours.memberships[0]).toEqual([3, 4]);
  });

  it('run a group\'s `where` test only when a slot can use the event, at most once (a filled `first N`, a past window)', () => {
    const sport = pred('properties.section', str('equal_to', 'sport'));
    // Three groups of Buy: where section = sport, read by a `first 2` count; where section = music, by a count before
    // t = 2,500; where section = news, by a count before t = 2,500 and, through a third cohort, by a plain count
    // (one group: one test for both slots).
    const music = pred('properties.section', str('equal_to', 'music'));
    const news = pred('properties.section', str('equal_to', 'news'));
    const cohorts: CohortDefinition[] = [
      cohort(1, expr('Buy', { where: sport, during: { kind: 'first', count: 2 }, frequency: gte(1) })),
      cohort(2, expr('Buy', { where: news, during: { kind: 'before', time: 2_500 }, frequency: gte(1) })),
      cohort(3, expr('Buy', { where: news, frequency: gte(2) })),
      cohort(4, expr('Buy', { where: music, during: { kind: 'before', time: 2_500 }, frequency: gte(1) })),
    ];
    const generated = compilePlan(cohorts, 1);
    const generic = compilePlan(cohorts, 1, { generateCode: false });
    expect(generated.hot).toBeDefined();
    let reads = 0;
    const buy = (time: number, section: string): EngineEvent => {
      const properties = {};
      Object.defineProperty(properties, 'section', { enumerable: true, get: () => (reads++, section) });
      return { name: 'Buy', time, properties };
    };
    const readsOf = (plan: Plan): number[] => {
      const state = newUserState();
      return [1_000, 2_000, 3_000, 4_000].map((time, i) => {
        reads = 0;
        segment(plan, state, [buy(time, i % 2 === 0 ? 'sport' : 'news')], EMPTY_CONTEXT);
        return reads;
      });
    };
    // The generic loops test each group at every event: three reads. The generated hooks: every group while the
    // `first 2` is open and the window not past, then the news group alone (its plain count always needs it).
    expect(readsOf(generic)).toEqual([3, 3, 3, 3]);
    expect(readsOf(generated)).toEqual([3, 3, 1, 1]);
    const events = [1_000, 2_000, 3_000, 4_000, 5_000].map((time, i) => ({ name: 'Buy', time, properties: { section: ['news', 'sport', 'music'][i % 3] } }));
    expect(trace(generated, events, EMPTY_CONTEXT)).toEqual(trace(generic, events, EMPTY_CONTEXT));
  });

  it('keep hostile names and values out of the source (they reach the tests as data)', () => {
    const hostile = 'x"); throw new Error("injected"); ("\u2028`${1}`\\';
    const where: Where = pred(`properties.${hostile}`, str('equal_to', hostile));
    const cohorts: CohortDefinition[] = [cohort(7, expr(hostile, { where, frequency: gte(2) }))];
    const plan = compilePlan(cohorts, 1);
    expect(plan.hot).toBeDefined();
    const event = (time: number): EngineEvent => ({ name: hostile, time, properties: { [hostile]: hostile } });
    const state = newUserState();
    expect(segment(plan, state, [event(1_000)], EMPTY_CONTEXT).memberships).toEqual([]);
    expect(segment(plan, state, [event(2_000)], EMPTY_CONTEXT).memberships).toEqual([7]);
  });
});
