import { describe, expect, it } from 'vitest';
import { clauseOf, pathsOf, problemsOf } from '../../../test/support/validate-harness.js';

const withDuring = (during: unknown) => ({ event: 'A', during });
const duringOf = (during: unknown) => {
  const clause = clauseOf(withDuring(during));
  return clause.kind === 'expression' ? clause.during : undefined;
};

describe('during (spec "during", D33, E4)', () => {
  it('bare strings this_session and current_view', () => {
    expect(duringOf('this_session')).toEqual({ kind: 'this_session' });
    expect(duringOf('current_view')).toEqual({ kind: 'current_view' });
  });

  it('any other bare string is a problem', () => {
    expect(problemsOf(withDuring('this_view'))).toEqual([{ path: 'query.during', message: 'unknown during "this_view"' }]);
    expect(pathsOf(withDuring(''))).toEqual(['query.during']);
  });

  it('the_last {value, unit} fills ms (E4: a week is 7 days, a month 30 days)', () => {
    const cases: Array<[string, number]> = [
      ['seconds', 1_000],
      ['minutes', 60_000],
      ['hours', 3_600_000],
      ['days', 86_400_000],
      ['weeks', 604_800_000],
      ['months', 2_592_000_000],
    ];
    for (const [unit, ms] of cases) {
      expect(duringOf({ the_last: { value: 3, unit } })).toEqual({ kind: 'the_last', value: 3, unit, ms: 3 * ms });
    }
  });

  it('the_last: value is a positive integer', () => {
    expect(pathsOf(withDuring({ the_last: { value: 0, unit: 'days' } }))).toEqual(['query.during.the_last.value']);
    expect(pathsOf(withDuring({ the_last: { value: -2, unit: 'days' } }))).toEqual(['query.during.the_last.value']);
    expect(pathsOf(withDuring({ the_last: { value: 1.5, unit: 'days' } }))).toEqual(['query.during.the_last.value']);
    expect(pathsOf(withDuring({ the_last: { value: '7', unit: 'days' } }))).toEqual(['query.during.the_last.value']);
  });

  it('the_last: unit is one of the six names', () => {
    expect(pathsOf(withDuring({ the_last: { value: 1, unit: 'day' } }))).toEqual(['query.during.the_last.unit']);
    expect(pathsOf(withDuring({ the_last: { value: 1, unit: 'Days' } }))).toEqual(['query.during.the_last.unit']);
    expect(pathsOf(withDuring({ the_last: { value: 1, unit: 'constructor' } }))).toEqual(['query.during.the_last.unit']);
    expect(pathsOf(withDuring({ the_last: { value: 1, unit: 3 } }))).toEqual(['query.during.the_last.unit']);
  });

  it('the_last: both keys required, nothing else', () => {
    expect(problemsOf(withDuring({ the_last: { value: 1 } }))).toEqual([{ path: 'query.during.the_last', message: 'missing key "unit"' }]);
    expect(problemsOf(withDuring({ the_last: { unit: 'days' } }))).toEqual([{ path: 'query.during.the_last', message: 'missing key "value"' }]);
    expect(problemsOf(withDuring({ the_last: { value: 1, unit: 'days', from: 'now' } }))).toEqual([
      { path: 'query.during.the_last', message: 'unknown key "from"' },
    ]);
    expect(pathsOf(withDuring({ the_last: 7 }))).toEqual(['query.during.the_last']);
  });

  it('in_interval {start, end} are timestamps (epoch ms), start <= end, inclusive', () => {
    expect(duringOf({ in_interval: { start: '2026-11-20T12:00:00Z', end: '2026-11-21T12:00:00+02:00' } })).toEqual({
      kind: 'in_interval',
      start: Date.UTC(2026, 10, 20, 12),
      end: Date.UTC(2026, 10, 21, 10),
    });
    expect(duringOf({ in_interval: { start: '2026-11-20T12:00:00Z', end: '2026-11-20T14:00:00+02:00' } })).toEqual({
      kind: 'in_interval',
      start: Date.UTC(2026, 10, 20, 12),
      end: Date.UTC(2026, 10, 20, 12),
    });
  });

  it('in_interval: start after end, bad timestamps, missing keys', () => {
    expect(pathsOf(withDuring({ in_interval: { start: '2026-11-21T00:00:00Z', end: '2026-11-20T00:00:00Z' } }))).toEqual(['query.during.in_interval']);
    expect(pathsOf(withDuring({ in_interval: { start: '2026-11-20', end: 1 } }))).toEqual([
      'query.during.in_interval.start',
      'query.during.in_interval.end',
    ]);
    expect(problemsOf(withDuring({ in_interval: { start: '2026-11-20T00:00:00Z' } }))).toEqual([
      { path: 'query.during.in_interval', message: 'missing key "end"' },
    ]);
  });

  it('before / after take one timestamp (strict)', () => {
    expect(duringOf({ before: '2026-11-20T12:00:00.123+02:00' })).toEqual({ kind: 'before', time: Date.UTC(2026, 10, 20, 10, 0, 0, 123) });
    expect(duringOf({ after: '2026-11-20T12:00:00Z' })).toEqual({ kind: 'after', time: Date.UTC(2026, 10, 20, 12) });
    expect(pathsOf(withDuring({ before: '2026-11-20T12:00:00' }))).toEqual(['query.during.before']);
    expect(pathsOf(withDuring({ after: 1_700_000_000_000 }))).toEqual(['query.during.after']);
  });

  it('first / last take a positive integer', () => {
    expect(duringOf({ first: 1 })).toEqual({ kind: 'first', count: 1 });
    expect(duringOf({ last: 10 })).toEqual({ kind: 'last', count: 10 });
    expect(pathsOf(withDuring({ first: 0 }))).toEqual(['query.during.first']);
    expect(pathsOf(withDuring({ last: 2.5 }))).toEqual(['query.during.last']);
    expect(pathsOf(withDuring({ last: '3' }))).toEqual(['query.during.last']);
  });

  it('a during object has exactly one key', () => {
    expect(pathsOf(withDuring({}))).toEqual(['query.during']);
    expect(pathsOf(withDuring({ first: 1, last: 2 }))).toEqual(['query.during']);
    expect(problemsOf(withDuring({ since: '2026-11-20T12:00:00Z' }))).toEqual([{ path: 'query.during', message: 'unknown key "since"' }]);
    expect(pathsOf(withDuring({ first: 1, extra: true }))).toEqual(['query.during']);
  });

  it('a during that is neither string nor object is a problem', () => {
    for (const value of [3, null, true, ['this_session']]) expect(pathsOf(withDuring(value))).toEqual(['query.during']);
  });
});
