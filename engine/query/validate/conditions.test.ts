import { describe, expect, it } from 'vitest';
import { conditionOf, conditionPaths, problemsOf, withCondition } from '../../../test/support/validate-harness.js';

const AT = 'query.where.condition';
const T = '2026-11-20T12:00:00Z';
const T_MS = Date.UTC(2026, 10, 20, 12);

describe('conditions: bare strings (D34)', () => {
  it('is_empty / is_not_empty are string conditions', () => {
    expect(conditionOf('is_empty')).toEqual({ family: 'string', op: 'is_empty' });
    expect(conditionOf('is_not_empty')).toEqual({ family: 'string', op: 'is_not_empty' });
  });

  it('list_is_empty / list_is_not_empty are list conditions', () => {
    expect(conditionOf('list_is_empty')).toEqual({ family: 'list', op: 'list_is_empty' });
    expect(conditionOf('list_is_not_empty')).toEqual({ family: 'list', op: 'list_is_not_empty' });
  });

  it('any other bare string is an unknown condition', () => {
    expect(problemsOf(withCondition('is_blank'))).toEqual([{ path: AT, message: 'unknown condition "is_blank"' }]);
    expect(conditionPaths('')).toEqual([AT]);
    expect(conditionPaths('equal_to')).toEqual([AT]);
  });

  it('bare-string conditions written as keys are problems', () => {
    for (const key of ['is_empty', 'is_not_empty', 'list_is_empty', 'list_is_not_empty']) {
      expect(conditionPaths({ [key]: true }), key).toEqual([AT]);
    }
  });

  it('a condition that is neither string nor object is a problem', () => {
    for (const value of [null, 3, true, ['is_empty']]) expect(conditionPaths(value)).toEqual([AT]);
  });
});

describe('conditions: one-key objects', () => {
  it('exactly one key: none or several is a problem; unknown keys are named', () => {
    expect(conditionPaths({})).toEqual([AT]);
    expect(conditionPaths({ equal_to: 'a', contains: 'b' })).toEqual([AT]);
    expect(conditionPaths({ float_greater_than: 1, float_less_than: 2 })).toEqual([AT]);
    expect(problemsOf(withCondition({ contain: 'x' }))).toEqual([{ path: AT, message: 'unknown key "contain"' }]);
    expect(problemsOf(withCondition({ float_gt: 1 }))).toEqual([{ path: AT, message: 'unknown key "float_gt"' }]);
    expect(problemsOf(withCondition({ date_after: T }))).toEqual([{ path: AT, message: 'unknown key "date_after"' }]);
    expect(problemsOf(withCondition({ list_has: 'x' }))).toEqual([{ path: AT, message: 'unknown key "list_has"' }]);
  });
});

describe('integer conditions (unprefixed number comparisons, integers only)', () => {
  it('reads every operator', () => {
    expect(conditionOf({ greater_than: 3 })).toEqual({ family: 'integer', comparison: { op: 'greater_than', value: 3 } });
    expect(conditionOf({ less_than_or_equal_to: -2 })).toEqual({ family: 'integer', comparison: { op: 'less_than_or_equal_to', value: -2 } });
    expect(conditionOf({ between: { start: 1, end: 9 } })).toEqual({ family: 'integer', comparison: { op: 'between', start: 1, end: 9 } });
    expect(conditionOf({ equal_to: 4 })).toEqual({ family: 'integer', comparison: { op: 'equal_to', values: [4] } });
    expect(conditionOf({ not_equal_to: [4, 5] })).toEqual({ family: 'integer', comparison: { op: 'not_equal_to', values: [4, 5] } });
  });

  it('non-integers are problems at the value', () => {
    expect(conditionPaths({ greater_than: 1.5 })).toEqual([`${AT}.greater_than`]);
    expect(conditionPaths({ equal_to: [1, 2.5] })).toEqual([`${AT}.equal_to[1]`]);
    expect(conditionPaths({ between: { start: 0.5, end: 2 } })).toEqual([`${AT}.between.start`]);
    expect(conditionPaths({ less_than: true })).toEqual([`${AT}.less_than`]);
  });

  it('between start > end is a problem', () => {
    expect(conditionPaths({ between: { start: 3, end: 1 } })).toEqual([`${AT}.between`]);
  });
});

describe('string conditions', () => {
  it('equal_to / not_equal_to with a string or string list are string conditions', () => {
    expect(conditionOf({ equal_to: 'news' })).toEqual({ family: 'string', op: 'equal_to', values: ['news'] });
    expect(conditionOf({ not_equal_to: ['a', 'b'] })).toEqual({ family: 'string', op: 'not_equal_to', values: ['a', 'b'] });
    expect(conditionOf({ equal_to: '' })).toEqual({ family: 'string', op: 'equal_to', values: [''] });
  });

  it('contains / does_not_contain take a string or a non-empty list of strings', () => {
    expect(conditionOf({ contains: 'sport' })).toEqual({ family: 'string', op: 'contains', values: ['sport'] });
    expect(conditionOf({ does_not_contain: ['a', 'b'] })).toEqual({ family: 'string', op: 'does_not_contain', values: ['a', 'b'] });
    expect(conditionPaths({ contains: [] })).toEqual([`${AT}.contains`]);
    expect(conditionPaths({ contains: 3 })).toEqual([`${AT}.contains`]);
    expect(conditionPaths({ does_not_contain: ['a', 1] })).toEqual([`${AT}.does_not_contain[1]`]);
  });

  it('a mixed list in equal_to is a problem at the odd item', () => {
    expect(conditionPaths({ equal_to: ['a', 1] })).toEqual([`${AT}.equal_to[1]`]);
    expect(conditionPaths({ not_equal_to: [1, 'a'] })).toEqual([`${AT}.not_equal_to[1]`]);
  });

  it('equal_to with an empty list, or a value of another type, is a problem', () => {
    expect(conditionPaths({ equal_to: [] })).toEqual([`${AT}.equal_to`]);
    expect(conditionPaths({ equal_to: true })).toEqual([`${AT}.equal_to`]);
    expect(conditionPaths({ equal_to: [null] })).toEqual([`${AT}.equal_to[0]`]);
  });
});

describe('float conditions (float_ prefix)', () => {
  it('reads every operator with floating-point values', () => {
    expect(conditionOf({ float_between: { start: 0.5, end: 1.5 } })).toEqual({ family: 'float', comparison: { op: 'between', start: 0.5, end: 1.5 } });
    expect(conditionOf({ float_equal_to: [0.1, 2] })).toEqual({ family: 'float', comparison: { op: 'equal_to', values: [0.1, 2] } });
    expect(conditionOf({ float_not_equal_to: 0.5 })).toEqual({ family: 'float', comparison: { op: 'not_equal_to', values: [0.5] } });
    for (const op of ['greater_than', 'less_than', 'greater_than_or_equal_to', 'less_than_or_equal_to']) {
      expect(conditionOf({ [`float_${op}`]: 2.25 })).toEqual({ family: 'float', comparison: { op, value: 2.25 } });
    }
  });

  it('non-numbers are problems', () => {
    expect(conditionPaths({ float_greater_than: '1.5' })).toEqual([`${AT}.float_greater_than`]);
    expect(conditionPaths({ float_equal_to: [] })).toEqual([`${AT}.float_equal_to`]);
    expect(conditionPaths({ float_between: { start: 2.5, end: 1.5 } })).toEqual([`${AT}.float_between`]);
  });
});

describe('date conditions (date_ prefix, timestamps to epoch ms, D3)', () => {
  it('reads every operator', () => {
    expect(conditionOf({ date_greater_than: T })).toEqual({ family: 'date', comparison: { op: 'greater_than', value: T_MS } });
    expect(conditionOf({ date_equal_to: [T, '2026-11-20T13:00:00+01:00'] })).toEqual({ family: 'date', comparison: { op: 'equal_to', values: [T_MS, T_MS] } });
    expect(conditionOf({ date_between: { start: T, end: '2026-11-21T00:00:00Z' } })).toEqual({
      family: 'date',
      comparison: { op: 'between', start: T_MS, end: Date.UTC(2026, 10, 21) },
    });
    for (const op of ['not_equal_to', 'less_than', 'greater_than_or_equal_to', 'less_than_or_equal_to']) {
      expect(conditionOf({ [`date_${op}`]: T }).family).toBe('date');
    }
  });

  it('non-timestamps and a reversed date_between are problems', () => {
    expect(conditionPaths({ date_less_than: T_MS })).toEqual([`${AT}.date_less_than`]);
    expect(conditionPaths({ date_less_than: '2026-11-20T12:00:00' })).toEqual([`${AT}.date_less_than`]);
    expect(conditionPaths({ date_equal_to: [T, 'yesterday'] })).toEqual([`${AT}.date_equal_to[1]`]);
    expect(conditionPaths({ date_between: { start: '2026-11-21T00:00:00Z', end: T } })).toEqual([`${AT}.date_between`]);
  });
});

describe('list conditions (list_ prefix)', () => {
  it('list_contains / list_does_not_contain take a string or a non-empty list of strings', () => {
    expect(conditionOf({ list_contains: 'a' })).toEqual({ family: 'list', op: 'list_contains', values: ['a'] });
    expect(conditionOf({ list_does_not_contain: ['a', 'b'] })).toEqual({ family: 'list', op: 'list_does_not_contain', values: ['a', 'b'] });
    expect(conditionPaths({ list_contains: [] })).toEqual([`${AT}.list_contains`]);
    expect(conditionPaths({ list_contains: [1] })).toEqual([`${AT}.list_contains[0]`]);
  });

  it('_date takes a timestamp, _float a number, _integer an integer', () => {
    expect(conditionOf({ list_contains_date: T })).toEqual({ family: 'list', op: 'list_contains_date', value: T_MS });
    expect(conditionOf({ list_does_not_contain_date: T })).toEqual({ family: 'list', op: 'list_does_not_contain_date', value: T_MS });
    expect(conditionOf({ list_contains_float: 1.5 })).toEqual({ family: 'list', op: 'list_contains_float', value: 1.5 });
    expect(conditionOf({ list_does_not_contain_float: 2 })).toEqual({ family: 'list', op: 'list_does_not_contain_float', value: 2 });
    expect(conditionOf({ list_contains_integer: 7 })).toEqual({ family: 'list', op: 'list_contains_integer', value: 7 });
    expect(conditionOf({ list_does_not_contain_integer: -7 })).toEqual({ family: 'list', op: 'list_does_not_contain_integer', value: -7 });
  });

  it('wrong operand types are problems', () => {
    expect(conditionPaths({ list_contains_date: 'soon' })).toEqual([`${AT}.list_contains_date`]);
    expect(conditionPaths({ list_contains_float: '1.5' })).toEqual([`${AT}.list_contains_float`]);
    expect(conditionPaths({ list_contains_integer: 1.5 })).toEqual([`${AT}.list_contains_integer`]);
    expect(conditionPaths({ list_contains_integer: [1, 2] })).toEqual([`${AT}.list_contains_integer`]);
  });
});

describe('boolean conditions', () => {
  it('boolean_equal_to takes true / false or the text "true" / "false"', () => {
    expect(conditionOf({ boolean_equal_to: true })).toEqual({ family: 'boolean', value: true });
    expect(conditionOf({ boolean_equal_to: false })).toEqual({ family: 'boolean', value: false });
    expect(conditionOf({ boolean_equal_to: 'true' })).toEqual({ family: 'boolean', value: true });
    expect(conditionOf({ boolean_equal_to: 'false' })).toEqual({ family: 'boolean', value: false });
  });

  it('anything else is a problem', () => {
    for (const value of ['True', 'yes', 1, 0, null, [true]]) {
      expect(conditionPaths({ boolean_equal_to: value })).toEqual([`${AT}.boolean_equal_to`]);
    }
  });
});
