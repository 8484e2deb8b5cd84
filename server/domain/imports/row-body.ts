// Validation of connections rows `[{user_id | alias, time?, properties, id?}]` (D27) against the import's schema
// (D25): a bad row is 1002 naming `rows[i]` and the property; `time` defaults to now; null properties are dropped.

import { badBody } from '../../errors.js';
import { MAX_CODE, isPlainObject, requireObject, requireText } from './fields.js';
import { readUserRef } from './user-ref.js';
import type { PropertyType, UserRef } from './types.js';
import { ownValue, setOwn } from '../../own-keys.js';

export const MAX_ROWS = 10_000;

export interface RowInput {
  readonly user_id?: string;
  readonly alias?: { readonly tag: string; readonly id: string };
  /** ISO 8601 instant or epoch milliseconds; default now. */
  readonly time?: string | number;
  readonly properties?: Readonly<Record<string, unknown>>;
  /** Client row id: loading the same id again replaces the row (resume-safe). */
  readonly id?: string;
}

export interface ValidRow {
  readonly ref: UserRef;
  readonly time: number;
  readonly properties: Record<string, unknown>;
  readonly id: string | undefined;
}

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

export function validateRows(
  input: unknown,
  schema: Readonly<Record<string, PropertyType>>,
  identifiers: readonly string[],
  now: number,
): ValidRow[] {
  if (!Array.isArray(input)) throw badBody('rows: expected an array');
  if (input.length > MAX_ROWS) throw badBody(`rows: more than ${MAX_ROWS} rows`);
  return input.map((item, index) => validateRow(item, `rows[${index}]`, schema, identifiers, now));
}

function validateRow(
  input: unknown,
  path: string,
  schema: Readonly<Record<string, PropertyType>>,
  identifiers: readonly string[],
  now: number,
): ValidRow {
  const body = requireObject(input, path);
  const ref = readUserRef(body, path, identifiers);
  const time = body.time === undefined ? now : readTime(body.time, `${path}.time`);
  const id = body.id === undefined ? undefined : requireText(body.id, `${path}.id`, MAX_CODE);
  const given = body.properties === undefined ? {} : requireObject(body.properties, `${path}.properties`);
  const properties: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(given)) {
    const type = ownValue(schema, name);
    if (type === undefined) throw badBody(`${path}.properties.${name}: not in the import's schema`);
    if (value === null) continue;
    if (!conforms(value, type)) throw badBody(`${path}.properties.${name}: expected ${type}, got ${describe(value)}`);
    setOwn(properties, name, value);
  }
  return { ref, time, properties, id };
}

function readTime(value: unknown, path: string): number {
  if (typeof value === 'number' && Number.isFinite(value) && value >= 0) return Math.trunc(value);
  if (typeof value === 'string' && ISO_INSTANT.test(value)) {
    const time = Date.parse(value);
    if (Number.isFinite(time)) return time;
  }
  throw badBody(`${path}: expected an ISO 8601 instant or epoch milliseconds`);
}

function conforms(value: unknown, type: PropertyType): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'date':
      return typeof value === 'string' && ISO_INSTANT.test(value) && Number.isFinite(Date.parse(value));
    case 'list':
      return Array.isArray(value);
  }
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return 'list';
  if (isPlainObject(value)) return 'object';
  return typeof value;
}
