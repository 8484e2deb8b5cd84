// The encoded form of a user's state (msgpackr): a versioned array of the trackers, member codes, ids of slots not
// yet backfilled, and slot tuples keyed by slot id, so that any plan version can adopt what it knows (SLOTS.md).

import { Packr, Unpackr } from 'msgpackr';
import { EngineError } from '../errors.js';
import { VIEW_GIVEN, VIEW_NONE, UserState, membershipsOf, slotTuplesById } from './user-state.js';

/** Bump when the layout below changes; decoders accept only versions they know. */
export const STATE_FORMAT = 1;

const packr = new Packr({ useRecords: false, variableMapSize: true });
const unpackr = new Unpackr({ useRecords: false, mapsAsObjects: true, copyBuffers: true });

/*
 * Layout (format 1; slot tuples: numbers, NaN as null, then objects; see SLOTS.md):
 * [format, count, time, sessionKey, sessionStartIndex, sessionStartTime,
 *  viewKind, viewKey, viewStartIndex, viewStartTime, memberCodes[], freshIds[], slotIds[], slotData[], eventTime?]
 * `eventTime` (the latest event's effective time, E2/E20) is written only when a re-evaluation moved `time` past it.
 */
const FIELDS = 14;

export function encodeState(state: UserState): Uint8Array {
  const byId = slotTuplesById(state);
  const ids = [...byId.keys()];
  const data = ids.map((id) => byId.get(id));
  const packed = packr.pack([
    STATE_FORMAT,
    state.count,
    state.time,
    state.sessionKey,
    state.sessionStartIndex,
    state.sessionStartTime,
    state.viewKind,
    state.viewKey,
    state.viewStartIndex,
    state.viewStartTime,
    membershipsOf(state),
    [...state.fresh],
    ids,
    data,
    ...(state.eventTime !== state.time ? [state.eventTime] : []),
  ]);
  // A copy: msgpackr hands out views of a shared buffer.
  return new Uint8Array(packed);
}

export function decodeState(bytes: Uint8Array): UserState {
  let value: unknown;
  try {
    // A fresh view: msgpackr caches a DataView on the object it reads, which should not be the caller's.
    value = unpackr.unpack(bytes.subarray());
  } catch (error) {
    throw bad('not msgpack', error);
  }
  if (!Array.isArray(value) || (value.length !== FIELDS && value.length !== FIELDS + 1)) throw bad('not a state array');
  const [format, count, time, sessionKey, sessionStartIndex, sessionStartTime, viewKind, viewKey, viewStartIndex, viewStartTime, members, fresh, ids, data] =
    value as unknown[];
  const eventTime: unknown = value.length > FIELDS ? value[FIELDS] : time;
  if (format !== STATE_FORMAT) throw bad(`unknown state format ${String(format)}`);
  if (!isCount(count) || !isTime(time) || !isCount(sessionStartIndex) || !isTime(sessionStartTime)) throw bad('bad trackers');
  if (!isCount(viewStartIndex) || !isTime(viewStartTime)) throw bad('bad trackers');
  if (!isTime(eventTime) || eventTime > time) throw bad('bad event time');
  if (!(sessionKey === null || typeof sessionKey === 'string')) throw bad('bad session key');
  if (typeof viewKind !== 'number' || viewKind < VIEW_NONE || viewKind > VIEW_GIVEN || !Number.isInteger(viewKind)) throw bad('bad view kind');
  if (!(viewKey === null || typeof viewKey === 'string')) throw bad('bad view key');
  if (!isIntegerList(members) || !isIntegerList(fresh) || !isIntegerList(ids)) throw bad('bad lists');
  if (!Array.isArray(data) || data.length !== ids.length) throw bad('bad slot data');

  const state = new UserState();
  state.count = count;
  state.time = time;
  state.prevTime = time;
  state.eventTime = eventTime;
  state.sessionKey = sessionKey;
  state.sessionStartIndex = sessionStartIndex;
  state.sessionStartTime = sessionStartTime;
  state.viewKind = viewKind;
  state.viewKey = viewKey;
  state.viewStartIndex = viewStartIndex;
  state.viewStartTime = viewStartTime;
  state.storedMembers = [...members];
  state.fresh = new Set(fresh);
  // Slot tuples are checked against the plan's definitions when bound (an unusable slot starts over, marked fresh).
  ids.forEach((id, i) => state.stored.set(id, data[i]));
  return state;
}

function bad(message: string, cause?: unknown): EngineError {
  const error = new EngineError('ENGINE_BAD_STATE', `cannot decode user state: ${message}`);
  if (cause !== undefined) (error as { cause?: unknown }).cause = cause;
  return error;
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}

function isTime(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

function isIntegerList(value: unknown): value is number[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'number' && Number.isInteger(item));
}
