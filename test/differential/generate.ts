// Random VALID raw cohort queries (the spec's wire format) covering every clause kind, every `during` form, every
// `where` family and every way of combining clauses; re-exports the event and context generators.

import { DATES, DAY, FLOATS, HOUR, INTEGERS, STRINGS, T0 } from './events.js';
import type { Rng } from './random.js';

export { changeContext, randomContext, randomEvents, type RandomContext } from './events.js';
export { createRng, type Rng } from './random.js';

export interface QueryOptions {
  /** The code of the cohort being generated: transition clauses name lower codes only (no cycles). */
  readonly code: number;
  /** Instants (epoch ms) worth using as window boundaries, e.g. the events' times, to hit exact edges. */
  readonly instants: readonly number[];
  /**
   * `first N` / `last N` of 33–80 instead of 1–3 (rings past 32 bits: packed bytes, grown past 64 bits), and counts
   * compared with 0–12 instead of 0–3 (`the_last` rings past the 8 times kept inline).
   */
  readonly wideCounts?: boolean;
}

type Json = unknown;
const iso = (ms: number): string => new Date(ms).toISOString();

/** A query: a bare clause, an `or` of clauses, or an `and` of clauses and `or` items. */
export function randomQuery(rng: Rng, options: QueryOptions): Json {
  const roll = rng.next();
  if (roll < 0.35) return randomClause(rng, options);
  if (roll < 0.55) return { or: times(rng, 1, 3, () => randomClause(rng, options)) };
  return {
    and: times(rng, 1, 3, () => (rng.chance(0.3) ? { or: times(rng, 1, 3, () => randomClause(rng, options)) } : randomClause(rng, options))),
  };
}

function times<T>(rng: Rng, min: number, max: number, make: () => T): T[] {
  return Array.from({ length: rng.int(min, max) }, make);
}

export function randomClause(rng: Rng, options: QueryOptions): Json {
  const kinds = ['expression', 'expression', 'expression', 'engagement', 'engagement', 'membership', 'connections'];
  if (options.code > 1) kinds.push('transition', 'transition');
  switch (rng.pick(kinds)) {
    case 'expression':
      return randomExpression(rng, options);
    case 'engagement':
      return randomEngagement(rng, options);
    case 'transition':
      return randomTransition(rng, options);
    case 'membership':
      return {
        [rng.pick(['in_third_party_segment', 'not_in_third_party_segment', 'in_second_party_segment', 'not_in_second_party_segment'])]: {
          provider: rng.pick(['p1', 'p2']),
          segment: rng.pick(['a', 'b']),
        },
      };
    default: {
      const body: Record<string, Json> = { provider: rng.pick(['c1', 'c2', 'c3']) };
      if (rng.chance(0.6)) body['filters'] = randomWhere(rng, 'relative');
      if (rng.chance(0.6)) body['during'] = randomDuring(rng, options, true);
      if (rng.chance(0.5)) body['frequency'] = randomCount(rng, options);
      return { [rng.pick(['in_connections_import_segment', 'not_in_connections_import_segment'])]: body };
    }
  }
}

/** A transition clause naming a lower code (so cohorts never form a cycle, D18). */
export function randomTransition(rng: Rng, options: QueryOptions): Json {
  const body: Record<string, Json> = { segment: rng.int(1, options.code - 1) };
  if (rng.chance(0.6)) body['during'] = randomDuring(rng, options, true);
  if (rng.chance(0.5)) body['where'] = randomWhere(rng, 'event');
  return { [rng.pick(['has_entered', 'has_not_entered', 'has_exited', 'has_not_exited'])]: body };
}

/** Queries whose membership flips often, for cohorts that transition clauses name. */
export function randomFlappyQuery(rng: Rng): Json {
  return rng.pick<Json>([
    { event: 'Click', during: 'current_view' },
    { event: 'Pageview', during: { the_last: { value: rng.pick([1, 2, 5]), unit: 'minutes' } } },
    { event: 'PageviewEngagement', during: { last: 1 }, where: randomWhere(rng, 'event') },
    { event: rng.pick(['Click', 'Purchase']), during: 'this_session', frequency: { equal_to: rng.int(0, 1) } },
    { engaged_completion: { completion: { greater_than_or_equal_to: 0.5 } } },
  ]);
}

function randomExpression(rng: Rng, options: QueryOptions): Json {
  const clause: Record<string, Json> = { event: rng.pick(['Pageview', 'Pageview', 'Click', 'Purchase', 'PageviewEngagement', 'Signup']) };
  if (rng.chance(0.6)) clause['frequency'] = randomCount(rng, options);
  if (rng.chance(0.6)) clause['during'] = randomDuring(rng, options);
  if (rng.chance(0.5)) clause['where'] = randomWhere(rng, 'event');
  return clause;
}

function randomEngagement(rng: Rng, options: QueryOptions): Json {
  const where = (): Record<string, Json> => (rng.chance(0.3) ? { where: randomWhere(rng, 'event') } : {});
  const during = (): Record<string, Json> => (rng.chance(0.5) ? { during: randomDuring(rng, options) } : {});
  switch (rng.pick(['engaged_time', 'engaged_completion', 'engaged_views'])) {
    case 'engaged_time':
      return { engaged_time: { seconds: randomComparison(rng, () => rng.pick([0, 1, 5, 10, 15, 30, 2.5])), ...during(), ...where() } };
    case 'engaged_completion':
      return { engaged_completion: { completion: randomComparison(rng, () => rng.pick([0, 0.25, 0.5, 0.6, 1, -0.5, 1.25])), ...where() } };
    default: {
      const perView = rng.chance(0.5)
        ? { engaged_time: randomComparison(rng, () => rng.pick([0, 1, 5, 10, 30])) }
        : { completion: randomComparison(rng, () => rng.pick([0, 0.25, 0.5, 1, -0.5, -1, 1.25])) };
      return { engaged_views: { times: randomCount(rng, options), ...perView, ...during(), ...where() } };
    }
  }
}

/**
 * Small thresholds so memberships flip: counts compared with 0..3; with `wideCounts` 0..12, so `the_last` rings (capped
 * at what the comparisons need) pass the 8 times kept inline and live in an array.
 */
function randomCount(rng: Rng, options: QueryOptions): Json {
  return randomComparison(rng, () => rng.int(0, options.wideCounts === true ? 12 : 3));
}

/** A number comparison over values from `value` (sorted for `between`); `prefix` for float_ / date_ keys. */
function randomComparison(rng: Rng, value: () => number | string, prefix = ''): Json {
  const op = rng.pick(['equal_to', 'not_equal_to', 'between', 'greater_than', 'less_than', 'greater_than_or_equal_to', 'less_than_or_equal_to']);
  if (op === 'between') {
    const [a, b] = [value(), value()];
    const ordered = toOrderable(a) <= toOrderable(b) ? { start: a, end: b } : { start: b, end: a };
    return { [prefix + op]: ordered };
  }
  if ((op === 'equal_to' || op === 'not_equal_to') && rng.chance(0.3)) return { [prefix + op]: [value(), value()] };
  return { [prefix + op]: value() };
}

const toOrderable = (v: number | string): number => (typeof v === 'number' ? v : Date.parse(v));

/** `countsOften`: favour `first N` / `last N`, whose "select, then filter" order is easy to get wrong. */
export function randomDuring(rng: Rng, options: QueryOptions, countsOften = false): Json {
  const instants = options.instants.length > 0 ? options.instants : [T0];
  const instant = (): string => iso(rng.pick(instants) + (rng.chance(0.8) ? rng.pick([0, 0, 1, -1]) : rng.pick([HOUR, -HOUR, DAY])));
  switch (countsOften && rng.chance(0.3) ? rng.int(6, 7) : rng.int(0, 7)) {
    case 0:
      return 'this_session';
    case 1:
      return 'current_view';
    case 2: {
      // lengths that the events' gaps (and sums of them) meet exactly, to hit the (now - length, now] edges
      const unit = rng.pick(['seconds', 'minutes', 'minutes', 'minutes', 'hours', 'days', 'weeks', 'months']);
      const values: Record<string, readonly number[]> = { seconds: [1, 60, 90], minutes: [1, 2, 3, 5, 10, 30, 31], hours: [1, 2], days: [1, 8, 31] };
      return { the_last: { value: rng.pick(values[unit] ?? [1]), unit } };
    }
    case 3: {
      const [a, b] = [instant(), instant()];
      return { in_interval: Date.parse(a) <= Date.parse(b) ? { start: a, end: b } : { start: b, end: a } };
    }
    case 4:
      return { before: instant() };
    case 5:
      return { after: instant() };
    case 6:
      return { first: options.wideCounts === true ? rng.int(33, 80) : rng.int(1, 3) };
    default:
      return { last: options.wideCounts === true ? rng.int(33, 80) : rng.int(1, 3) };
  }
}

type PathBase = 'event' | 'relative' | 'item';

/** Paths per family; a path of another family or a missing one now and then (wrong types, E15). */
const PATHS: Record<string, readonly string[]> = {
  string: ['s', 'o.s', 'o.deep.s'],
  number: ['n', 'o.n'],
  date: ['d', 'o.d'],
  boolean: ['b'],
  list: ['l'],
  summary: ['items'],
};
const ANY_PATHS = ['s', 'n', 'd', 'b', 'l', 'o', 'items', 'zz', 's.x', 'o.deep'];
const ITEM_PATHS: Record<string, readonly string[]> = {
  string: ['key', 'w'],
  number: ['v', 'sub.v'],
  date: ['w'],
  boolean: ['flag'],
  list: ['parts'],
  summary: ['parts'],
};
const ANY_ITEM_PATHS = ['key', 'v', 'w', 'flag', 'sub', 'sub.v', 'zz'];

function pathFor(rng: Rng, family: string, base: PathBase): string {
  const natural = base === 'item' ? ITEM_PATHS[family] : PATHS[family];
  const path = rng.chance(0.85) && natural !== undefined ? rng.pick(natural) : rng.pick(base === 'item' ? ANY_ITEM_PATHS : ANY_PATHS);
  return base === 'event' ? `properties.${path}` : path;
}

/** A `where`: one predicate, or a one-level `and` / `or` of predicates (E18). */
export function randomWhere(rng: Rng, base: PathBase, depth = 0): Json {
  if (rng.chance(0.25)) return { [rng.pick(['and', 'or'])]: times(rng, 1, 3, () => randomPredicate(rng, base, depth)) };
  return randomPredicate(rng, base, depth);
}

function randomPredicate(rng: Rng, base: PathBase, depth: number): Json {
  const families = ['string', 'string', 'integer', 'float', 'date', 'boolean', 'list', 'list'];
  if (depth < 2) families.push('summary', 'summary');
  const family = rng.pick(families);
  const pathFamily = family === 'integer' || family === 'float' ? 'number' : family;
  return { property: pathFor(rng, pathFamily, base), condition: randomCondition(rng, family, depth) };
}

function randomCondition(rng: Rng, family: string, depth: number): Json {
  switch (family) {
    case 'string': {
      const op = rng.pick(['equal_to', 'not_equal_to', 'contains', 'does_not_contain', 'is_empty', 'is_not_empty']);
      if (op === 'is_empty' || op === 'is_not_empty') return op;
      return { [op]: rng.chance(0.3) ? [rng.pick(STRINGS), rng.pick(STRINGS)] : rng.pick(STRINGS) };
    }
    case 'integer':
      return randomComparison(rng, () => rng.pick(INTEGERS));
    case 'float':
      return randomComparison(rng, () => rng.pick(FLOATS), 'float_');
    case 'date':
      return randomComparison(rng, () => rng.pick(DATES), 'date_');
    case 'boolean':
      return { boolean_equal_to: rng.pick([true, false, 'true', 'false']) };
    case 'list': {
      const op = rng.pick(['list_contains', 'list_does_not_contain', '_integer', '_float', '_date', 'list_is_empty', 'list_is_not_empty']);
      if (op === 'list_is_empty' || op === 'list_is_not_empty') return op;
      if (op === 'list_contains' || op === 'list_does_not_contain') return { [op]: rng.chance(0.3) ? [rng.pick(STRINGS), 'c'] : rng.pick(STRINGS) };
      const key = `${rng.pick(['list_contains', 'list_does_not_contain'])}${op}`;
      const operand = op === '_integer' ? rng.pick(INTEGERS) : op === '_float' ? rng.pick(FLOATS) : rng.pick(DATES);
      return { [key]: operand };
    }
    default:
      return randomSummary(rng, depth);
  }
}

/** A list summary (E17) over items; `count` takes an integer comparison, the aggregates a number comparison. */
function randomSummary(rng: Rng, depth: number): Json {
  const fn = rng.pick(['any', 'all', 'count', 'sum', 'product', 'max', 'min', 'mean']);
  let property: string;
  let condition: Json;
  if (fn === 'any' || fn === 'all') {
    const family = rng.pick(['string', 'integer', 'float', 'boolean', 'list']);
    property = pathFor(rng, family === 'integer' || family === 'float' ? 'number' : family, 'item');
    condition = randomCondition(rng, family, depth + 1);
  } else {
    property = pathFor(rng, 'number', 'item');
    condition = fn === 'count' ? randomComparison(rng, () => rng.int(0, 3)) : rng.chance(0.5) ? randomComparison(rng, () => rng.pick(INTEGERS)) : randomComparison(rng, () => rng.pick(FLOATS), 'float_');
  }
  const summary: Record<string, Json> = { property, condition, function: fn };
  if (rng.chance(0.4)) summary['where'] = randomWhere(rng, 'item', depth + 1);
  return summary;
}
