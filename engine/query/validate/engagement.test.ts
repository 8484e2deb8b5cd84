import { describe, expect, it } from 'vitest';
import { clauseOf, pathsOf, problemsOf } from '../../../test/support/validate-harness.js';

const gt = (value: number) => ({ greater_than: value });
const where = { property: 'properties.section', condition: { equal_to: 'news' } };
const whereAst = { kind: 'predicate', property: 'properties.section', path: ['section'], condition: { family: 'string', op: 'equal_to', values: ['news'] } };

describe('engagement clauses (D32, E6-E9)', () => {
  it('engaged_time {seconds, during?, where?}', () => {
    expect(clauseOf({ engaged_time: { seconds: gt(30) } })).toEqual({ kind: 'engaged_time', seconds: { op: 'greater_than', value: 30 } });
    expect(clauseOf({ engaged_time: { seconds: { between: { start: 1.5, end: 60 } }, during: 'this_session', where } })).toEqual({
      kind: 'engaged_time',
      seconds: { op: 'between', start: 1.5, end: 60 },
      during: { kind: 'this_session' },
      where: whereAst,
    });
  });

  it('engaged_time: seconds required, unknown keys refused', () => {
    expect(problemsOf({ engaged_time: { during: 'this_session' } })).toEqual([{ path: 'query.engaged_time', message: 'missing key "seconds"' }]);
    expect(problemsOf({ engaged_time: { seconds: gt(1), completion: gt(0.5) } })).toEqual([{ path: 'query.engaged_time', message: 'unknown key "completion"' }]);
    expect(pathsOf({ engaged_time: { seconds: 30 } })).toEqual(['query.engaged_time.seconds']);
  });

  it('engaged_completion {completion, where?}', () => {
    expect(clauseOf({ engaged_completion: { completion: gt(0.75), where } })).toEqual({
      kind: 'engaged_completion',
      completion: { op: 'greater_than', value: 0.75 },
      where: whereAst,
    });
  });

  it('engaged_completion: completion required, no during', () => {
    expect(problemsOf({ engaged_completion: {} })).toEqual([{ path: 'query.engaged_completion', message: 'missing key "completion"' }]);
    expect(problemsOf({ engaged_completion: { completion: gt(0.5), during: 'this_session' } })).toEqual([
      { path: 'query.engaged_completion', message: 'unknown key "during"' },
    ]);
  });

  it('engaged_views {times, during?, where?, engaged_time} and {..., completion} (per_view)', () => {
    expect(clauseOf({ engaged_views: { times: gt(2), engaged_time: gt(10), during: { last: 5 }, where } })).toEqual({
      kind: 'engaged_views',
      times: { op: 'greater_than', value: 2 },
      during: { kind: 'last', count: 5 },
      where: whereAst,
      per_view: { measure: 'engaged_time', comparison: { op: 'greater_than', value: 10 } },
    });
    expect(clauseOf({ engaged_views: { completion: { greater_than_or_equal_to: 0.9 }, times: { equal_to: [1, 2] } } })).toEqual({
      kind: 'engaged_views',
      times: { op: 'equal_to', values: [1, 2] },
      per_view: { measure: 'completion', comparison: { op: 'greater_than_or_equal_to', value: 0.9 } },
    });
  });

  it('engaged_views needs exactly one of engaged_time and completion', () => {
    expect(pathsOf({ engaged_views: { times: gt(1) } })).toEqual(['query.engaged_views']);
    expect(pathsOf({ engaged_views: { times: gt(1), engaged_time: gt(1), completion: gt(0.5) } })).toEqual(['query.engaged_views']);
  });

  it('engaged_views: times required; bad parts carry their paths', () => {
    expect(problemsOf({ engaged_views: { engaged_time: gt(1) } })).toEqual([{ path: 'query.engaged_views', message: 'missing key "times"' }]);
    expect(pathsOf({ engaged_views: { times: gt(1), engaged_time: { gt: 1 }, seconds: gt(1) } })).toEqual([
      'query.engaged_views.engaged_time',
      'query.engaged_views',
    ]);
  });

  it('exactly one engagement key per clause; the value is an object', () => {
    expect(pathsOf({ engaged_time: { seconds: gt(1) }, engaged_views: { times: gt(1), completion: gt(0.1) } })).toEqual(['query']);
    expect(pathsOf({ engaged_completion: 0.5 })).toEqual(['query.engaged_completion']);
  });
});
