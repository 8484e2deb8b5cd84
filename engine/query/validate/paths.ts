// Property paths: `properties.a.b` in an event `where` (the AST path drops `properties`), and relative names
// (`key`, `a.b`) in list summaries, their nested `where`s and connections filters (D34, E14, E15, E17).

import { quote, type Findings } from './findings.js';
import { readString } from './values.js';

/** Where a property path is read from: an event's properties, or an item / import row (no prefix). */
export type PathBase = 'event' | 'relative';

export interface PropertyPath {
  readonly property: string;
  readonly path: readonly string[];
}

const PREFIX = 'properties';

/**
 * Reads a property name. Segments are split on dots and must be non-empty; their characters are not restricted
 * (events may carry `$`-prefixed names, imports have their own schema names). A relative name is read literally:
 * `properties.x` there means a sub-property named `properties`.
 */
export function readPropertyPath(findings: Findings, value: unknown, path: string, base: PathBase): PropertyPath | undefined {
  const property = readString(findings, value, path);
  if (property === undefined) return undefined;
  const segments = property.split('.');
  if (segments.some((segment) => segment === '')) {
    findings.problem(path, `expected a dot-separated name with no empty part, got ${quote(property)}`);
    return undefined;
  }
  if (base === 'relative') return { property, path: segments };
  if (segments[0] !== PREFIX || segments.length < 2) {
    findings.problem(path, `expected a name starting with "properties.", got ${quote(property)}`);
    return undefined;
  }
  return { property, path: segments.slice(1) };
}
