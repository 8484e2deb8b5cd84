// Conditions per family (D34, E15–E17): typed comparisons, and missing / null / wrong-type values satisfying only
// the absence conditions.

import { describe, expect, it } from 'vitest';
import type { Condition, Where } from '../../query/ast.js';
import { compileCondition, compileWhere } from './index.js';

const int = (comparison: Extract<Condition, { family: 'integer' }>['comparison']): Condition => ({ family: 'integer', comparison });
const test = (condition: Condition, value: unknown) => compileCondition(condition)(value);
const ABSENT = [undefined, null];

describe('number conditions (E16)', () => {
  it('compare finite numbers; between is inclusive; equal_to any, not_equal_to none', () => {
    expect(test(int({ op: 'between', start: 1, end: 3 }), 1)).toBe(true);
    expect(test(int({ op: 'between', start: 1, end: 3 }), 3)).toBe(true);
    expect(test(int({ op: 'between', start: 1, end: 3 }), 3.5)).toBe(false);
    expect(test(int({ op: 'equal_to', values: [1, 2] }), 2)).toBe(true);
    expect(test(int({ op: 'not_equal_to', values: [1, 2] }), 2)).toBe(false);
    expect(test({ family: 'float', comparison: { op: 'greater_than', value: 0.5 } }, 0.75)).toBe(true);
  });

  it('E15: missing, null, wrong type or non-finite satisfy only not_equal_to', () => {
    for (const value of [...ABSENT, '5', Number.NaN, Number.POSITIVE_INFINITY, [5], { a: 5 }]) {
      expect(test(int({ op: 'not_equal_to', values: [5] }), value)).toBe(true);
      expect(test(int({ op: 'equal_to', values: [5] }), value)).toBe(false);
      expect(test(int({ op: 'less_than', value: 100 }), value)).toBe(false);
      expect(test({ family: 'float', comparison: { op: 'not_equal_to', values: [5] } }, value)).toBe(true);
    }
  });
});

describe('date conditions (E16)', () => {
  const at = Date.UTC(2026, 0, 1, 12);
  it('compare instants of ISO 8601 strings with an offset', () => {
    expect(test({ family: 'date', comparison: { op: 'equal_to', values: [at] } }, '2026-01-01T13:00:00+01:00')).toBe(true);
    expect(test({ family: 'date', comparison: { op: 'greater_than', value: at } }, '2026-01-01T12:00:00.001Z')).toBe(true);
  });
  it('E15: non-strings and unparseable strings satisfy only date_not_equal_to', () => {
    for (const value of [...ABSENT, at, '2026-01-01', 'yesterday']) {
      expect(test({ family: 'date', comparison: { op: 'not_equal_to', values: [at] } }, value)).toBe(true);
      expect(test({ family: 'date', comparison: { op: 'less_than', value: at + 1 } }, value)).toBe(false);
    }
  });
});

describe('string conditions (E16)', () => {
  const s = (op: 'equal_to' | 'not_equal_to' | 'contains' | 'does_not_contain', ...values: string[]): Condition => ({ family: 'string', op, values });
  it('case-sensitive equality and substring tests over listed values', () => {
    expect(test(s('equal_to', 'a', 'b'), 'b')).toBe(true);
    expect(test(s('equal_to', 'a'), 'A')).toBe(false);
    expect(test(s('contains', 'xx', 'ell'), 'hello')).toBe(true);
    expect(test(s('does_not_contain', 'xx', 'ell'), 'hello')).toBe(false);
    expect(test(s('not_equal_to', 'a', 'b'), 'c')).toBe(true);
  });
  it('is_empty holds for "" and absent; is_not_empty for a non-empty string', () => {
    expect(test({ family: 'string', op: 'is_empty' }, '')).toBe(true);
    expect(test({ family: 'string', op: 'is_empty' }, 'x')).toBe(false);
    expect(test({ family: 'string', op: 'is_not_empty' }, 'x')).toBe(true);
    expect(test({ family: 'string', op: 'is_not_empty' }, '')).toBe(false);
  });
  it('E15: absent or wrong-type values satisfy is_empty, not_equal_to, does_not_contain only', () => {
    for (const value of [...ABSENT, 5, true, ['a']]) {
      expect(test({ family: 'string', op: 'is_empty' }, value)).toBe(true);
      expect(test({ family: 'string', op: 'is_not_empty' }, value)).toBe(false);
      expect(test(s('not_equal_to', 'a'), value)).toBe(true);
      expect(test(s('does_not_contain', 'a'), value)).toBe(true);
      expect(test(s('equal_to', 'a'), value)).toBe(false);
      expect(test(s('contains', 'a'), value)).toBe(false);
    }
  });
});

describe('list conditions (E16)', () => {
  it('compare items by type', () => {
    expect(test({ family: 'list', op: 'list_contains', values: ['x', 'y'] }, ['a', 'y'])).toBe(true);
    expect(test({ family: 'list', op: 'list_contains', values: ['1'] }, [1])).toBe(false);
    expect(test({ family: 'list', op: 'list_contains_integer', value: 1 }, ['1', 1])).toBe(true);
    expect(test({ family: 'list', op: 'list_contains_float', value: 1.5 }, [1.5])).toBe(true);
    expect(test({ family: 'list', op: 'list_contains_date', value: Date.UTC(2026, 0, 1) }, ['2026-01-01T00:00:00Z'])).toBe(true);
    expect(test({ family: 'list', op: 'list_does_not_contain', values: ['x'] }, ['x'])).toBe(false);
    expect(test({ family: 'list', op: 'list_is_empty' }, [])).toBe(true);
    expect(test({ family: 'list', op: 'list_is_not_empty' }, [0])).toBe(true);
  });
  it('E15: a non-array satisfies list_is_empty and the does_not_contain forms only', () => {
    for (const value of [...ABSENT, 'x', 1, { a: 1 }]) {
      expect(test({ family: 'list', op: 'list_is_empty' }, value)).toBe(true);
      expect(test({ family: 'list', op: 'list_is_not_empty' }, value)).toBe(false);
      expect(test({ family: 'list', op: 'list_does_not_contain', values: ['x'] }, value)).toBe(true);
      expect(test({ family: 'list', op: 'list_does_not_contain_integer', value: 1 }, value)).toBe(true);
      expect(test({ family: 'list', op: 'list_does_not_contain_date', value: 0 }, value)).toBe(true);
      expect(test({ family: 'list', op: 'list_contains', values: ['x'] }, value)).toBe(false);
      expect(test({ family: 'list', op: 'list_contains_float', value: 1 }, value)).toBe(false);
    }
  });
});

describe('boolean conditions (E16)', () => {
  it('need a boolean', () => {
    expect(test({ family: 'boolean', value: true }, true)).toBe(true);
    expect(test({ family: 'boolean', value: false }, false)).toBe(true);
    expect(test({ family: 'boolean', value: false }, undefined)).toBe(false);
    expect(test({ family: 'boolean', value: true }, 'true')).toBe(false);
  });
});

describe('list summaries (E17)', () => {
  const items = [{ key: 'a', n: 2 }, { key: 'b', n: 3 }, { key: 'a', n: 'x' }, 7, null];
  const onlyA: Where = { kind: 'predicate', property: 'key', path: ['key'], condition: { family: 'string', op: 'equal_to', values: ['a'] } };
  const summary = (fn: Extract<Condition, { family: 'list_summary' }>['function'], condition: Condition, where?: Where): Condition => ({
    family: 'list_summary',
    property: 'n',
    path: ['n'],
    condition,
    function: fn,
    ...(where && { where }),
  });
  it('any / all over filtered object items; all is false on an empty filtered list', () => {
    expect(test(summary('any', int({ op: 'equal_to', values: [3] })), items)).toBe(true);
    expect(test(summary('any', int({ op: 'equal_to', values: [3] }), onlyA), items)).toBe(false);
    expect(test(summary('all', int({ op: 'greater_than', value: 1 })), items)).toBe(false);
    expect(test(summary('all', int({ op: 'greater_than', value: 1 })), [{ n: 2 }, { n: 3 }])).toBe(true);
    expect(test(summary('all', int({ op: 'greater_than', value: 1 })), [])).toBe(false);
    expect(test(summary('any', { family: 'string', op: 'is_empty' }), [{ m: 1 }])).toBe(true);
  });
  it('count counts filtered items; aggregates skip non-numbers and fail on none', () => {
    expect(test(summary('count', int({ op: 'equal_to', values: [2] }), onlyA), items)).toBe(true);
    expect(test(summary('count', int({ op: 'equal_to', values: [0] })), [])).toBe(true);
    expect(test(summary('sum', int({ op: 'equal_to', values: [5] })), items)).toBe(true);
    expect(test(summary('product', int({ op: 'equal_to', values: [6] })), items)).toBe(true);
    expect(test(summary('max', int({ op: 'equal_to', values: [3] })), items)).toBe(true);
    expect(test(summary('min', int({ op: 'equal_to', values: [2] })), items)).toBe(true);
    expect(test(summary('mean', { family: 'float', comparison: { op: 'equal_to', values: [2.5] } }), items)).toBe(true);
    expect(test(summary('sum', int({ op: 'equal_to', values: [0] })), [{ n: 'x' }])).toBe(false);
    expect(test(summary('sum', int({ op: 'not_equal_to', values: [0] })), [{ n: 'x' }])).toBe(false);
  });
  it('a non-array fails every function', () => {
    for (const fn of ['any', 'all', 'count', 'sum', 'mean'] as const) {
      expect(test(summary(fn, int({ op: 'not_equal_to', values: [99] })), { n: 1 })).toBe(false);
      expect(test(summary(fn, int({ op: 'not_equal_to', values: [99] })), undefined)).toBe(false);
    }
  });
});

describe('where (E15, E18)', () => {
  const p = (path: string[], condition: Condition) => ({ kind: 'predicate' as const, property: `properties.${path.join('.')}`, path, condition });
  const yes = p(['a', 'b'], { family: 'boolean', value: true });
  it('reads nested own properties only', () => {
    expect(compileWhere(yes)({ a: { b: true } })).toBe(true);
    expect(compileWhere(yes)({ a: [true] })).toBe(false);
    const proto = p(['constructor'], { family: 'string', op: 'is_empty' });
    expect(compileWhere(proto)({})).toBe(true);
  });
  it('and / or combine one level', () => {
    const no = p(['c'], { family: 'boolean', value: true });
    expect(compileWhere({ kind: 'and', items: [yes, no] })({ a: { b: true }, c: true })).toBe(true);
    expect(compileWhere({ kind: 'and', items: [yes, no] })({ a: { b: true } })).toBe(false);
    expect(compileWhere({ kind: 'or', items: [yes, no] })({ c: true })).toBe(true);
  });
});
