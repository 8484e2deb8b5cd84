// Plan.eventPropertyKeys (property-keys.ts): the top-level keys of an event's properties a plan can read. A plan
// must answer the same for events stripped of every other top-level property (what an owner's catch-up decodes,
// server/domain/events/engine-reader.ts), over the differential test's random cohorts and streams.

import { describe, expect, it } from 'vitest';
import type { EngineEvent } from '../api.js';
import { encodeState, newUserState, segment } from '../state/index.js';
import { validateQuery } from '../query/validate.js';
import { compilePlan } from './compile.js';
import { compileScenarioPlan } from '../../test/differential/compare.js';
import { buildScenario } from '../../test/differential/scenario.js';
import { isReevaluation } from '../../test/reference/index.js';

function planOf(...queries: unknown[]) {
  return compilePlan(
    queries.map((query, i) => {
      const result = validateQuery(query);
      if (!result.ok) throw new Error(JSON.stringify(result.problems));
      return { code: i + 1, query: result.query };
    }),
    1,
  );
}

const sorted = (keys: ReadonlySet<string> | undefined): string[] | undefined => (keys === undefined ? undefined : [...keys].sort());

describe('the event properties a plan reads (Plan.eventPropertyKeys)', () => {
  it('are the first segments of its event clauses\' where paths, and the engagement figures', () => {
    const plan = planOf(
      { event: 'Click', where: { property: 'properties.kind', condition: { equal_to: 'buy' } } },
      { engaged_time: { seconds: { greater_than: 3 }, where: { and: [{ property: 'properties.page.section', condition: { equal_to: 'news' } }, { property: 'properties.lang', condition: { equal_to: 'en' } }] } } },
      {
        event: 'Purchase',
        where: { property: 'properties.items', condition: { function: 'sum', property: 'price', condition: { greater_than: 10 }, where: { property: 'sku', condition: { equal_to: 'a' } } } },
      },
      { has_entered: { segment: 1, where: { property: 'properties.campaign', condition: { equal_to: 'x' } } } },
      { in_third_party_segment: { provider: 'acme', segment: 'sports' } },
    );
    expect(sorted(plan.eventPropertyKeys)).toEqual(['campaign', 'completion', 'engaged_time', 'items', 'kind', 'page', 'lang'].sort());
  });

  it('are only the engagement figures for a plan with no where', () => {
    expect(sorted(planOf({ event: 'Pageview', frequency: { greater_than_or_equal_to: 2 } }).eventPropertyKeys)).toEqual(['completion', 'engaged_time']);
  });

  it('suffice: random plans answer the same for events keeping only those properties', () => {
    let stripped = 0;
    for (let seed = 1; seed <= 600; seed++) {
      const scenario = buildScenario(seed, seed % 3 === 0 ? { cohorts: 4, events: 40, transitionHeavy: true } : { cohorts: 4, events: 40 });
      const plan = compileScenarioPlan(scenario.cohorts);
      const keys = plan.eventPropertyKeys;
      if (keys === undefined) continue;
      const events = scenario.inputs.filter((input): input is EngineEvent => !isReevaluation(input));
      const kept = events.map((event) => ({ ...event, properties: Object.fromEntries(Object.entries(event.properties).filter(([key]) => keys.has(key))) }));
      stripped += kept.filter((event, i) => Object.keys(event.properties).length < Object.keys((events[i] as EngineEvent).properties).length).length;
      const whole = newUserState();
      const part = newUserState();
      for (let at = 0; at < events.length; at += 7) {
        const a = segment(plan, whole, events.slice(at, at + 7), scenario.ctx);
        const b = segment(plan, part, kept.slice(at, at + 7), scenario.ctx);
        expect(b.transitions, `seed ${seed}`).toEqual(a.transitions);
        expect(b.memberships, `seed ${seed}`).toEqual(a.memberships);
      }
      expect(encodeState(part), `seed ${seed}`).toEqual(encodeState(whole));
    }
    // The random streams carry properties the plans do not read: the check above compared different inputs.
    expect(stripped).toBeGreaterThan(1000);
  });
});
