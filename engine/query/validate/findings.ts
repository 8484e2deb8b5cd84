// What a validation run collects (problems with JSON paths, cohort codes named) and the object-walking helpers
// that report JSON-shape problems (`expected object`, `unknown key`, `missing key`, exactly-one-key) as they go.

import type { QueryProblem } from '../../api.js';

/** Problems in document order, and the cohort codes named by transition clauses (D18). */
export class Findings {
  readonly problems: QueryProblem[] = [];
  readonly references = new Set<number>();

  problem(path: string, message: string): void {
    this.problems.push({ path, message });
  }

  /** How many problems so far: a reader compares before/after to know whether its part was valid. */
  get count(): number {
    return this.problems.length;
  }
}

export type JsonObject = Readonly<Record<string, unknown>>;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function hasKey(object: JsonObject, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(object, key);
}

export function keyPath(path: string, key: string): string {
  return `${path}.${key}`;
}

export function indexPath(path: string, index: number): string {
  return `${path}[${index}]`;
}

/** A key or value quoted as JSON, for messages: `unknown key "contain"`. */
export function quote(text: string): string {
  return JSON.stringify(text);
}

/** The JSON type of a value, as messages name it. */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

export function expected(what: string, value: unknown): string {
  return `expected ${what}, got ${describe(value)}`;
}

/** Called for each own key in document order; returns false when the key is not allowed there. */
export type KeyVisitor = (key: string, value: unknown, path: string) => boolean;

/**
 * Walks an object: `expected object` when it is not one, `missing key` for each absent required key, then each key
 * in document order through `visit`, with `unknown key` for the keys it refuses. Returns whether it was an object.
 */
export function visitObject(
  findings: Findings,
  value: unknown,
  path: string,
  required: readonly string[],
  visit: KeyVisitor,
): boolean {
  if (!isObject(value)) {
    findings.problem(path, expected('object', value));
    return false;
  }
  for (const key of required) {
    if (!hasKey(value, key)) findings.problem(path, `missing key ${quote(key)}`);
  }
  for (const key of Object.keys(value)) {
    if (!visit(key, value[key], keyPath(path, key))) findings.problem(path, `unknown key ${quote(key)}`);
  }
  return true;
}

/**
 * Walks an object that must have exactly one key among `allowed` (and no other key). Unknown keys are reported in
 * document order; none of the allowed keys, or several, is a problem at the object's path. `read` is called for the
 * one allowed key, and its result returned.
 */
export function visitSoleKey<T>(
  findings: Findings,
  value: unknown,
  path: string,
  allowed: ReadonlySet<string>,
  read: (key: string, value: unknown, path: string) => T | undefined,
): T | undefined {
  if (!isObject(value)) {
    findings.problem(path, expected('object', value));
    return undefined;
  }
  const keys = Object.keys(value);
  const known = keys.filter((key) => allowed.has(key));
  if (keys.length === 0) {
    const choices = allowed.size <= 8 ? ` (one of ${[...allowed].map(quote).join(', ')})` : '';
    findings.problem(path, `expected exactly one key${choices}, got none`);
    return undefined;
  }
  if (known.length > 1) {
    findings.problem(path, `expected exactly one key, got ${known.map(quote).join(', ')}`);
  }
  let result: T | undefined;
  for (const key of keys) {
    if (!allowed.has(key)) findings.problem(path, `unknown key ${quote(key)}`);
    else if (known.length === 1) result = read(key, value[key], keyPath(path, key));
  }
  return result;
}
