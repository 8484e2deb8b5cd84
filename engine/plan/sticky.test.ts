// Final clause answers (plan/sticky.ts): which answers last once given, and above which slot value every answer does.

import { describe, expect, it } from 'vitest';
import type { Clause, During } from '../query/ast.js';
import { between, eq, expr, gt, gte, lt, lte, ne, theLast, MINUTE } from '../../test/support/engine-queries.js';
import { NOT_STICKY, finalAboveOf, stickyAnswerOf } from './sticky.js';

const transition = (op: 'has_entered' | 'has_not_entered' | 'has_exited' | 'has_not_exited', during?: During): Clause => ({
  kind: 'transition',
  op,
  segment: 1,
  ...(during && { during }),
});

describe('stickyAnswerOf: answers a never-decreasing slot keeps', () => {
  it('upward-closed comparisons stay true, downward-closed stay false (E4 all time, fixed windows, first N)', () => {
    expect(stickyAnswerOf(expr('A', { frequency: gte(2) }))).toBe(1);
    expect(stickyAnswerOf(expr('A', { frequency: gt(2), during: { kind: 'before', time: 0 } }))).toBe(1);
    expect(stickyAnswerOf(expr('A', { frequency: lt(2), during: { kind: 'first', count: 3 } }))).toBe(0);
    expect(stickyAnswerOf({ kind: 'engaged_time', seconds: lte(5), during: { kind: 'in_interval', start: 0, end: 1 } })).toBe(0);
    expect(stickyAnswerOf(expr('A', { frequency: eq(2) }))).toBe(NOT_STICKY);
  });

  it('windows a value can leave (the_last, runs, last N) have no lasting answer', () => {
    expect(stickyAnswerOf(expr('A', { frequency: gte(1), during: theLast(MINUTE) }))).toBe(NOT_STICKY);
    expect(stickyAnswerOf(expr('A', { frequency: gte(1), during: { kind: 'this_session' } }))).toBe(NOT_STICKY);
    expect(stickyAnswerOf(expr('A', { frequency: gte(1), during: { kind: 'last', count: 2 } }))).toBe(NOT_STICKY);
    expect(stickyAnswerOf({ kind: 'engaged_completion', completion: gte(0.5) })).toBe(NOT_STICKY);
  });

  it('E11: has_* stays true, has_not_* stays false, except in run-scoped windows', () => {
    expect(stickyAnswerOf(transition('has_entered'))).toBe(1);
    expect(stickyAnswerOf(transition('has_not_exited', { kind: 'first', count: 2 }))).toBe(0);
    expect(stickyAnswerOf(transition('has_exited', { kind: 'this_session' }))).toBe(NOT_STICKY);
  });
});

describe('finalAboveOf: every comparison is constant above its largest constant', () => {
  it('is the largest constant for never-decreasing slots, +Infinity otherwise', () => {
    expect(finalAboveOf(expr('A', { frequency: eq(1, 4) }))).toBe(4);
    expect(finalAboveOf(expr('A', { frequency: ne(3) }))).toBe(3);
    expect(finalAboveOf(expr('A', { frequency: between(2, 6) }))).toBe(6);
    expect(finalAboveOf({ kind: 'engaged_time', seconds: lt(30) })).toBe(30);
    expect(finalAboveOf(transition('has_not_entered'))).toBe(0);
    expect(finalAboveOf(expr('A', { frequency: eq(1), during: theLast(MINUTE) }))).toBe(Number.POSITIVE_INFINITY);
  });
});
