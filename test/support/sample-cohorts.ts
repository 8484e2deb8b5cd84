// A seeded generator of cohorts mixing every clause kind, event streams and contexts: shared by the engine's
// consistency tests and bench/engine.ts (same inputs for the same seed, no Math.random).

import type { CohortDefinition, ConnectionRow, EngineEvent, SegmentContext } from '../../engine/api.js';
import type { Clause, Condition, During, NumberComparison, Predicate, Where } from '../../engine/query/ast.js';
import { createRng } from '../differential/random.js';

/** The shared seeded PRNG (mulberry32) as a function returning floats in [0, 1). */
export const createRandom = (seed: number): (() => number) => createRng(seed).next;

const T0 = Date.UTC(2026, 0, 1);
const MINUTE = 60_000;
const NAMES = ['Pageview', 'PageviewEngagement', 'Click', 'Buy', 'Search'] as const;
const SECTIONS = ['news', 'sport', 'tech'];

export class SampleGenerator {
  readonly random: () => number;
  constructor(seed: number) {
    this.random = createRandom(seed);
  }

  int(min: number, max: number): number {
    return min + Math.floor(this.random() * (max - min + 1));
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.random() * items.length)] as T;
  }

  comparison(max: number): NumberComparison {
    const v = this.int(0, max);
    switch (this.int(0, 6)) {
      case 0:
        return { op: 'equal_to', values: [v, this.int(0, max)] };
      case 1:
        return { op: 'not_equal_to', values: [v] };
      case 2:
        return { op: 'between', start: v, end: v + this.int(0, max) };
      case 3:
        return { op: 'greater_than', value: v };
      case 4:
        return { op: 'less_than', value: v + 1 };
      case 5:
        return { op: 'less_than_or_equal_to', value: v };
      default:
        return { op: 'greater_than_or_equal_to', value: Math.max(1, v) };
    }
  }

  during(): During | undefined {
    switch (this.int(0, 9)) {
      case 0:
      case 1:
        return undefined;
      case 2:
        return { kind: 'this_session' };
      case 3:
        return { kind: 'current_view' };
      case 4: {
        const value = this.int(1, 90);
        return { kind: 'the_last', value, unit: 'minutes', ms: value * MINUTE };
      }
      case 5: {
        const start = T0 + this.int(0, 600) * MINUTE;
        return { kind: 'in_interval', start, end: start + this.int(0, 600) * MINUTE };
      }
      case 6:
        return { kind: 'before', time: T0 + this.int(0, 1200) * MINUTE };
      case 7:
        return { kind: 'after', time: T0 + this.int(0, 1200) * MINUTE };
      case 8:
        return { kind: 'first', count: this.int(1, 12) };
      default:
        return { kind: 'last', count: this.int(1, 12) };
    }
  }

  predicate(): Predicate {
    const p = (property: string, condition: Condition): Predicate => ({ kind: 'predicate', property, path: property.split('.').slice(1), condition });
    switch (this.int(0, 7)) {
      case 0:
        return p('properties.section', { family: 'string', op: this.pick(['equal_to', 'not_equal_to'] as const), values: [this.pick(SECTIONS)] });
      case 1:
        return p('properties.section', { family: 'string', op: this.pick(['contains', 'does_not_contain'] as const), values: ['s'] });
      case 2:
        return p('properties.price', { family: 'integer', comparison: this.comparison(100) });
      case 3:
        return p('properties.tags', { family: 'list', op: this.pick(['list_contains', 'list_does_not_contain'] as const), values: [this.pick(['a', 'b', 'c'])] });
      case 4:
        return p('properties.flag', { family: 'boolean', value: this.random() < 0.5 });
      case 5:
        return p('properties.page.type', { family: 'string', op: this.pick(['is_empty', 'is_not_empty'] as const) });
      case 6:
        return p('properties.published', { family: 'date', comparison: { op: this.pick(['greater_than', 'less_than', 'not_equal_to'] as const), ...this.dateOperand() } as NumberComparison });
      default:
        return p('properties.items', {
          family: 'list_summary',
          property: 'n',
          path: ['n'],
          function: this.pick(['any', 'all', 'sum', 'max', 'count', 'mean'] as const),
          condition: { family: 'integer', comparison: this.comparison(10) },
          ...(this.random() < 0.5 && {
            where: { kind: 'predicate', property: 'key', path: ['key'], condition: { family: 'string', op: 'equal_to', values: [this.pick(['a', 'b'])] } },
          }),
        });
    }
  }

  private dateOperand(): { value: number; values: number[] } {
    const at = T0 + this.int(0, 10) * 86_400_000;
    return { value: at, values: [at] };
  }

  where(): Where | undefined {
    const r = this.random();
    if (r < 0.35) return undefined;
    if (r < 0.8) return this.predicate();
    return { kind: this.random() < 0.5 ? 'and' : 'or', items: [this.predicate(), this.predicate()] };
  }

  clause(earlier: readonly number[]): Clause {
    const where = this.where();
    const during = this.during();
    const opt = { ...(where && { where }), ...(during && { during }) };
    const kind = this.int(0, 13);
    if (kind <= 5) return { kind: 'expression', event: this.pick(NAMES), frequency: this.comparison(4), ...opt };
    if (kind === 6) return { kind: 'engaged_time', seconds: this.comparison(60), ...opt };
    if (kind === 7) return { kind: 'engaged_completion', completion: { op: 'greater_than_or_equal_to', value: this.pick([0, 0.25, 0.5, 0.9]) }, ...(where && { where }) };
    if (kind === 8) {
      const measure = this.random() < 0.5 ? 'engaged_time' : 'completion';
      const comparison: NumberComparison = measure === 'engaged_time' ? this.comparison(30) : { op: 'greater_than', value: this.pick([0.2, 0.5, 0.8]) };
      return { kind: 'engaged_views', times: this.comparison(3), per_view: { measure, comparison }, ...opt };
    }
    if ((kind === 9 || kind === 10) && earlier.length > 0) {
      return { kind: 'transition', op: this.pick(['has_entered', 'has_not_entered', 'has_exited', 'has_not_exited'] as const), segment: this.pick(earlier), ...opt };
    }
    if (kind === 11) {
      return { kind: 'membership', op: this.pick(['in_third_party_segment', 'not_in_third_party_segment', 'in_second_party_segment', 'not_in_second_party_segment'] as const), provider: 'p', segment: this.pick(['s1', 's2']) };
    }
    if (kind === 12) {
      const filters = this.random() < 0.5 ? undefined : ({ kind: 'predicate', property: 'plan', path: ['plan'], condition: { family: 'string', op: 'equal_to', values: ['gold'] } } as const);
      return { kind: 'connections', op: this.random() < 0.7 ? 'in_connections_import_segment' : 'not_in_connections_import_segment', provider: 'crm', frequency: this.comparison(3), ...(filters && { filters }), ...(during && { during }) };
    }
    return { kind: 'expression', event: this.pick(NAMES), frequency: { op: 'greater_than_or_equal_to', value: 1 }, ...opt };
  }

  /** `count` cohorts with codes 1..count; transition clauses name lower codes only (no cycles). */
  cohorts(count: number): CohortDefinition[] {
    const out: CohortDefinition[] = [];
    for (let code = 1; code <= count; code++) {
      const earlier = out.map((c) => c.code);
      const groups = Array.from({ length: this.int(1, 3) }, () => ({ or: Array.from({ length: this.int(1, 2) }, () => this.clause(earlier)) }));
      out.push({ code, query: { and: groups } });
    }
    return out;
  }

  /** A user's event stream: Pageviews, engagement, clicks; gaps from ms to hours, some late events, some ids. */
  events(count: number, start = T0): EngineEvent[] {
    const out: EngineEvent[] = [];
    let t = start;
    for (let i = 0; i < count; i++) {
      const r = this.random();
      t += r < 0.05 ? this.int(30, 120) * MINUTE : r < 0.1 ? -this.int(0, 5) * MINUTE : this.int(0, 3) * MINUTE + this.int(0, 999);
      const name = this.pick(NAMES);
      const properties: Record<string, unknown> = {
        section: this.pick([...SECTIONS, undefined, 5]),
        price: this.pick([this.int(0, 100), this.int(0, 100), '7', null]),
        tags: this.pick([['a'], ['a', 'b'], [], 'a', undefined]),
        flag: this.pick([true, false, undefined]),
        page: this.pick([{ type: 'article' }, { type: '' }, {}, undefined]),
        published: this.pick([new Date(T0 + this.int(0, 10) * 86_400_000).toISOString(), 'soon', undefined]),
        items: this.pick([[{ key: 'a', n: this.int(0, 10) }, { key: 'b', n: this.int(0, 10) }, { key: 'a', n: 'x' }], [], undefined, [{ key: 'b', n: 3 }]]),
      };
      if (name === 'PageviewEngagement') {
        properties['engaged_time'] = this.pick([this.int(0, 30), this.int(0, 30), 2.5, -1, undefined]);
        properties['completion'] = this.pick([this.random(), 0.5, 1, undefined]);
      }
      const ids: { session_id?: string | null; view_id?: string | null } = {};
      if (this.random() < 0.1) ids.session_id = this.pick(['s1', 's2', null]);
      if (this.random() < 0.1) ids.view_id = this.pick(['v1', 'v2', null]);
      out.push({ name, time: t, properties, ...ids });
    }
    return out;
  }

  /** A context: membership in some imported segments and a few connections rows. */
  context(): SegmentContext {
    const third = new Set(['s1', 's2'].filter(() => this.random() < 0.5));
    const second = new Set(['s1', 's2'].filter(() => this.random() < 0.5));
    const rows: ConnectionRow[] = Array.from({ length: this.int(0, 4) }, () => ({
      time: T0 + this.int(-60, 900) * MINUTE,
      properties: { plan: this.pick(['gold', 'basic']) },
    }));
    const none: readonly ConnectionRow[] = [];
    return {
      inImportedSegment: (relation, provider, segment) => provider === 'p' && (relation === '3rd' ? third : second).has(segment),
      connectionRows: (provider) => (provider === 'crm' ? rows : none),
      // Fixed once made, as a caller's snapshot of a user's imported data (engine/api.ts).
      constant: true,
    };
  }
}
