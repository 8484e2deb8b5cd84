import { describe, expect, it } from 'vitest';
import { validateQuery } from '../validate.js';
import { clauseOf, pathsOf, problemsOf } from '../../../test/support/validate-harness.js';

/** An expression whose frequency is `comparison`: problems land under `query.frequency`. */
const withFrequency = (comparison: unknown) => ({ event: 'A', frequency: comparison });
const frequencyOf = (comparison: unknown) => {
  const clause = clauseOf(withFrequency(comparison));
  return clause.kind === 'expression' ? clause.frequency : undefined;
};

describe('number comparisons (spec "Number comparison")', () => {
  it('reads the four one-number operators', () => {
    for (const op of ['greater_than', 'less_than', 'greater_than_or_equal_to', 'less_than_or_equal_to'] as const) {
      expect(frequencyOf({ [op]: 3 })).toEqual({ op, value: 3 });
    }
  });

  it('equal_to / not_equal_to take a number or a non-empty list of numbers', () => {
    expect(frequencyOf({ equal_to: 0 })).toEqual({ op: 'equal_to', values: [0] });
    expect(frequencyOf({ equal_to: [1, 2.5, -3] })).toEqual({ op: 'equal_to', values: [1, 2.5, -3] });
    expect(frequencyOf({ not_equal_to: 4 })).toEqual({ op: 'not_equal_to', values: [4] });
    expect(frequencyOf({ not_equal_to: [4, 5] })).toEqual({ op: 'not_equal_to', values: [4, 5] });
  });

  it('rejects an empty list and non-numbers in a list, at the item', () => {
    expect(pathsOf(withFrequency({ equal_to: [] }))).toEqual(['query.frequency.equal_to']);
    expect(pathsOf(withFrequency({ not_equal_to: [1, '2', null] }))).toEqual(['query.frequency.not_equal_to[1]', 'query.frequency.not_equal_to[2]']);
  });

  it('between takes {start, end}, inclusive, start <= end', () => {
    expect(frequencyOf({ between: { start: 1, end: 5 } })).toEqual({ op: 'between', start: 1, end: 5 });
    expect(frequencyOf({ between: { start: 2, end: 2 } })).toEqual({ op: 'between', start: 2, end: 2 });
    expect(pathsOf(withFrequency({ between: { start: 5, end: 1 } }))).toEqual(['query.frequency.between']);
  });

  it('between: missing, unknown and non-number parts', () => {
    expect(problemsOf(withFrequency({ between: { start: 1 } }))).toEqual([{ path: 'query.frequency.between', message: 'missing key "end"' }]);
    expect(problemsOf(withFrequency({ between: { start: 1, end: 2, step: 1 } }))).toEqual([{ path: 'query.frequency.between', message: 'unknown key "step"' }]);
    expect(pathsOf(withFrequency({ between: { start: '1', end: 2 } }))).toEqual(['query.frequency.between.start']);
    expect(pathsOf(withFrequency({ between: [1, 2] }))).toEqual(['query.frequency.between']);
  });

  it('values must be numbers: not strings, booleans, null, objects', () => {
    for (const value of ['3', true, null, {}, [[1]]]) {
      expect(pathsOf(withFrequency({ greater_than: value })).length).toBeGreaterThan(0);
    }
    expect(pathsOf(withFrequency({ greater_than: '3' }))).toEqual(['query.frequency.greater_than']);
  });

  it('values must be finite (inputs built in code may hold NaN or infinities)', () => {
    expect(pathsOf(withFrequency({ greater_than: Number.NaN }))).toEqual(['query.frequency.greater_than']);
    expect(pathsOf(withFrequency({ less_than: Number.POSITIVE_INFINITY }))).toEqual(['query.frequency.less_than']);
    expect(pathsOf(withFrequency({ equal_to: [1, Number.NEGATIVE_INFINITY] }))).toEqual(['query.frequency.equal_to[1]']);
  });

  it('exactly one key: none or several is a problem at the comparison', () => {
    expect(pathsOf(withFrequency({}))).toEqual(['query.frequency']);
    expect(pathsOf(withFrequency({ greater_than: 1, less_than: 5 }))).toEqual(['query.frequency']);
  });

  it('an unknown key is reported by name, at the comparison (D18)', () => {
    expect(problemsOf(withFrequency({ at_least: 1 }))).toEqual([{ path: 'query.frequency', message: 'unknown key "at_least"' }]);
    expect(problemsOf(withFrequency({ greater_than: 1, gt: 1 }))).toEqual([{ path: 'query.frequency', message: 'unknown key "gt"' }]);
    // a prefixed key is not a frequency operator
    expect(pathsOf(withFrequency({ float_greater_than: 1 }))).toEqual(['query.frequency']);
  });

  it('a comparison that is not an object is a problem', () => {
    expect(pathsOf(withFrequency(3))).toEqual(['query.frequency']);
    expect(pathsOf(withFrequency([{ equal_to: 1 }]))).toEqual(['query.frequency']);
    expect(validateQuery(withFrequency(null)).ok).toBe(false);
  });
});
