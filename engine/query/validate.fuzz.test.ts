// Fuzzing validateQuery with a fixed seed: random JSON and mutated valid queries never make it throw, and a rejected
// query always carries at least one problem whose path starts with the root (D18).

import { describe, expect, it } from 'vitest';
import { validateQuery } from './validate.js';
import { createRng } from '../../test/differential/random.js';

/** The shared seeded PRNG (mulberry32), so every run checks the same inputs. */
const random = (seed: number): (() => number) => createRng(seed).next;

const KEYS = [
  'and', 'or', 'event', 'frequency', 'during', 'where', 'property', 'condition', 'function', 'segment', 'provider', 'filters',
  'seconds', 'completion', 'times', 'engaged_time', 'engaged_completion', 'engaged_views', 'has_entered', 'has_not_exited',
  'in_third_party_segment', 'in_connections_import_segment', 'equal_to', 'not_equal_to', 'between', 'start', 'end',
  'greater_than', 'less_than_or_equal_to', 'float_between', 'date_greater_than', 'list_contains', 'list_contains_date',
  'list_contains_integer', 'boolean_equal_to', 'contains', 'the_last', 'value', 'unit', 'in_interval', 'before', 'after',
  'first', 'last', 'is_empty', '__proto__', 'constructor', 'toString', 'hasOwnProperty', 'prototype', '', 'x',
];
const STRINGS = [
  'this_session', 'current_view', 'is_empty', 'list_is_not_empty', 'days', 'months', 'any', 'count', 'sum', 'true',
  'properties.a', 'properties.a.b', 'properties.', 'a..b', '2026-11-20T12:00:00Z', '2026-11-20T12:00:00', 'Pageview',
  '__proto__', 'constructor', '', 'x'.repeat(200),
];
const NUMBERS = [0, -0, 1, -1, 1.5, 2 ** 53, -(2 ** 60), 1e308, 0.1, 7];

function pick<T>(next: () => number, items: readonly T[]): T {
  return items[Math.floor(next() * items.length)] as T;
}

function randomJson(next: () => number, depth: number): unknown {
  const roll = next();
  if (depth <= 0 || roll < 0.35) {
    const scalar = next();
    if (scalar < 0.15) return null;
    if (scalar < 0.3) return next() < 0.5;
    if (scalar < 0.6) return pick(next, NUMBERS);
    return pick(next, STRINGS);
  }
  if (roll < 0.55) return Array.from({ length: Math.floor(next() * 4) }, () => randomJson(next, depth - 1));
  const entries = Array.from({ length: Math.floor(next() * 4) }, () => [pick(next, KEYS), randomJson(next, depth - 1)] as const);
  return Object.fromEntries(entries); // own keys, "__proto__" included
}

const VALID: unknown[] = [
  { event: 'Pageview' },
  { event: 'A', frequency: { between: { start: 1, end: 3 } }, during: { the_last: { value: 2, unit: 'weeks' } }, where: { property: 'properties.url', condition: { contains: ['a', 'b'] } } },
  { or: [{ has_entered: { segment: 1, during: 'this_session' } }, { has_not_exited: { segment: 2, where: { property: 'properties.x', condition: 'is_empty' } } }] },
  {
    and: [
      { engaged_time: { seconds: { greater_than: 30 }, during: { in_interval: { start: '2026-01-01T00:00:00Z', end: '2026-02-01T00:00:00Z' } } } },
      { or: [{ engaged_completion: { completion: { between: { start: 0, end: 1 } } } }, { engaged_views: { times: { greater_than: 2 }, completion: { greater_than: 0.5 } } }] },
      { in_third_party_segment: { provider: 'p', segment: 's' } },
      { not_in_connections_import_segment: { provider: 'crm', filters: { or: [{ property: 'age', condition: { between: { start: 18, end: 30 } } }] }, during: { last: 3 } } },
    ],
  },
  {
    event: 'Ad',
    where: {
      and: [
        { property: 'properties.slots', condition: { property: 'price', condition: { float_greater_than: 1 }, function: 'sum', where: { property: 'kind', condition: { equal_to: 'ad' } } } },
        { property: 'properties.when', condition: { date_less_than: '2026-11-20T12:00:00+02:00' } },
        { property: 'properties.tags', condition: { list_does_not_contain_integer: 3 } },
        { property: 'properties.flag', condition: { boolean_equal_to: 'false' } },
      ],
    },
  },
];

type Json = unknown;

/** One random change somewhere in a deep copy: replace a value, drop or add or rename a key, wrap, or empty a list. */
function mutate(next: () => number, value: Json): Json {
  const copy = JSON.parse(JSON.stringify(value)) as Json;
  const containers: Array<Record<string, unknown> | unknown[]> = [];
  const collect = (node: unknown): void => {
    if (typeof node === 'object' && node !== null) {
      containers.push(node as Record<string, unknown> | unknown[]);
      for (const child of Object.values(node)) collect(child);
    }
  };
  collect(copy);
  const target = pick(next, containers);
  const keys = Object.keys(target);
  const key = keys.length > 0 ? pick(next, keys) : undefined;
  const action = Math.floor(next() * 6);
  const record = target as Record<string, unknown>;
  if (key === undefined || action === 0) Object.defineProperty(record, pick(next, KEYS), { value: randomJson(next, 2), enumerable: true, configurable: true, writable: true });
  else if (action === 1) record[key] = randomJson(next, 3);
  else if (action === 2 && !Array.isArray(target)) delete record[key];
  else if (action === 3) record[key] = [record[key]];
  else if (action === 4 && !Array.isArray(target)) {
    const moved = record[key];
    delete record[key];
    record[`${key}_`] = moved;
  } else if (Array.isArray(target)) target.length = 0;
  else record[key] = pick(next, [null, 0, '', {}, []]);
  return copy;
}

function checkResult(json: unknown, root: string): boolean {
  const result = validateQuery(json, root);
  if (result.ok) {
    expect(result.references).toEqual([...new Set(result.references)].sort((a, b) => a - b));
    return true;
  }
  expect(result.problems.length).toBeGreaterThan(0);
  for (const problem of result.problems) {
    expect(problem.path === root || problem.path.startsWith(`${root}.`) || problem.path.startsWith(`${root}[`)).toBe(true);
    expect(typeof problem.message).toBe('string');
  }
  return false;
}

describe('validateQuery under fuzzing (fixed seed)', () => {
  it('the seed corpus is valid', () => {
    for (const query of VALID) {
      const result = validateQuery(query);
      expect(result.ok ? [] : result.problems).toEqual([]);
    }
  });

  it('never throws on 5000 random JSON values, nor on them wrapped as clauses and conditions', () => {
    const next = random(0xa0d1e);
    for (let i = 0; i < 5000; i++) {
      const json = randomJson(next, 6);
      checkResult(json, 'query');
      checkResult({ and: [json] }, 'query');
      checkResult({ event: 'A', where: { property: 'properties.a', condition: json } }, 'query');
      checkResult({ event: 'A', during: json, frequency: json }, 'query');
    }
  });

  it('mutated valid queries are either valid or rejected with problems under the root', () => {
    const next = random(1234);
    let rejected = 0;
    const total = 5000;
    for (let i = 0; i < total; i++) {
      let json = pick(next, VALID);
      const rounds = 1 + Math.floor(next() * 3);
      for (let r = 0; r < rounds; r++) json = mutate(next, json);
      if (!checkResult(json, 'body.query')) rejected++;
    }
    // most mutations break something; some (e.g. removing an optional key) keep the query valid
    expect(rejected).toBeGreaterThan(total / 2);
    expect(rejected).toBeLessThan(total);
  });
});
