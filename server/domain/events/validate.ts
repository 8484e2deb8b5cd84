// Validation of a track body (`POST /v2.0/events`, D29): name, user_id or aliases, properties, time, ids. Problems
// are ServiceError 1002 whose detail names the JSON path; unknown top-level fields are ignored (D1).

import { parseTimestamp } from '../../../engine/query/validate/timestamps.js';
import { badBody } from '../../errors.js';
import type { AliasInput } from '../identity/validate.js';
import { isPlainObject, requireUuid, validateAliases } from '../identity/validate.js';
import type { EventRecord } from './record.js';

/** A validated track body. `time` is normalised to UTC ISO 8601 with milliseconds (D3); `timeMs` is the same. */
export interface TrackInput {
  readonly name: string;
  readonly user_id?: string;
  readonly aliases?: readonly AliasInput[];
  readonly properties: Record<string, unknown>;
  readonly time: string;
  readonly timeMs: number;
  readonly id?: string;
  readonly session_id?: string;
  readonly view_id?: string;
}

const NAME = /^[A-Za-z0-9_]{1,128}$/;
const PROPERTY_KEY = /^[a-z0-9_]+$/;
const TOP_LEVEL_PLATFORM_KEY = /^\$[A-Za-z0-9_]+$/;
/** How far ahead of the server clock an event's time may be (D29). */
export const MAX_CLOCK_SKEW_MS = 5 * 60_000;
/** Deepest nesting of property values accepted (objects and lists), so that walking them cannot exhaust the stack. */
export const MAX_PROPERTY_DEPTH = 32;

/** Parses D29's track body against the server clock `now`; see TrackInput. */
export function validateTrackBody(body: unknown, now: Date): TrackInput {
  if (!isPlainObject(body)) throw badBody('body: expected an object');
  const name = body['name'];
  if (typeof name !== 'string') throw badBody('name: expected a string');
  if (!NAME.test(name)) throw badBody('name: expected 1 to 128 characters of A-Z, a-z, 0-9 and _');

  const user_id = present(body['user_id']) ? requireUuid(body['user_id'], 'user_id') : undefined;
  const aliases = present(body['aliases'])
    ? validateAliases(body['aliases'], 'aliases', user_id === undefined)
    : undefined;
  if (user_id === undefined && aliases === undefined) throw badBody('user_id: required when aliases is absent');

  const properties = present(body['properties']) ? body['properties'] : {};
  if (!isPlainObject(properties)) throw badBody('properties: expected an object');
  checkProperties(properties, 'properties', 1);

  let timeMs = now.getTime();
  if (present(body['time'])) {
    const text = body['time'];
    const parsed = typeof text === 'string' ? parseTimestamp(text) : undefined;
    if (parsed === undefined) {
      throw badBody('time: expected an ISO 8601 date-time with an offset (e.g. 2026-11-20T12:00:00Z)');
    }
    if (parsed > now.getTime() + MAX_CLOCK_SKEW_MS) throw badBody('time: more than 5 minutes ahead of the server clock');
    timeMs = parsed;
  }

  const input: { -readonly [K in keyof TrackInput]: TrackInput[K] } = {
    name,
    properties,
    time: new Date(timeMs).toISOString(),
    timeMs,
  };
  if (user_id !== undefined) input.user_id = user_id;
  if (aliases !== undefined) input.aliases = aliases;
  for (const field of ['id', 'session_id', 'view_id'] as const) {
    if (present(body[field])) input[field] = requireUuid(body[field], field);
  }
  return input;
}

/** The record of a validated event for its resolved user: the client's `id` when given, else `newId()`. */
export function buildEventRecord(input: TrackInput, userId: string, newId: () => string): EventRecord {
  const record: { -readonly [K in keyof EventRecord]: EventRecord[K] } = {
    id: input.id ?? newId(),
    user_id: userId,
    name: input.name,
    time: input.time,
    properties: input.properties,
  };
  if (input.session_id !== undefined) record.session_id = input.session_id;
  if (input.view_id !== undefined) record.view_id = input.view_id;
  return record;
}

/** `null` counts as absent for optional fields. */
function present(value: unknown): boolean {
  return value !== undefined && value !== null;
}

/**
 * Keys `[a-z0-9_]+` at every depth, `$`-prefixed keys at the top level only (D29); values are JSON values. Walked
 * first without building any path (an accepted event allocates nothing here), then, for a body that fails, again
 * with the paths, to name the first problem (as the schema check does, server/domain/schemas/check.ts).
 */
function checkProperties(object: Record<string, unknown>, path: string, depth: number): void {
  if (propertiesProblem(object, undefined, depth) === undefined) return;
  throw badBody(propertiesProblem(object, path, depth) as string);
}

/**
 * The first problem of `object`'s properties at `depth` as an error detail naming its path, or undefined when there
 * is none. `path` undefined: no path is built (the detail then names none). Own keys by for-in, in the order
 * Object.entries gives them.
 */
function propertiesProblem(object: Record<string, unknown>, path: string | undefined, depth: number): string | undefined {
  if (depth > MAX_PROPERTY_DEPTH) return `${path}: nested more than ${MAX_PROPERTY_DEPTH} levels deep`;
  for (const name in object) {
    if (!Object.hasOwn(object, name)) continue;
    const childPath = path === undefined ? undefined : `${path}.${name}`;
    if (!(depth === 1 && TOP_LEVEL_PLATFORM_KEY.test(name)) && !PROPERTY_KEY.test(name)) {
      return `${childPath}: property names may only hold a-z, 0-9 and _ (or start with $ at the top level)`;
    }
    const problem = valueProblem(object[name], childPath, depth);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

function valueProblem(value: unknown, path: string | undefined, depth: number): string | undefined {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return undefined;
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : `${path}: expected a finite number`;
  if (Array.isArray(value)) {
    if (depth + 1 > MAX_PROPERTY_DEPTH) return `${path}: nested more than ${MAX_PROPERTY_DEPTH} levels deep`;
    for (let index = 0; index < value.length; index++) {
      if (!(index in value)) continue; // a hole (never in parsed JSON) holds nothing to check
      const problem = valueProblem(value[index], path === undefined ? undefined : `${path}[${index}]`, depth + 1);
      if (problem !== undefined) return problem;
    }
    return undefined;
  }
  if (isPlainObject(value)) return propertiesProblem(value, path, depth + 1);
  return `${path}: expected a JSON value`;
}
