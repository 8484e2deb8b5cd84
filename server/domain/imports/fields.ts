// Field checks shared by the body validators of this folder: each names the JSON path of a bad field in a 1002 (D11).

import { badBody } from '../../errors.js';

export const MAX_NAME = 256;
export const MAX_CODE = 256;
export const MAX_DESCRIPTION = 4096;
export const MAX_CATEGORIES = 256;

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function requireObject(value: unknown, path: string): Record<string, unknown> {
  if (!isPlainObject(value)) throw badBody(`${path}: expected an object`);
  return value;
}

/** Rejects keys outside `allowed`: for nested structures only; unknown top-level body fields are ignored (D1). */
export function rejectUnknownFields(body: Record<string, unknown>, allowed: readonly string[], path: string): void {
  for (const field of Object.keys(body)) {
    if (!allowed.includes(field)) throw badBody(`${join(path, field)}: unknown field`);
  }
}

export function requireText(value: unknown, path: string, max: number): string {
  if (typeof value !== 'string' || value.length === 0) throw badBody(`${path}: expected a non-empty string`);
  if (value.length > max) throw badBody(`${path}: longer than ${max} characters`);
  return value;
}

export function optionalDescription(value: unknown, path: string): string | null {
  if (value === null) return null;
  if (typeof value !== 'string') throw badBody(`${path}: expected a string or null`);
  if (value.length > MAX_DESCRIPTION) throw badBody(`${path}: longer than ${MAX_DESCRIPTION} characters`);
  return value;
}

export function optionalCpm(value: unknown, path: string): number | null {
  if (value === null) return null;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw badBody(`${path}: expected a number >= 0`);
  }
  return value;
}

export function stringList(value: unknown, path: string, maxItems: number, maxLength: number): string[] {
  if (!Array.isArray(value)) throw badBody(`${path}: expected an array of strings`);
  if (value.length > maxItems) throw badBody(`${path}: more than ${maxItems} items`);
  return value.map((item, index) => requireText(item, `${path}[${index}]`, maxLength));
}

export function join(path: string, field: string): string {
  return path === '' ? field : `${path}.${field}`;
}
