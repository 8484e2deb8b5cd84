// Reading fields of a JSON request body for the route modules: each failure is a 400 code 1002 whose cause names
// the field (D11). Unknown top-level fields are ignored (D1).

import { badBody, missingBody } from '../errors.js';
import { checkName } from '../domain/tenancy/index.js';

export type BodyObject = Readonly<Record<string, unknown>>;

export function requireBodyObject(body: unknown): BodyObject {
  if (body === undefined) throw missingBody();
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badBody('body: expected a JSON object');
  return body as BodyObject;
}

export function requireString(body: BodyObject, field: string): string {
  const value = body[field];
  if (value === undefined || value === null) throw badBody(`${field}: missing`);
  if (typeof value !== 'string') throw badBody(`${field}: expected a string`);
  return value;
}

/** A required display name (cohorts, reactions): present, a string, within the name rules (`checkName`). */
export function requireName(body: BodyObject, field = 'name'): string {
  const value = body[field];
  if (value === undefined || value === null) throw badBody(`${field}: missing`);
  return checkName(field, value);
}

export function optionalString(body: BodyObject, field: string): string | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw badBody(`${field}: expected a string`);
  return value;
}

export function optionalEnum<T extends string>(body: BodyObject, field: string, allowed: readonly T[]): T | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    throw badBody(`${field}: expected one of ${allowed.map((a) => JSON.stringify(a)).join(', ')}`);
  }
  return value as T;
}
