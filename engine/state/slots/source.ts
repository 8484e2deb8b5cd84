// Generated-code fragments for slots whose updates are a few operations on the user's numbers (state/generated.ts
// writes them in place of the slot's calls). They hold only integers computed here, fixed identifiers (`s` the
// state, `N` its numbers `s.nums`, `V` the plan's constants) and the fragments the caller passes.

import type { During } from '../../query/ast.js';
import type { Form } from './window.js';

/** The number at offset `at` of the user's numbers, as an expression. */
export function numSource(at: number): string {
  return `N[${at | 0}]`;
}

/** Adds `amount` (an expression) to the number at `at` when `condition` holds, then runs `changed`. */
function addSource(condition: string, at: number, amount: string, changed: string): string {
  return `if (${condition}) { ${numSource(at)} += ${amount}; ${changed} }`;
}

/** A run reset: when the number at `at` is not 0, sets it and the `width - 1` after it to 0, then runs `changed`. */
export function zeroSource(at: number, width: number, changed: string): string {
  const zeroes: string[] = [];
  for (let i = 0; i < width; i++) zeroes.push(`${numSource(at + i)} = 0;`);
  return `if (${numSource(at)} !== 0) { ${zeroes.join(' ')} ${changed} }`;
}

/**
 * `inFixedWindow(during, s.time)` (window.ts) as a condition to append: '' for forms without a fixed window, else
 * ` && ...` with the bounds appended to `constants`.
 */
function fixedWindowSource(during: During | undefined, constants: number[]): string {
  if (during === undefined) return '';
  const at = constants.length | 0;
  switch (during.kind) {
    case 'in_interval':
      constants.push(during.start, during.end);
      return ` && s.time >= V[${at}] && s.time <= V[${(at + 1) | 0}]`;
    case 'before':
      constants.push(during.time);
      return ` && s.time < V[${at}]`;
    case 'after':
      constants.push(during.time);
      return ` && s.time > V[${at}]`;
    default:
      return '';
  }
}

/**
 * `first N` upkeep: counts the event among the first N (the number at `seen`, below the constant N) and, when
 * `matched`, runs `update` then `changed`; nothing once N events were seen.
 */
function firstSource(seen: number, n: number, matched: string, update: string, changed: string, constants: number[]): string {
  const at = constants.length | 0;
  constants.push(n);
  return `if (!(${numSource(seen)} >= V[${at}])) { ${numSource(seen)} += 1; if (${matched}) { ${update} ${changed} } }`;
}

/**
 * The update of a tally (expression counts add 1, engaged_time sums the event's seconds: `amount`) at `at`: plain
 * forms add when `matched` and within a fixed window; `first N` keeps [seen, tally]; undefined for the forms that
 * keep rings or sliding sums (`last N`, `the_last`), whose calls stay.
 */
export function tallySource(
  form: Form,
  during: During | undefined,
  n: number,
  at: number,
  amount: string,
  matched: string,
  changed: string,
  constants: number[],
): string | undefined {
  switch (form) {
    case 'first':
      return firstSource(at, n, matched, `${numSource(at + 1)} += ${amount};`, changed, constants);
    case 'last':
    case 'the_last':
      return undefined;
    default:
      return addSource(`(${matched})${fixedWindowSource(during, constants)}`, at, amount, changed);
  }
}
