// List conditions (D34, E15, E16): the value must be an array; strings compare to string items, integers/floats to
// number items, dates to instants of string items. A non-array satisfies only the `does_not_contain` forms and
// `list_is_empty`.

import type { ListCondition } from '../../query/ast.js';
import { instantOf } from './number.js';
import type { ValueTest } from './types.js';

export function compileListCondition(cond: ListCondition): ValueTest {
  switch (cond.op) {
    case 'list_is_empty':
      return (v) => !Array.isArray(v) || v.length === 0;
    case 'list_is_not_empty':
      return (v) => Array.isArray(v) && v.length > 0;
    case 'list_contains': {
      const values = cond.values;
      return (v) => Array.isArray(v) && hasString(v, values);
    }
    case 'list_does_not_contain': {
      const values = cond.values;
      return (v) => !Array.isArray(v) || !hasString(v, values);
    }
    case 'list_contains_integer':
    case 'list_contains_float': {
      const value = cond.value;
      return (v) => Array.isArray(v) && v.includes(value);
    }
    case 'list_does_not_contain_integer':
    case 'list_does_not_contain_float': {
      const value = cond.value;
      return (v) => !Array.isArray(v) || !v.includes(value);
    }
    case 'list_contains_date': {
      const value = cond.value;
      return (v) => Array.isArray(v) && hasInstant(v, value);
    }
    case 'list_does_not_contain_date': {
      const value = cond.value;
      return (v) => !Array.isArray(v) || !hasInstant(v, value);
    }
  }
}

function hasString(items: readonly unknown[], values: readonly string[]): boolean {
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    if (typeof item === 'string' && values.includes(item)) return true;
  }
  return false;
}

function hasInstant(items: readonly unknown[], instant: number): boolean {
  for (let i = 0; i < items.length; i++) if (instantOf(items[i]) === instant) return true;
  return false;
}
