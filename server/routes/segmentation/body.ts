// The body of the segmentation routes (D21): exactly one user identifier, 0..10 events, an optional prior state.
// Every problem is a 400 code 1002 whose cause names the JSON path (D11).

import { ServiceError, badBody } from '../../errors.js';
import { newEvent, toEngineEvent, validateTrackBody, type NewEvent } from '../../domain/events/index.js';
import { isPlainObject, requireUuid, validateAlias, validateAliases } from '../../domain/identity/validate.js';
import type { StatelessIdent } from '../../domain/identity/index.js';
import type { EngineEvent } from '../../../engine/index.js';
import { requireBodyObject } from '../body.js';

/** D21: at most this many events per call. */
export const MAX_SEGMENTATION_EVENTS = 10;

/** Any valid UUID: validateTrackBody needs a user, which this route resolves separately. */
const PLACEHOLDER_USER = '00000000-0000-4000-8000-000000000000';

/** One validated segmentation event: the engine's view (epoch ms) and the wire parts ingestion needs. */
export interface SegmentationEvent {
  readonly name: string;
  /** UTC ISO 8601 with milliseconds (D3). */
  readonly time: string;
  readonly timeMs: number;
  readonly properties: Record<string, unknown>;
  readonly session_id?: string;
  readonly view_id?: string;
}

export interface SegmentationBody {
  readonly ident: StatelessIdent;
  readonly events: readonly SegmentationEvent[];
  /** `state.internal_state` when a state was given (stateless route only). */
  readonly internalState?: unknown;
}

const present = (value: unknown): boolean => value !== undefined && value !== null;

/** Parses the body of either route; `withState` reads `state` (the stateful route ignores it, D1). */
export function parseSegmentationBody(body: unknown, now: Date, withState: boolean): SegmentationBody {
  const object = requireBodyObject(body);
  const ident = parseIdent(object);
  const events = parseEvents(object['events'], now);
  if (!withState || !present(object['state'])) return { ident, events };
  const state = object['state'];
  if (!isPlainObject(state)) throw badBody('state: expected an object (the state returned by a previous call)');
  if (!present(state['internal_state'])) throw badBody('state.internal_state: missing; the state is invalid');
  return { ident, events, internalState: state['internal_state'] };
}

/** D21: exactly one of `user_id`, `alias`, `aliases`; `null` counts as absent. */
function parseIdent(body: Readonly<Record<string, unknown>>): StatelessIdent {
  const given = (['user_id', 'alias', 'aliases'] as const).filter((field) => present(body[field]));
  if (given.length !== 1) {
    throw badBody(
      given.length === 0
        ? 'user_id: one of user_id, alias or aliases is required'
        : `${given.join(', ')}: exactly one of user_id, alias or aliases may be given`,
    );
  }
  switch (given[0]) {
    case 'user_id':
      return { user_id: requireUuid(body['user_id'], 'user_id') };
    case 'alias': {
      const alias = validateAlias(body['alias'], 'alias', false);
      return { alias: { tag: alias.tag, id: alias.id } };
    }
    default:
      return { aliases: validateAliases(body['aliases'], 'aliases', true) };
  }
}

/** D21: `events` 0..10 (absent or null: none); each event checked as a tracked event would be (D29). */
function parseEvents(value: unknown, now: Date): SegmentationEvent[] {
  if (!present(value)) return [];
  if (!Array.isArray(value)) throw badBody('events: expected an array');
  if (value.length > MAX_SEGMENTATION_EVENTS) {
    throw badBody(`events: at most ${MAX_SEGMENTATION_EVENTS} events per call, got ${value.length}`);
  }
  return value.map((event, index) => parseEvent(event, `events[${index}]`, now));
}

function parseEvent(value: unknown, path: string, now: Date): SegmentationEvent {
  if (!isPlainObject(value)) throw badBody(`${path}: expected an object`);
  if (!present(value['name'])) throw badBody(`${path}.name: required`);
  if (!present(value['time'])) throw badBody(`${path}.time: required`);
  // The track rules (D29) apply: these events are published to the same ingestion (spec Events rule 4).
  try {
    const input = validateTrackBody(
      {
        name: value['name'],
        time: value['time'],
        properties: value['properties'],
        session_id: value['session_id'],
        view_id: value['view_id'],
        user_id: PLACEHOLDER_USER,
      },
      now,
    );
    const event: { -readonly [K in keyof SegmentationEvent]: SegmentationEvent[K] } = {
      name: input.name,
      time: input.time,
      timeMs: input.timeMs,
      properties: input.properties,
    };
    if (input.session_id !== undefined) event.session_id = input.session_id;
    if (input.view_id !== undefined) event.view_id = input.view_id;
    return event;
  } catch (error) {
    if (error instanceof ServiceError && error.code === 1002) throw badBody(`${path}.${error.detail ?? 'invalid'}`);
    throw error;
  }
}

/** The engine's view of the events (E1: arrival order). */
export function toEngineEvents(events: readonly SegmentationEvent[]): EngineEvent[] {
  return events.map(toEngineEvent);
}

/** The ingestion's view (the one event model, server/domain/events/record.ts): each event gets a fresh id. */
export function toNewEvents(events: readonly SegmentationEvent[], newId: () => string): NewEvent[] {
  // The server minted the ids, so no stored event can carry them yet: the pipeline skips the retry lookup (D29).
  return events.map((event) => newEvent(event, newId));
}
