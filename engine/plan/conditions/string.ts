// String conditions (D34, E15, E16): case-sensitive, `contains` a substring test; a non-string (or missing) value
// satisfies only `not_equal_to`, `does_not_contain` and `is_empty`.

import type { StringCondition } from '../../query/ast.js';
import type { ValueTest } from './types.js';

export function compileStringCondition(cond: StringCondition): ValueTest {
  switch (cond.op) {
    case 'is_empty':
      return (v) => typeof v !== 'string' || v === '';
    case 'is_not_empty':
      return (v) => typeof v === 'string' && v !== '';
    case 'equal_to': {
      const values = cond.values;
      if (values.length === 1) {
        const only = values[0] as string;
        return (v) => v === only;
      }
      return (v) => typeof v === 'string' && values.includes(v);
    }
    case 'not_equal_to': {
      const values = cond.values;
      return (v) => typeof v !== 'string' || !values.includes(v);
    }
    case 'contains': {
      const values = cond.values;
      return (v) => typeof v === 'string' && containsAny(v, values);
    }
    case 'does_not_contain': {
      const values = cond.values;
      return (v) => typeof v !== 'string' || !containsAny(v, values);
    }
  }
}

function containsAny(text: string, parts: readonly string[]): boolean {
  for (let i = 0; i < parts.length; i++) if (text.includes(parts[i] as string)) return true;
  return false;
}
