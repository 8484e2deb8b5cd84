import { describe, expect, it } from 'vitest';
import { conditionOf, conditionPaths, problemsOf, withCondition } from '../../../test/support/validate-harness.js';
import { MAX_SUMMARY_DEPTH } from './summary.js';

const AT = 'query.where.condition';
const gt = (value: number) => ({ greater_than: value });

describe('list summary conditions (D34, E17)', () => {
  it('reads {property, condition, function}; property is relative and split on dots', () => {
    expect(conditionOf({ property: 'targeting.key', condition: { equal_to: 'sport' }, function: 'any' })).toEqual({
      family: 'list_summary',
      property: 'targeting.key',
      path: ['targeting', 'key'],
      condition: { family: 'string', op: 'equal_to', values: ['sport'] },
      function: 'any',
    });
  });

  it('keeps a nested where with relative paths (no prefix)', () => {
    expect(
      conditionOf({
        property: 'price',
        condition: { float_greater_than: 1.5 },
        function: 'sum',
        where: { and: [{ property: 'kind', condition: { equal_to: 'ad' } }, { property: 'meta.visible', condition: { boolean_equal_to: true } }] },
      }),
    ).toEqual({
      family: 'list_summary',
      property: 'price',
      path: ['price'],
      condition: { family: 'float', comparison: { op: 'greater_than', value: 1.5 } },
      function: 'sum',
      where: {
        kind: 'and',
        items: [
          { kind: 'predicate', property: 'kind', path: ['kind'], condition: { family: 'string', op: 'equal_to', values: ['ad'] } },
          { kind: 'predicate', property: 'meta.visible', path: ['meta', 'visible'], condition: { family: 'boolean', value: true } },
        ],
      },
    });
  });

  it('any / all accept every non-summary family', () => {
    const conditions = ['is_empty', 'list_is_not_empty', gt(1), { float_less_than: 0.5 }, { date_greater_than: '2026-01-01T00:00:00Z' }, { boolean_equal_to: 'true' }, { list_contains: 'x' }];
    for (const fn of ['any', 'all']) {
      for (const condition of conditions) expect(conditionPaths({ property: 'k', condition, function: fn })).toEqual([]);
    }
  });

  it('count needs an integer comparison', () => {
    expect(conditionOf({ property: 'k', condition: { equal_to: 2 }, function: 'count' })).toMatchObject({ function: 'count', condition: { family: 'integer' } });
    expect(conditionPaths({ property: 'k', condition: { float_greater_than: 1 }, function: 'count' })).toEqual([`${AT}.condition`]);
    expect(conditionPaths({ property: 'k', condition: { equal_to: 'a' }, function: 'count' })).toEqual([`${AT}.condition`]);
    expect(conditionPaths({ property: 'k', condition: { greater_than: 1.5 }, function: 'count' })).toEqual([`${AT}.condition.greater_than`]);
  });

  it('sum, product, max, min, mean need an integer or float comparison (D18: numeric functions on numeric comparisons)', () => {
    for (const fn of ['sum', 'product', 'max', 'min', 'mean']) {
      expect(conditionPaths({ property: 'k', condition: gt(1), function: fn })).toEqual([]);
      expect(conditionPaths({ property: 'k', condition: { float_between: { start: 0, end: 1 } }, function: fn })).toEqual([]);
      expect(conditionPaths({ property: 'k', condition: { contains: 'a' }, function: fn }), fn).toEqual([`${AT}.condition`]);
      expect(conditionPaths({ property: 'k', condition: 'list_is_empty', function: fn }), fn).toEqual([`${AT}.condition`]);
      expect(conditionPaths({ property: 'k', condition: { date_less_than: '2026-01-01T00:00:00Z' }, function: fn }), fn).toEqual([`${AT}.condition`]);
    }
  });

  it('function must be one of the eight', () => {
    expect(conditionPaths({ property: 'k', condition: gt(1), function: 'average' })).toEqual([`${AT}.function`]);
    expect(conditionPaths({ property: 'k', condition: gt(1), function: 'toString' })).toEqual([`${AT}.function`]);
    expect(conditionPaths({ property: 'k', condition: gt(1), function: 3 })).toEqual([`${AT}.function`]);
  });

  it('property, condition and function are required; other keys are unknown', () => {
    expect(problemsOf(withCondition({ property: 'k', condition: gt(1) }))).toEqual([{ path: AT, message: 'missing key "function"' }]);
    expect(problemsOf(withCondition({ function: 'count' }))).toEqual([
      { path: AT, message: 'missing key "property"' },
      { path: AT, message: 'missing key "condition"' },
    ]);
    expect(problemsOf(withCondition({ property: 'k', condition: gt(1), function: 'count', during: 'this_session' }))).toEqual([
      { path: AT, message: 'unknown key "during"' },
    ]);
  });

  it('property is a relative dot-separated name', () => {
    expect(conditionOf({ property: 'properties.x', condition: gt(1), function: 'count' })).toMatchObject({ path: ['properties', 'x'] });
    expect(conditionPaths({ property: '', condition: gt(1), function: 'count' })).toEqual([`${AT}.property`]);
    expect(conditionPaths({ property: 'a..b', condition: gt(1), function: 'count' })).toEqual([`${AT}.property`]);
  });

  it('the condition of a list summary cannot be a list summary', () => {
    const inner = { property: 'k', condition: gt(1), function: 'count' };
    expect(conditionPaths({ property: 'items', condition: inner, function: 'any' })).toEqual([`${AT}.condition`]);
  });

  it('the nested where follows the one-level compound rule (E18), with relative paths', () => {
    const item = { property: 'kind', condition: 'is_empty' };
    expect(conditionPaths({ property: 'k', condition: gt(1), function: 'count', where: { or: [{ and: [item] }] } })).toEqual([`${AT}.where.or[0]`]);
    expect(conditionPaths({ property: 'k', condition: gt(1), function: 'count', where: { and: [] } })).toEqual([`${AT}.where.and`]);
    expect(conditionPaths({ property: 'k', condition: gt(1), function: 'count', where: { property: 'kind', condition: { contain: 'x' } } })).toEqual([
      `${AT}.where.condition`,
    ]);
  });

  it(`the nested where may hold list summaries, at most ${MAX_SUMMARY_DEPTH} deep`, () => {
    const nest = (levels: number): unknown =>
      levels === 0 ? gt(0) : { property: 'k', condition: gt(1), function: 'count', where: { property: 'items', condition: nest(levels - 1) } };
    // nest(n) holds n summaries plus the innermost comparison
    expect(conditionPaths(nest(MAX_SUMMARY_DEPTH))).toEqual([]);
    const tooDeep = conditionPaths(nest(MAX_SUMMARY_DEPTH + 1));
    expect(tooDeep).toEqual([`${AT}${'.where.condition'.repeat(MAX_SUMMARY_DEPTH)}`]);
  });
});
