import { describe, expect, it } from 'vitest';
import { pathsOf, problemsOf, whereOf, withWhere } from '../../../test/support/validate-harness.js';

const empty = 'is_empty';
const stringIsEmpty = { family: 'string', op: 'is_empty' };

describe('where (spec "where", E15, E18)', () => {
  it('a predicate {property, condition}: the AST path drops the properties prefix', () => {
    expect(whereOf(withWhere({ property: 'properties.client.url', condition: empty }))).toEqual({
      kind: 'predicate',
      property: 'properties.client.url',
      path: ['client', 'url'],
      condition: stringIsEmpty,
    });
    expect(whereOf(withWhere({ property: 'properties.$document.id', condition: empty }))).toMatchObject({ path: ['$document', 'id'] });
  });

  it('property must start with "properties." and have non-empty segments', () => {
    for (const property of ['client.url', 'properties', 'properties.', 'properties..a', 'properties.a.', '.properties.a', 'Properties.a', '']) {
      expect(pathsOf(withWhere({ property, condition: empty })), property).toEqual(['query.where.property']);
    }
    expect(pathsOf(withWhere({ property: ['properties', 'a'], condition: empty }))).toEqual(['query.where.property']);
  });

  it('property and condition are required; other keys are unknown', () => {
    expect(problemsOf(withWhere({ property: 'properties.a' }))).toEqual([{ path: 'query.where', message: 'missing key "condition"' }]);
    expect(problemsOf(withWhere({ condition: empty }))).toEqual([{ path: 'query.where', message: 'missing key "property"' }]);
    expect(problemsOf(withWhere({ property: 'properties.a', condition: empty, function: 'any' }))).toEqual([
      { path: 'query.where', message: 'unknown key "function"' },
    ]);
    expect(pathsOf(withWhere('properties.a'))).toEqual(['query.where']);
    expect(pathsOf(withWhere([]))).toEqual(['query.where']);
  });

  it('compound {and: [...]} / {or: [...]} of predicates', () => {
    const a = { property: 'properties.a', condition: empty };
    const b = { property: 'properties.b.c', condition: 'list_is_empty' };
    expect(whereOf(withWhere({ and: [a, b] }))).toEqual({
      kind: 'and',
      items: [
        { kind: 'predicate', property: 'properties.a', path: ['a'], condition: stringIsEmpty },
        { kind: 'predicate', property: 'properties.b.c', path: ['b', 'c'], condition: { family: 'list', op: 'list_is_empty' } },
      ],
    });
    expect(whereOf(withWhere({ or: [a] }))).toMatchObject({ kind: 'or', items: [{ path: ['a'] }] });
  });

  it('a compound inside a compound is a problem (one level deep, E18)', () => {
    const a = { property: 'properties.a', condition: empty };
    expect(pathsOf(withWhere({ and: [a, { or: [a] }] }))).toEqual(['query.where.and[1]']);
    expect(pathsOf(withWhere({ or: [{ and: [a] }, a, { and: [a] }] }))).toEqual(['query.where.or[0]', 'query.where.or[2]']);
  });

  it('a compound list is non-empty and a list; its items are predicates with paths', () => {
    expect(pathsOf(withWhere({ and: [] }))).toEqual(['query.where.and']);
    expect(pathsOf(withWhere({ or: { property: 'properties.a', condition: empty } }))).toEqual(['query.where.or']);
    expect(pathsOf(withWhere({ and: [{ property: 'properties.a', condition: { contain: 'x' } }, 'x'] }))).toEqual([
      'query.where.and[0].condition',
      'query.where.and[1]',
    ]);
  });

  it('a compound has exactly one of and / or, and nothing else', () => {
    const a = { property: 'properties.a', condition: empty };
    expect(pathsOf(withWhere({ and: [a], or: [a] }))).toEqual(['query.where']);
    expect(problemsOf(withWhere({ and: [a], property: 'properties.b' }))).toEqual([{ path: 'query.where', message: 'unknown key "property"' }]);
  });

  it('the D18 example path: query.and[1].or[0].where.condition: unknown key "contain"', () => {
    const query = { and: [{ event: 'A' }, { or: [{ event: 'B', where: { property: 'properties.url', condition: { contain: 'x' } } }] }] };
    expect(problemsOf(query)).toEqual([{ path: 'query.and[1].or[0].where.condition', message: 'unknown key "contain"' }]);
  });
});
