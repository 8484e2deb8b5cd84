// Body validation of the identity area (D28, D29): aliases, the identify body and the add-alias body. Problems are
// ServiceError 1002 whose detail names the JSON path, e.g. `aliases[1].priority: expected an integer`.

import { badBody } from '../../errors.js';
import { isUuid } from './uuid.js';

/** An alias as clients send it: `priority` is lower-number-wins (spec "User and alias"). */
export interface AliasInput {
  readonly id: string;
  readonly tag: string;
  readonly priority: number;
}

export interface IdentifyBody {
  readonly user_id: string;
  readonly aliases: readonly AliasInput[];
}

export interface AliasBody {
  readonly id: string;
  readonly tag: string;
  readonly priority?: number;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A non-empty string (alias ids and tags); `path` names it in the error. */
export function requireNonEmptyString(value: unknown, path: string): string {
  if (typeof value !== 'string') throw badBody(`${path}: expected a string`);
  if (value.length === 0) throw badBody(`${path}: must not be empty`);
  return value;
}

export function requireUuid(value: unknown, path: string): string {
  if (!isUuid(value)) throw badBody(`${path}: expected a UUID`);
  return value;
}

function requireInteger(value: unknown, path: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw badBody(`${path}: expected an integer`);
  return value;
}

const member = (path: string, name: string): string => (path === '' ? name : `${path}.${name}`);

/** One `{id, tag, priority}` at `path` ('' for a whole body); with `priorityRequired` false a missing (or null)
 * priority is left out. */
export function validateAlias(value: unknown, path: string, priorityRequired = true): AliasBody {
  if (!isPlainObject(value)) throw badBody(`${path === '' ? 'body' : path}: expected an object`);
  const id = requireNonEmptyString(value['id'], member(path, 'id'));
  const tag = requireNonEmptyString(value['tag'], member(path, 'tag'));
  const rawPriority = value['priority'];
  if (rawPriority === undefined || rawPriority === null) {
    if (priorityRequired) throw badBody(`${member(path, 'priority')}: required`);
    return { id, tag };
  }
  return { id, tag, priority: requireInteger(rawPriority, member(path, 'priority')) };
}

/** A list of aliases; `nonEmpty` for track (D29). */
export function validateAliases(value: unknown, path: string, nonEmpty: boolean): AliasInput[] {
  if (!Array.isArray(value)) throw badBody(`${path}: expected an array`);
  if (nonEmpty && value.length === 0) throw badBody(`${path}: must not be empty`);
  return value.map((item, index) => validateAlias(item, `${path}[${index}]`) as AliasInput);
}

/** `POST /v2.0/identify`: `user_id` (UUID) and `aliases` (required, may be empty). Unknown fields are ignored (D1). */
export function validateIdentifyBody(body: unknown): IdentifyBody {
  if (!isPlainObject(body)) throw badBody('body: expected an object');
  const user_id = requireUuid(body['user_id'], 'user_id');
  if (body['aliases'] === undefined || body['aliases'] === null) throw badBody('aliases: required');
  return { user_id, aliases: validateAliases(body['aliases'], 'aliases', false) };
}

/** `POST /v2.0/users/{user_id}/aliases`: `id` and `tag` required, `priority` optional (D28). */
export function validateAliasBody(body: unknown): AliasBody {
  return validateAlias(body, '', false);
}
