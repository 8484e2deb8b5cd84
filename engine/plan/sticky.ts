// Which slot clause answers can no longer change ("final"): the segment step stops marking such a clause stale when
// its slot changes, so its cohort is not re-decided for nothing (SLOTS.md, "Final answers").

import type { Clause, NumberComparison } from '../query/ast.js';

/** `clauseSticky` value of a clause with no answer final as soon as given. Never equal to a clause flag. */
export const NOT_STICKY = 3;

/**
 * The answer (0 or 1) a clause keeps forever once it has given it, or NOT_STICKY. A slot whose value never
 * decreases while bound (all-time, fixed windows and `first N` of counts, engaged seconds (E6: >= 0) and transition
 * flags) keeps an upward-closed comparison true and a downward-closed one false.
 */
export function stickyAnswerOf(clause: Clause): number {
  switch (clause.kind) {
    case 'expression':
      return neverDecreases(clause.during?.kind) ? byDirection(clause.frequency) : NOT_STICKY;
    case 'engaged_time':
      return neverDecreases(clause.during?.kind) ? byDirection(clause.seconds) : NOT_STICKY;
    case 'transition':
      // The slot's flag only goes 0 -> 1: has_* stays true, has_not_* stays false.
      if (!neverDecreases(clause.during?.kind)) return NOT_STICKY;
      return clause.op === 'has_entered' || clause.op === 'has_exited' ? 1 : 0;
    default:
      return NOT_STICKY;
  }
}

/**
 * A bound above which the clause's answer is final whatever it is (its slot value never decreases and every
 * comparison is constant above its largest constant), or +Infinity.
 */
export function finalAboveOf(clause: Clause): number {
  switch (clause.kind) {
    case 'expression':
      return neverDecreases(clause.during?.kind) ? largestConstant(clause.frequency) : Number.POSITIVE_INFINITY;
    case 'engaged_time':
      return neverDecreases(clause.during?.kind) ? largestConstant(clause.seconds) : Number.POSITIVE_INFINITY;
    case 'transition':
      return neverDecreases(clause.during?.kind) ? 0 : Number.POSITIVE_INFINITY;
    default:
      return Number.POSITIVE_INFINITY;
  }
}

/** Forms whose slot value never decreases: nothing leaves them (no run reset, no sliding window, no `last N`). */
function neverDecreases(kind: string | undefined): boolean {
  return kind === undefined || kind === 'in_interval' || kind === 'before' || kind === 'after' || kind === 'first';
}

function byDirection(cmp: NumberComparison): number {
  switch (cmp.op) {
    case 'greater_than':
    case 'greater_than_or_equal_to':
      return 1;
    case 'less_than':
    case 'less_than_or_equal_to':
      return 0;
    default:
      return NOT_STICKY;
  }
}

function largestConstant(cmp: NumberComparison): number {
  switch (cmp.op) {
    case 'equal_to':
    case 'not_equal_to':
      return Math.max(...cmp.values);
    case 'between':
      return Math.max(cmp.start, cmp.end);
    default:
      return cmp.value;
  }
}
