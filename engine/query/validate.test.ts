import { describe, expect, it } from 'vitest';
import { formatProblem, validateQuery } from './validate.js';

describe('validateQuery: the entry point (D18)', () => {
  it('ok: the normalised query and the sorted unique references', () => {
    const result = validateQuery({ and: [{ has_entered: { segment: 5 } }, { or: [{ has_exited: { segment: 2 } }, { has_not_exited: { segment: 5 } }] }] });
    expect(result.ok).toBe(true);
    expect(result.ok && result.references).toEqual([2, 5]);
  });

  it('the AST is plain JSON data: no undefined members, survives a JSON round trip', () => {
    const result = validateQuery({
      and: [
        { event: 'A', where: { property: 'properties.list', condition: { property: 'k', condition: { greater_than: 1 }, function: 'max' } } },
        { in_connections_import_segment: { provider: 'crm' } },
        { engaged_views: { times: { greater_than: 1 }, completion: { greater_than: 0.5 } } },
      ],
    });
    if (!result.ok) throw new Error('expected ok');
    expect(JSON.parse(JSON.stringify(result.query))).toEqual(result.query);
    expect(JSON.stringify(result.query)).not.toContain('undefined');
    const hasUndefined = (value: unknown): boolean =>
      typeof value === 'object' && value !== null ? Object.values(value).some((v) => v === undefined || hasUndefined(v)) : false;
    expect(hasUndefined(result.query)).toBe(false);
  });

  it('not ok: every problem, in document order, each with a path under the root', () => {
    const result = validateQuery({
      and: [{ event: 'A', frequency: { gt: 1 } }, { or: [{ event: 'B', during: 'x' }, { has_entered: {} }] }, { event: 'C', where: { property: 'p' } }],
    });
    expect(result.ok).toBe(false);
    expect(!result.ok && result.problems).toEqual([
      { path: 'query.and[0].frequency', message: 'unknown key "gt"' },
      { path: 'query.and[1].or[0].during', message: 'unknown during "x"' },
      { path: 'query.and[1].or[1].has_entered', message: 'missing key "segment"' },
      { path: 'query.and[2].where', message: 'missing key "condition"' },
      { path: 'query.and[2].where.property', message: expect.stringMatching(/properties\./) as unknown as string },
    ]);
  });

  it('document order: an unknown key after a bad value comes after it; missing keys come first', () => {
    const paths = (json: unknown) => {
      const result = validateQuery(json);
      return result.ok ? [] : result.problems.map(formatProblem);
    };
    expect(paths({ event: 'A', frequency: { equal_to: 'x' }, zzz: 1 })).toEqual(['query.frequency.equal_to: expected number, got string', 'query: unknown key "zzz"']);
    expect(paths({ zzz: 1, event: 'A', frequency: { equal_to: 'x' } })).toEqual(['query: unknown key "zzz"', 'query.frequency.equal_to: expected number, got string']);
    expect(paths({ frequency: { equal_to: 'x' } })).toEqual(['query: missing key "event"', 'query.frequency.equal_to: expected number, got string']);
  });

  it('formatProblem joins path and message (the D18 cause)', () => {
    expect(formatProblem({ path: 'query.and[1].or[0].where.condition', message: 'unknown key "contain"' })).toBe(
      'query.and[1].or[0].where.condition: unknown key "contain"',
    );
  });

  it('never throws on odd values: null, scalars, arrays, functions, prototype-ish keys', () => {
    const odd: unknown[] = [
      undefined,
      null,
      0,
      -0,
      Number.NaN,
      '',
      'query',
      true,
      [],
      [[[]]],
      {},
      () => 1,
      Symbol('s'),
      10n,
      new Date(0),
      new Map([['event', 'A']]),
      Object.create(null),
      JSON.parse('{"__proto__": {"event": "A"}}'),
      JSON.parse('{"event": "A", "__proto__": 1}'),
      JSON.parse('{"constructor": {"prototype": 1}}'),
      { event: 'A', where: { property: 'properties.__proto__', condition: { __proto__: 1 } } },
      JSON.parse('{"event": "A", "where": {"property": "properties.a", "condition": {"__proto__": "x"}}}'),
      JSON.parse('{"event": "A", "during": {"the_last": {"value": 1, "unit": "__proto__"}}}'),
      JSON.parse('{"event": "A", "where": {"property": "properties.a", "condition": {"property": "k", "condition": {"greater_than": 1}, "function": "constructor"}}}'),
      { toString: 1, valueOf: 2, hasOwnProperty: 3 },
    ];
    for (const value of odd) {
      const result = validateQuery(value);
      expect(result.ok).toBe(false);
      if (!result.ok) {
        expect(result.problems.length).toBeGreaterThan(0);
        for (const problem of result.problems) expect(problem.path.startsWith('query')).toBe(true);
      }
    }
  });

  it('an object with a null prototype is read like any object', () => {
    const clause = Object.assign(Object.create(null) as Record<string, unknown>, { event: 'A' });
    expect(validateQuery(clause).ok).toBe(true);
  });

  it('very deep nesting is not walked past what the grammar allows', () => {
    let deep: unknown = 'is_empty';
    for (let i = 0; i < 100_000; i++) deep = { property: 'k', condition: { greater_than: 1 }, function: 'count', where: { property: 'x', condition: deep } };
    const result = validateQuery({ event: 'A', where: { property: 'properties.list', condition: deep } });
    expect(result.ok).toBe(false);
    let array: unknown = [];
    for (let i = 0; i < 100_000; i++) array = [array];
    expect(validateQuery({ and: array }).ok).toBe(false);
    expect(validateQuery({ event: 'A', frequency: { equal_to: array } }).ok).toBe(false);
  });
});
