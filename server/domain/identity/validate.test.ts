// Identity bodies (D28, D29): identify and add-alias bodies, errors as 400 1002 naming the JSON path; UUID v5 (D22).

import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../errors.js';
import { uuidV5 } from './uuid.js';
import { validateAliasBody, validateAliases, validateIdentifyBody } from './validate.js';

const USER = 'b0000000-0000-4000-8000-000000000001';

function problemOf(run: () => unknown): { code: number; status: number; detail: string | undefined } {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ServiceError);
    const { code, status, detail } = error as ServiceError;
    return { code, status, detail };
  }
  throw new Error('expected a ServiceError');
}

describe('validateIdentifyBody (D28)', () => {
  it('accepts user_id with aliases, empty aliases, and ignores unknown fields (D1)', () => {
    expect(validateIdentifyBody({ user_id: USER, aliases: [{ id: 'a', tag: 't', priority: 1 }], extra: 1 })).toEqual({
      user_id: USER,
      aliases: [{ id: 'a', tag: 't', priority: 1 }],
    });
    expect(validateIdentifyBody({ user_id: USER, aliases: [] })).toEqual({ user_id: USER, aliases: [] });
  });

  it('names the JSON path of the first problem', () => {
    const cases: Array<[unknown, string]> = [
      [[], 'body'],
      [{ aliases: [] }, 'user_id'],
      [{ user_id: 'x', aliases: [] }, 'user_id'],
      [{ user_id: USER }, 'aliases'],
      [{ user_id: USER, aliases: {} }, 'aliases'],
      [{ user_id: USER, aliases: [{ id: 'a', tag: 't', priority: 1 }, { id: 'b', tag: 't' }] }, 'aliases[1].priority'],
      [{ user_id: USER, aliases: [{ id: 'a', tag: 't', priority: 1.5 }] }, 'aliases[0].priority'],
      [{ user_id: USER, aliases: [{ id: 7, tag: 't', priority: 1 }] }, 'aliases[0].id'],
      [{ user_id: USER, aliases: [{ id: 'a', tag: '', priority: 1 }] }, 'aliases[0].tag'],
      [{ user_id: USER, aliases: ['a'] }, 'aliases[0]'],
    ];
    for (const [body, path] of cases) {
      const problem = problemOf(() => validateIdentifyBody(body));
      expect(problem.code).toBe(1002);
      expect(problem.status).toBe(400);
      expect(problem.detail?.split(':')[0]).toBe(path);
    }
  });
});

describe('validateAliasBody (D28)', () => {
  it('id and tag required, priority optional', () => {
    expect(validateAliasBody({ id: 'a', tag: 't' })).toEqual({ id: 'a', tag: 't' });
    expect(validateAliasBody({ id: 'a', tag: 't', priority: 2 })).toEqual({ id: 'a', tag: 't', priority: 2 });
    expect(problemOf(() => validateAliasBody({ tag: 't' })).detail?.split(':')[0]).toBe('id');
    expect(problemOf(() => validateAliasBody({ id: 'a', tag: 't', priority: '1' })).detail?.split(':')[0]).toBe(
      'priority',
    );
    expect(problemOf(() => validateAliasBody(null)).code).toBe(1002);
  });

  it('validateAliases can require a non-empty list (track, D29)', () => {
    expect(problemOf(() => validateAliases([], 'aliases', true)).detail?.split(':')[0]).toBe('aliases');
    expect(validateAliases([], 'aliases', false)).toEqual([]);
  });
});

describe('uuidV5 (D22)', () => {
  it('matches the RFC 4122 reference (Python uuid5(NAMESPACE_DNS, "python.org"))', () => {
    expect(uuidV5('python.org', '6ba7b810-9dad-11d1-80b4-00c04fd430c8')).toBe('886313e1-3b8a-5372-9b90-0c9aee199e5d');
  });

  it('rejects a namespace that is not a UUID', () => {
    expect(() => uuidV5('x', 'nope')).toThrow(TypeError);
  });
});
