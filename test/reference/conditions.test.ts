// Self-tests of the reference evaluator's `where` conditions, straight from the spec's "where" and D34 / E15–E18.

import { describe, expect, it } from 'vitest';
import { holdsCondition, holdsWhere, readPath } from './conditions.js';
import { parseInstant } from './comparisons.js';

describe('reference where paths (E15)', () => {
  it('reads nested objects and treats anything else on the way as missing', () => {
    const root = { properties: { client: { url: 'x' }, list: [{ a: 1 }], text: 'abc' } };
    expect(readPath(root, 'properties.client.url')).toBe('x');
    expect(readPath(root, 'properties.client.nope')).toBeUndefined();
    expect(readPath(root, 'properties.text.length')).toBeUndefined();
    expect(readPath(root, 'properties.list.0')).toBeUndefined();
    expect(readPath(root, 'properties.constructor')).toBeUndefined();
  });
});

describe('reference conditions: absence rules (D34, E15)', () => {
  const absent = [undefined, null, 7, true, ['a'], { a: 1 }];
  it('a missing, null or wrong-typed value satisfies only the absence conditions of strings', () => {
    for (const value of absent) {
      expect(holdsCondition({ equal_to: 'a' }, value)).toBe(false);
      expect(holdsCondition({ contains: 'a' }, value)).toBe(false);
      expect(holdsCondition('is_not_empty', value)).toBe(false);
      expect(holdsCondition({ not_equal_to: 'a' }, value)).toBe(true);
      expect(holdsCondition({ does_not_contain: 'a' }, value)).toBe(true);
      expect(holdsCondition('is_empty', value)).toBe(true);
    }
  });
  it('numbers, dates and booleans fail on missing or wrong types except the not_equal_to forms', () => {
    for (const value of [undefined, null, '3', [3], Number.NaN]) {
      expect(holdsCondition({ greater_than: 0 }, value)).toBe(false);
      expect(holdsCondition({ float_less_than: 10 }, value)).toBe(false);
      expect(holdsCondition({ date_after: '2026-01-01T00:00:00Z' } as unknown, value)).toBe(false);
      expect(holdsCondition({ not_equal_to: 3 }, value)).toBe(true);
      expect(holdsCondition({ float_not_equal_to: 3 }, value)).toBe(true);
      expect(holdsCondition({ date_not_equal_to: '2026-01-01T00:00:00Z' }, value)).toBe(true);
      expect(holdsCondition({ boolean_equal_to: false }, value)).toBe(false);
    }
  });
  it('lists: absent or non-array values satisfy list_is_empty and every list_does_not_contain form', () => {
    for (const value of [undefined, null, 'a', 3]) {
      expect(holdsCondition('list_is_empty', value)).toBe(true);
      expect(holdsCondition('list_is_not_empty', value)).toBe(false);
      expect(holdsCondition({ list_contains: 'a' }, value)).toBe(false);
      expect(holdsCondition({ list_does_not_contain: 'a' }, value)).toBe(true);
      expect(holdsCondition({ list_does_not_contain_integer: 3 }, value)).toBe(true);
      expect(holdsCondition({ list_does_not_contain_date: '2026-01-01T00:00:00Z' }, value)).toBe(true);
    }
  });
});

describe('reference conditions: families (E16)', () => {
  it('integer and float comparisons are numeric; between is inclusive; lists mean any / none', () => {
    expect(holdsCondition({ between: { start: 1, end: 3 } }, 1)).toBe(true);
    expect(holdsCondition({ between: { start: 1, end: 3 } }, 3)).toBe(true);
    expect(holdsCondition({ between: { start: 1, end: 3 } }, 3.5)).toBe(false);
    expect(holdsCondition({ equal_to: [1, 2] }, 2)).toBe(true);
    expect(holdsCondition({ not_equal_to: [1, 2] }, 2)).toBe(false);
    expect(holdsCondition({ float_greater_than: 1.5 }, 2)).toBe(true);
    expect(holdsCondition({ greater_than_or_equal_to: 2 }, 2)).toBe(true);
    expect(holdsCondition({ less_than: 2 }, 2)).toBe(false);
  });
  it('strings are case-sensitive; contains is a substring test; is_empty holds for ""', () => {
    expect(holdsCondition({ equal_to: 'Abc' }, 'abc')).toBe(false);
    expect(holdsCondition({ equal_to: ['x', 'abc'] }, 'abc')).toBe(true);
    expect(holdsCondition({ contains: ['zz', 'bc'] }, 'abc')).toBe(true);
    expect(holdsCondition({ does_not_contain: ['zz', 'bc'] }, 'abc')).toBe(false);
    expect(holdsCondition('is_empty', '')).toBe(true);
    expect(holdsCondition('is_not_empty', '')).toBe(false);
  });
  it('dates compare instants, whatever the offset; unparsable strings fail', () => {
    expect(holdsCondition({ date_equal_to: '2026-01-01T00:00:00Z' }, '2026-01-01T02:00:00+02:00')).toBe(true);
    expect(holdsCondition({ date_between: { start: '2026-01-01T00:00:00Z', end: '2026-01-02T00:00:00Z' } }, '2026-01-02T00:00:00.000Z')).toBe(true);
    expect(holdsCondition({ date_before: '2026-01-01T00:00:00Z' }, 'yesterday')).toBe(false);
    expect(parseInstant('2026-02-30T00:00:00Z')).toBeUndefined();
    expect(parseInstant('2026-01-01T00:00:00')).toBeUndefined();
  });
  it('list conditions compare strings, numbers or instants of the items', () => {
    expect(holdsCondition({ list_contains: ['q', 'b'] }, ['a', 'b'])).toBe(true);
    expect(holdsCondition({ list_contains: 'b' }, [1, 'bb'])).toBe(false);
    expect(holdsCondition({ list_contains_integer: 2 }, ['2', 2])).toBe(true);
    expect(holdsCondition({ list_contains_float: 2.5 }, [2.5])).toBe(true);
    expect(holdsCondition({ list_contains_date: '2026-01-01T00:00:00Z' }, ['2026-01-01T01:00:00+01:00'])).toBe(true);
    expect(holdsCondition({ list_does_not_contain: 'a' }, ['a'])).toBe(false);
    expect(holdsCondition('list_is_empty', [])).toBe(true);
    expect(holdsCondition('list_is_not_empty', [null])).toBe(true);
  });
  it('boolean_equal_to needs a boolean', () => {
    expect(holdsCondition({ boolean_equal_to: true }, true)).toBe(true);
    expect(holdsCondition({ boolean_equal_to: true }, 'true')).toBe(false);
    expect(holdsCondition({ boolean_equal_to: 'false' }, false)).toBe(true); // "written as the text true or false"
    expect(holdsCondition({ boolean_equal_to: 'false' }, true)).toBe(false);
  });
});

describe('reference list summaries (E17, D34)', () => {
  const items = [{ key: 'a', v: 2, tag: 'x' }, { key: 'b', v: 3 }, { key: 'c', v: 'nope' }, 7, null, [1]];
  it('any / all look at the filtered object items; all is false on an empty filtered list', () => {
    expect(holdsCondition({ property: 'key', condition: { equal_to: 'b' }, function: 'any' }, items)).toBe(true);
    expect(holdsCondition({ property: 'key', condition: 'is_not_empty', function: 'all' }, items)).toBe(true);
    const nobody = { property: 'key', condition: 'is_empty', function: 'all', where: { property: 'key', condition: { equal_to: 'z' } } };
    expect(holdsCondition(nobody, items)).toBe(false);
    expect(holdsCondition({ ...nobody, function: 'any' }, items)).toBe(false);
  });
  it('count counts filtered objects; sum/product/max/min/mean skip non-numbers and fail on none', () => {
    expect(holdsCondition({ property: 'key', condition: { equal_to: 3 }, function: 'count' }, items)).toBe(true);
    expect(holdsCondition({ property: 'v', condition: { equal_to: 5 }, function: 'sum' }, items)).toBe(true);
    expect(holdsCondition({ property: 'v', condition: { equal_to: 6 }, function: 'product' }, items)).toBe(true);
    expect(holdsCondition({ property: 'v', condition: { equal_to: 3 }, function: 'max' }, items)).toBe(true);
    expect(holdsCondition({ property: 'v', condition: { equal_to: 2 }, function: 'min' }, items)).toBe(true);
    expect(holdsCondition({ property: 'v', condition: { float_equal_to: 2.5 }, function: 'mean' }, items)).toBe(true);
    expect(holdsCondition({ property: 'tag', condition: { greater_than_or_equal_to: 0 }, function: 'sum' }, items)).toBe(false);
    const filtered = { property: 'v', condition: { equal_to: 2 }, function: 'sum', where: { property: 'tag', condition: { equal_to: 'x' } } };
    expect(holdsCondition(filtered, items)).toBe(true);
  });
  it('a value that is not an array fails every function', () => {
    for (const fn of ['any', 'all', 'count', 'sum']) {
      expect(holdsCondition({ property: 'v', condition: { greater_than_or_equal_to: 0 }, function: fn }, 'abc')).toBe(false);
    }
  });
});

describe('reference compound where (E18)', () => {
  it('and needs every predicate, or needs one', () => {
    const root = { properties: { a: 1, b: 'x' } };
    const p1 = { property: 'properties.a', condition: { equal_to: 1 } };
    const p2 = { property: 'properties.b', condition: { equal_to: 'y' } };
    expect(holdsWhere({ and: [p1, p2] }, root)).toBe(false);
    expect(holdsWhere({ or: [p1, p2] }, root)).toBe(true);
  });
});
