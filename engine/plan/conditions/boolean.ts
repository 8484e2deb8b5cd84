// Boolean conditions (E16): the value must be a boolean equal to the one written; anything else fails (E15).

import type { ValueTest } from './types.js';

export function compileBooleanCondition(expected: boolean): ValueTest {
  return expected ? (v) => v === true : (v) => v === false;
}
