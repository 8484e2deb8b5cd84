import { describe, expect, it } from 'vitest';
import { validateQuery } from '../validate.js';
import { pathsOf, problemsOf, queryOf } from '../../../test/support/validate-harness.js';

const A = { event: 'A' };
const B = { event: 'B' };
const C = { event: 'C' };

describe('combining clauses (spec "Combining clauses")', () => {
  it('a bare clause becomes and[or[clause]]', () => {
    const query = queryOf(A);
    expect(query.and).toHaveLength(1);
    expect(query.and[0]?.or).toEqual([{ kind: 'expression', event: 'A', frequency: { op: 'greater_than_or_equal_to', value: 1 } }]);
  });

  it('{or: [clauses]} becomes and[or[...]]', () => {
    const query = queryOf({ or: [A, B] });
    expect(query.and).toHaveLength(1);
    expect(query.and[0]?.or.map((c) => (c.kind === 'expression' ? c.event : c.kind))).toEqual(['A', 'B']);
  });

  it('{and: [...]} takes clauses (an or of one) and or objects, in order', () => {
    const query = queryOf({ and: [A, { or: [B, C] }] });
    expect(query.and.map((g) => g.or.map((c) => (c.kind === 'expression' ? c.event : c.kind)))).toEqual([['A'], ['B', 'C']]);
  });

  it('an or of a single clause inside and is the same as the bare clause', () => {
    expect(queryOf({ and: [{ or: [A] }, B] })).toEqual(queryOf({ and: [A, { or: [B] }] }));
  });

  it('has no limit on the number of clauses', () => {
    const clauses = Array.from({ length: 5000 }, (_, i) => ({ event: `E${i}` }));
    expect(queryOf({ and: [{ or: clauses }, ...clauses] }).and).toHaveLength(5001);
  });

  it('rejects and inside and', () => {
    expect(pathsOf({ and: [A, { and: [B] }] })).toEqual(['query.and[1]']);
  });

  it('rejects or inside or, and inside or', () => {
    expect(pathsOf({ or: [A, { or: [B] }] })).toEqual(['query.or[1]']);
    expect(pathsOf({ or: [{ and: [B] }] })).toEqual(['query.or[0]']);
    expect(pathsOf({ and: [{ or: [A, { or: [B] }] }] })).toEqual(['query.and[0].or[1]']);
  });

  it('rejects empty lists', () => {
    expect(pathsOf({ and: [] })).toEqual(['query.and']);
    expect(pathsOf({ or: [] })).toEqual(['query.or']);
    expect(pathsOf({ and: [{ or: [] }] })).toEqual(['query.and[0].or']);
  });

  it('rejects an object with both and and or', () => {
    expect(pathsOf({ and: [A], or: [B] })).toEqual(['query']);
  });

  it('rejects and / or that are not lists, and items that are not objects', () => {
    expect(pathsOf({ and: A })).toEqual(['query.and']);
    expect(pathsOf({ or: 'A' })).toEqual(['query.or']);
    expect(pathsOf({ and: [A, 3, null] })).toEqual(['query.and[1]', 'query.and[2]']);
    expect(pathsOf({ or: [[A]] })).toEqual(['query.or[0]']);
  });

  it('rejects other keys next to and / or', () => {
    expect(problemsOf({ and: [A], event: 'A' })).toEqual([{ path: 'query', message: 'unknown key "event"' }]);
    expect(problemsOf({ and: [{ or: [A], x: 1 }] })).toEqual([{ path: 'query.and[0]', message: 'unknown key "x"' }]);
    expect(pathsOf({ or: [A], during: 'this_session' })).toEqual(['query']);
  });

  it('rejects a query that is not an object', () => {
    for (const value of [null, 1, 'A', true, [], [A]]) {
      const problems = problemsOf(value);
      expect(problems.map((p) => p.path)).toEqual(['query']);
      expect(problems[0]?.message).toMatch(/^expected object/);
    }
  });

  it('collects every problem, in document order (D18 names the first)', () => {
    const json = {
      and: [
        { event: 'bad name' },
        { or: [A, { event: 'B', frequency: { at_least: 1 } }] },
        { has_entered: { segment: -1 } },
      ],
    };
    expect(pathsOf(json)).toEqual(['query.and[0].event', 'query.and[1].or[1].frequency', 'query.and[2].has_entered.segment']);
  });

  it('prefixes paths with the given root', () => {
    expect(pathsOf({ and: [{ nope: 1 }] }, 'body.query')).toEqual(['body.query.and[0]']);
    expect(validateQuery(A, 'q').ok).toBe(true);
  });
});
