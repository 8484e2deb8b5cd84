// Generated-code fragments for slots whose updates are a few operations on the user's numbers (state/generated.ts
// writes them in place of the slot's calls). They hold only integers computed here, fixed identifiers (`s` the
// state, `N` its 64-bit numbers `s.nums`, `I` its 32-bit ones `s.ints`, `V` the plan's constants) and the fragments
// the caller passes.

import type { During } from '../../query/ast.js';
import { UINT_MAX } from './types.js';
import type { Form } from './window.js';

/** Which view of the user's numbers a field is in: `nums` (64-bit) or `ints` (32-bit, saturating counts). */
export type View = 'nums' | 'ints';

/** The 64-bit number at offset `at` of `nums`, as an expression. */
export function numSource(at: number): string {
  return `N[${at | 0}]`;
}

/** The 32-bit number at offset `at` of `ints`, as an expression. */
export function intSource(at: number): string {
  return `I[${at | 0}]`;
}

function fieldSource(view: View, at: number): string {
  return view === 'ints' ? intSource(at) : numSource(at);
}

/** Adds `amount` to the field at `at`: a 32-bit one only adds 1, and holds at UINT_MAX (types.ts `increment`). */
function addToSource(view: View, at: number, amount: string): string {
  if (view === 'nums') return `${numSource(at)} += ${amount};`;
  if (amount !== '1') throw new Error(`a 32-bit field counts by 1, not ${amount}`);
  return `if (${intSource(at)} < ${UINT_MAX}) ${intSource(at)} += 1;`;
}

/** A run reset: when the field at `at` is not 0, sets it and the `width - 1` after it to 0, then runs `changed`. */
export function zeroSource(view: View, at: number, width: number, changed: string): string {
  const zeroes: string[] = [];
  for (let i = 0; i < width; i++) zeroes.push(`${fieldSource(view, at + i)} = 0;`);
  return `if (${fieldSource(view, at)} !== 0) { ${zeroes.join(' ')} ${changed} }`;
}

/**
 * `inFixedWindow(during, s.time)` (window.ts) as a condition to put first: '' for forms without a fixed window, else
 * `... && ` with the bounds appended to `constants`. First, so that an event outside the window does not run the
 * group's `where` test (generated.ts reads the test's answer lazily).
 */
function fixedWindowSource(during: During | undefined, constants: number[]): string {
  if (during === undefined) return '';
  const at = constants.length | 0;
  switch (during.kind) {
    case 'in_interval':
      constants.push(during.start, during.end);
      return `s.time >= V[${at}] && s.time <= V[${(at + 1) | 0}] && `;
    case 'before':
      constants.push(during.time);
      return `s.time < V[${at}] && `;
    case 'after':
      constants.push(during.time);
      return `s.time > V[${at}] && `;
    default:
      return '';
  }
}

/**
 * `first N` upkeep: counts the event among the first N (the number at `seen`, below the constant N) and, when
 * `matched`, runs `update` then `changed`; nothing once N events were seen.
 */
function firstSource(view: View, seen: number, n: number, matched: string, update: string, changed: string, constants: number[]): string {
  const at = constants.length | 0;
  constants.push(n);
  return `if (!(${fieldSource(view, seen)} >= V[${at}])) { ${addToSource(view, seen, '1')} if (${matched}) { ${update} ${changed} } }`;
}

/**
 * The update of a tally (expression counts add 1 in `ints`, engaged_time sums the event's seconds in `nums`:
 * `amount`) at `at`: plain forms add when `matched` and within a fixed window; `first N` keeps [seen, tally];
 * undefined for the forms that keep rings or sliding sums (`last N`, `the_last`), whose calls stay.
 */
export function tallySource(
  view: View,
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
      return firstSource(view, at, n, matched, addToSource(view, at + 1, amount), changed, constants);
    case 'last':
    case 'the_last':
      return undefined;
    default:
      return `if (${fixedWindowSource(during, constants)}(${matched})) { ${addToSource(view, at, amount)} ${changed} }`;
  }
}
