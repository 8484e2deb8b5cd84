import { describe, expect, it } from 'vitest';
import { validateQuery } from '../validate.js';
import { clauseOf, pathsOf, problemsOf } from '../../../test/support/validate-harness.js';

const atLeastOnce = { op: 'greater_than_or_equal_to', value: 1 };

describe('clause kinds', () => {
  it('an empty object is no clause', () => {
    expect(pathsOf({})).toEqual(['query']);
  });

  it('an object of unknown keys reports each key', () => {
    expect(problemsOf({ has_enterd: { segment: 1 }, x: 1 })).toEqual([
      { path: 'query', message: 'unknown key "has_enterd"' },
      { path: 'query', message: 'unknown key "x"' },
    ]);
  });

  it('two clause keys in one object are a problem (exactly one top-level key)', () => {
    expect(pathsOf({ has_entered: { segment: 1 }, has_exited: { segment: 1 } })).toEqual(['query']);
    expect(pathsOf({ engaged_time: { seconds: { greater_than: 1 } }, in_third_party_segment: { provider: 'p', segment: 's' } })).toEqual(['query']);
  });

  it('an unknown key next to a one-key clause is a problem', () => {
    expect(problemsOf({ has_entered: { segment: 1 }, during: 'this_session' })).toEqual([{ path: 'query', message: 'unknown key "during"' }]);
  });

  it('a one-key clause key inside an expression is an unknown key', () => {
    expect(problemsOf({ event: 'A', has_entered: { segment: 1 } })).toEqual([{ path: 'query', message: 'unknown key "has_entered"' }]);
  });
});

describe('expression clause (D33)', () => {
  it('needs only event; frequency defaults to at least once; during and where are absent', () => {
    expect(clauseOf({ event: 'Pageview' })).toEqual({ kind: 'expression', event: 'Pageview', frequency: atLeastOnce });
  });

  it('keeps frequency, during and where', () => {
    expect(
      clauseOf({
        event: 'Click_2',
        frequency: { equal_to: 0 },
        during: 'this_session',
        where: { property: 'properties.a', condition: 'is_empty' },
      }),
    ).toEqual({
      kind: 'expression',
      event: 'Click_2',
      frequency: { op: 'equal_to', values: [0] },
      during: { kind: 'this_session' },
      where: { kind: 'predicate', property: 'properties.a', path: ['a'], condition: { family: 'string', op: 'is_empty' } },
    });
  });

  it('frequency accepts any finite number (a count compared with 1.5 is meaningful)', () => {
    expect(clauseOf({ event: 'A', frequency: { greater_than: 1.5 } })).toMatchObject({ frequency: { op: 'greater_than', value: 1.5 } });
  });

  it('a missing event is a problem, also when other expression keys are there', () => {
    expect(problemsOf({ frequency: { equal_to: 1 } })).toEqual([{ path: 'query', message: 'missing key "event"' }]);
    expect(pathsOf({ where: { property: 'properties.a', condition: 'is_empty' } })).toEqual(['query']);
  });

  it('event names are 1 to 128 characters of A-Z a-z 0-9 _ (D29)', () => {
    expect(pathsOf({ event: 'a'.repeat(128) })).toEqual([]);
    expect(pathsOf({ event: 'a'.repeat(129) })).toEqual(['query.event']);
    expect(pathsOf({ event: '' })).toEqual(['query.event']);
    expect(pathsOf({ event: 'page view' })).toEqual(['query.event']);
    expect(pathsOf({ event: 'café' })).toEqual(['query.event']);
    expect(pathsOf({ event: 'a-b' })).toEqual(['query.event']);
    expect(pathsOf({ event: 7 })).toEqual(['query.event']);
    expect(pathsOf({ event: null })).toEqual(['query.event']);
  });

  it('an unknown key is a problem at the clause', () => {
    expect(problemsOf({ event: 'A', when: 'now' })).toEqual([{ path: 'query', message: 'unknown key "when"' }]);
  });

  it('problems in frequency, during and where carry their paths', () => {
    expect(pathsOf({ event: 'A', frequency: 1, during: 'today', where: { property: 'a', condition: 'is_empty' } })).toEqual([
      'query.frequency',
      'query.during',
      'query.where.property',
    ]);
  });
});

describe('transition clause (D35, D18)', () => {
  for (const op of ['has_entered', 'has_not_entered', 'has_exited', 'has_not_exited'] as const) {
    it(`${op} {segment} reads the cohort code and records it as a reference`, () => {
      const result = validateQuery({ [op]: { segment: 12 } });
      expect(result).toEqual({ ok: true, query: { and: [{ or: [{ kind: 'transition', op, segment: 12 }] }] }, references: [12] });
    });
  }

  it('keeps during and where', () => {
    expect(
      clauseOf({ has_entered: { segment: 0, during: { the_last: { value: 2, unit: 'days' } }, where: { property: 'properties.x', condition: 'is_not_empty' } } }),
    ).toEqual({
      kind: 'transition',
      op: 'has_entered',
      segment: 0,
      during: { kind: 'the_last', value: 2, unit: 'days', ms: 172_800_000 },
      where: { kind: 'predicate', property: 'properties.x', path: ['x'], condition: { family: 'string', op: 'is_not_empty' } },
    });
  });

  it('references are the sorted unique codes of all transition clauses (D18)', () => {
    const result = validateQuery({ and: [{ has_exited: { segment: 9 } }, { or: [{ has_entered: { segment: 2 } }, { has_not_entered: { segment: 9 } }] }, { event: 'A' }] });
    expect(result.ok && result.references).toEqual([2, 9]);
    expect(validateQuery({ event: 'A' })).toMatchObject({ ok: true, references: [] });
  });

  it('segment is an integer >= 0', () => {
    expect(pathsOf({ has_entered: { segment: -1 } })).toEqual(['query.has_entered.segment']);
    expect(pathsOf({ has_entered: { segment: 1.5 } })).toEqual(['query.has_entered.segment']);
    expect(pathsOf({ has_entered: { segment: '3' } })).toEqual(['query.has_entered.segment']);
    expect(pathsOf({ has_entered: { segment: 2 ** 60 } })).toEqual(['query.has_entered.segment']);
  });

  it('segment is required; other keys are unknown; the value is an object', () => {
    expect(problemsOf({ has_exited: {} })).toEqual([{ path: 'query.has_exited', message: 'missing key "segment"' }]);
    expect(problemsOf({ has_exited: { segment: 1, frequency: { equal_to: 1 } } })).toEqual([{ path: 'query.has_exited', message: 'unknown key "frequency"' }]);
    expect(pathsOf({ has_exited: 1 })).toEqual(['query.has_exited']);
  });

  it('during and where problems carry their paths', () => {
    expect(pathsOf({ has_entered: { segment: 1, during: 'yesterday', where: { property: 'properties.x' } } })).toEqual([
      'query.has_entered.during',
      'query.has_entered.where',
    ]);
  });
});

describe('cohort membership clause (D27)', () => {
  for (const op of ['in_third_party_segment', 'not_in_third_party_segment', 'in_second_party_segment', 'not_in_second_party_segment'] as const) {
    it(`${op} {provider, segment}`, () => {
      expect(clauseOf({ [op]: { provider: 'acme', segment: 'cars' } })).toEqual({ kind: 'membership', op, provider: 'acme', segment: 'cars' });
    });
  }

  it('provider and segment are required non-empty strings', () => {
    expect(problemsOf({ in_third_party_segment: { provider: 'acme' } })).toEqual([{ path: 'query.in_third_party_segment', message: 'missing key "segment"' }]);
    expect(pathsOf({ in_third_party_segment: { provider: '', segment: 's' } })).toEqual(['query.in_third_party_segment.provider']);
    expect(pathsOf({ in_second_party_segment: { provider: 'p', segment: 5 } })).toEqual(['query.in_second_party_segment.segment']);
  });

  it('nothing else is allowed', () => {
    expect(problemsOf({ in_second_party_segment: { provider: 'p', segment: 's', during: 'this_session' } })).toEqual([
      { path: 'query.in_second_party_segment', message: 'unknown key "during"' },
    ]);
  });
});

describe('connections import clause (D27, E14)', () => {
  it('needs only provider; frequency defaults to at least once', () => {
    expect(clauseOf({ in_connections_import_segment: { provider: 'crm' } })).toEqual({
      kind: 'connections',
      op: 'in_connections_import_segment',
      provider: 'crm',
      frequency: atLeastOnce,
    });
  });

  it('keeps filters (names without prefix), during and frequency', () => {
    expect(
      clauseOf({
        not_in_connections_import_segment: {
          provider: 'crm',
          filters: { and: [{ property: 'age', condition: { greater_than: 30 } }, { property: 'address.city', condition: { equal_to: 'Oslo' } }] },
          during: { after: '2026-01-01T00:00:00Z' },
          frequency: { greater_than: 2 },
        },
      }),
    ).toEqual({
      kind: 'connections',
      op: 'not_in_connections_import_segment',
      provider: 'crm',
      filters: {
        kind: 'and',
        items: [
          { kind: 'predicate', property: 'age', path: ['age'], condition: { family: 'integer', comparison: { op: 'greater_than', value: 30 } } },
          { kind: 'predicate', property: 'address.city', path: ['address', 'city'], condition: { family: 'string', op: 'equal_to', values: ['Oslo'] } },
        ],
      },
      during: { kind: 'after', time: Date.UTC(2026, 0, 1) },
      frequency: { op: 'greater_than', value: 2 },
    });
  });

  it('a single filter, and an or of filters', () => {
    expect(clauseOf({ in_connections_import_segment: { provider: 'crm', filters: { property: 'plan', condition: 'is_not_empty' } } })).toMatchObject({
      filters: { kind: 'predicate', path: ['plan'] },
    });
    expect(clauseOf({ in_connections_import_segment: { provider: 'crm', filters: { or: [{ property: 'plan', condition: 'is_empty' }] } } })).toMatchObject({
      filters: { kind: 'or' },
    });
  });

  it('filters are one level deep and non-empty, like a where (E18)', () => {
    expect(pathsOf({ in_connections_import_segment: { provider: 'crm', filters: { and: [{ or: [{ property: 'a', condition: 'is_empty' }] }] } } })).toEqual([
      'query.in_connections_import_segment.filters.and[0]',
    ]);
    expect(pathsOf({ in_connections_import_segment: { provider: 'crm', filters: { or: [] } } })).toEqual(['query.in_connections_import_segment.filters.or']);
  });

  it('filter names are read literally, with no properties. prefix stripped', () => {
    expect(clauseOf({ in_connections_import_segment: { provider: 'crm', filters: { property: 'properties.age', condition: 'is_empty' } } })).toMatchObject({
      filters: { path: ['properties', 'age'] },
    });
    expect(pathsOf({ in_connections_import_segment: { provider: 'crm', filters: { property: 'a..b', condition: 'is_empty' } } })).toEqual([
      'query.in_connections_import_segment.filters.property',
    ]);
  });

  it('provider is a required non-empty string; unknown keys and bad parts carry paths', () => {
    expect(problemsOf({ in_connections_import_segment: {} })).toEqual([{ path: 'query.in_connections_import_segment', message: 'missing key "provider"' }]);
    expect(pathsOf({ in_connections_import_segment: { provider: '' } })).toEqual(['query.in_connections_import_segment.provider']);
    expect(problemsOf({ in_connections_import_segment: { provider: 'crm', where: {} } })).toEqual([
      { path: 'query.in_connections_import_segment', message: 'unknown key "where"' },
    ]);
    expect(pathsOf({ in_connections_import_segment: { provider: 'crm', frequency: { more_than: 1 }, during: 'never' } })).toEqual([
      'query.in_connections_import_segment.frequency',
      'query.in_connections_import_segment.during',
    ]);
  });
});
