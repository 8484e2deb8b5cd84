// Readers of scalar query values (numbers, integers, strings, "one or a non-empty list"): each returns the value,
// or reports a problem at its path and returns undefined.

import { expected, indexPath, type Findings } from './findings.js';

/** Reads one value at a path, or reports why it cannot and returns undefined. */
export type ValueReader<T> = (findings: Findings, value: unknown, path: string) => T | undefined;

/** A finite number (JSON cannot hold NaN or infinities, but callers may pass any value). */
export const readNumber: ValueReader<number> = (findings, value, path) => {
  if (typeof value !== 'number') {
    findings.problem(path, expected('number', value));
    return undefined;
  }
  if (!Number.isFinite(value)) {
    findings.problem(path, 'expected a finite number');
    return undefined;
  }
  return value;
};

/** An integer in the safe range (|n| <= 2^53 - 1), at least `min` when given. */
export function readInteger(findings: Findings, value: unknown, path: string, min?: number): number | undefined {
  if (typeof value !== 'number') {
    findings.problem(path, expected('integer', value));
    return undefined;
  }
  if (!Number.isSafeInteger(value)) {
    findings.problem(path, `expected integer, got ${value}`);
    return undefined;
  }
  if (min !== undefined && value < min) {
    findings.problem(path, `expected an integer >= ${min}, got ${value}`);
    return undefined;
  }
  return value === 0 ? 0 : value; // -0 becomes 0
}

export const readAnyInteger: ValueReader<number> = (findings, value, path) => readInteger(findings, value, path);

export const readString: ValueReader<string> = (findings, value, path) => {
  if (typeof value !== 'string') {
    findings.problem(path, expected('string', value));
    return undefined;
  }
  return value;
};

export const readNonEmptyString: ValueReader<string> = (findings, value, path) => {
  const text = readString(findings, value, path);
  if (text === '') {
    findings.problem(path, 'expected a non-empty string');
    return undefined;
  }
  return text;
};

/** A non-empty array whose items each pass `read` (problems at `path[i]`). */
export function readNonEmptyList<T>(findings: Findings, value: unknown, path: string, read: ValueReader<T>): T[] | undefined {
  if (!Array.isArray(value)) {
    findings.problem(path, expected('array', value));
    return undefined;
  }
  if (value.length === 0) {
    findings.problem(path, 'expected a non-empty list');
    return undefined;
  }
  const before = findings.count;
  const items: T[] = [];
  value.forEach((item: unknown, index) => {
    const read1 = read(findings, item, indexPath(path, index));
    if (read1 !== undefined) items.push(read1);
  });
  return findings.count === before ? items : undefined;
}

/** One value, or a non-empty list of values (`equal_to`, `contains`, `list_contains`, ...). */
export function readOneOrList<T>(findings: Findings, value: unknown, path: string, read: ValueReader<T>): T[] | undefined {
  if (Array.isArray(value)) return readNonEmptyList(findings, value, path, read);
  const one = read(findings, value, path);
  return one === undefined ? undefined : [one];
}
