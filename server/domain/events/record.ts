// The one event model of the server (issue 12): an event as the routes hand it to ingestion (`NewEvent`, its time
// parsed once, when the body was validated), as stored (`StoredEvent`: plus its user and arrival sequence), as
// answered to clients (`EventRecord`), and the partition log's entries; every conversion between them and to the
// engine's event is in this module.

import type { EngineEvent } from '../../../engine/api.js';
import { decodeFirstValue } from '../../store/values.js';
import { readEngineEvents } from './engine-reader.js';
import { mintEventId } from './event-id.js';

/** What an event is made of, however it arrived (a track body, a segmentation call): validated, time parsed. */
export interface EventFields {
  readonly name: string;
  /** UTC ISO 8601 with milliseconds (D3). */
  readonly time: string;
  /** The same instant in epoch ms: parsed once, where the body was validated. */
  readonly timeMs: number;
  readonly properties: Readonly<Record<string, unknown>>;
  readonly session_id?: string;
  readonly view_id?: string;
}

/** An event ready to append: validated (D29), schema-checked (D30); its user travels with the append. */
export interface NewEvent extends EventFields {
  /** The client's id (D29 safe retries) or a fresh one. */
  readonly id: string;
  /** The server minted `id` for this append (the client gave none): no stored record can carry it, so the tick
   * skips the idempotency lookup (D29). Its `ei!` entry is still written: a client may retry with it later. */
  readonly minted?: boolean;
  /**
   * The caller looked this id up for this user in the store, found nothing, while holding `holdRecentIds()` with
   * this mark: the tick then asks only the ids committed since (D29, one lookup per client id).
   */
  readonly checked?: number;
}

/**
 * A new event from validated fields: the client's id (`checked` when the caller looked it up), or one minted with
 * its time (event-id.ts).
 */
export function newEvent(fields: EventFields & { readonly id?: string | undefined }, newId: () => string, checked?: number): NewEvent {
  const event: { -readonly [K in keyof NewEvent]: NewEvent[K] } = {
    id: fields.id ?? mintEventId(fields.timeMs, newId()),
    name: fields.name,
    time: fields.time,
    timeMs: fields.timeMs,
    properties: fields.properties,
  };
  // D29: an id the server mints cannot be stored yet; the pipeline skips its idempotency lookup.
  if (fields.id === undefined) event.minted = true;
  else if (checked !== undefined) event.checked = checked;
  copyOptionalIds(event, fields);
  return event;
}

/** An event's optional session and view ids onto a record being built: present ones copied, absent ones left out. */
function copyOptionalIds(target: { session_id?: string; view_id?: string }, source: { readonly session_id?: string; readonly view_id?: string }): void {
  if (source.session_id !== undefined) target.session_id = source.session_id;
  if (source.view_id !== undefined) target.view_id = source.view_id;
}

/** The stored form of a user's new event at `seq` (no parsing: the time was parsed on arrival). */
export function toStoredEvent(user: string, event: NewEvent, seq: number): StoredEvent {
  const stored: { -readonly [K in keyof StoredEvent]: StoredEvent[K] } = {
    id: event.id,
    user_id: user,
    name: event.name,
    time: event.time,
    properties: event.properties,
    seq,
    timeMs: event.timeMs,
  };
  copyOptionalIds(stored, event);
  return stored;
}

/**
 * A record as its `e!` value holds it (server/store/README.md "The record's stored fields"): without `user_id` and
 * `seq`, which its key gives, and `time`, which is always `new Date(timeMs).toISOString()` (validate.ts, D3). Values
 * written before this layout are whole `StoredEvent`s (they carry `user_id`); readers take both (`fromRecordValue`).
 */
export interface RecordValue {
  readonly id: string;
  readonly name: string;
  readonly timeMs: number;
  readonly properties: Readonly<Record<string, unknown>>;
  readonly session_id?: string;
  readonly view_id?: string;
}

/** What an `e!` value's record may be: this layout's, or a whole record written before it. */
export type StoredRecordValue = RecordValue | StoredEvent;

/** The value a stored record is written as (`RecordValue`). */
export function toRecordValue(stored: StoredEvent): RecordValue {
  const value: { -readonly [K in keyof RecordValue]: RecordValue[K] } = {
    id: stored.id,
    name: stored.name,
    timeMs: stored.timeMs,
    properties: stored.properties,
  };
  copyOptionalIds(value, stored);
  return value;
}

/** The stored record of a user's `e!` value at `seq` (its key's user and sequence): as written, or rebuilt. */
export function fromRecordValue(value: StoredRecordValue, user: string, seq: number): StoredEvent {
  if ('user_id' in value) return value;
  const stored: { -readonly [K in keyof StoredEvent]: StoredEvent[K] } = {
    id: value.id,
    user_id: user,
    name: value.name,
    time: new Date(value.timeMs).toISOString(),
    properties: value.properties,
    seq,
    timeMs: value.timeMs,
  };
  copyOptionalIds(stored, value);
  return stored;
}

/** The wire record: `time` is UTC ISO 8601 with milliseconds (D3). */
export interface EventRecord {
  readonly id: string;
  readonly user_id: string;
  readonly name: string;
  readonly time: string;
  readonly properties: Readonly<Record<string, unknown>>;
  readonly session_id?: string;
  readonly view_id?: string;
}

/** A record as the store holds it: plus the partition log sequence it arrived at and its time in epoch ms. */
export interface StoredEvent extends EventRecord {
  readonly seq: number;
  readonly timeMs: number;
}

/** A membership change logged with the event that caused it (ARCHITECTURE "The ingest path"). */
export interface LoggedTransition {
  readonly cohort: number;
  readonly kind: 'entered' | 'exited';
  /** Effective time of the causing event (E1), epoch ms. */
  readonly time: number;
}

/**
 * One entry of a partition log: the transitions an event caused (the event itself is `e!{org}!{user}!{seq}` at the
 * entry's sequence: an event that caused none has no entry), or transitions alone (a catch-up, a re-evaluation).
 * Entries written before this layout carry the whole record as `event` (older data directories).
 */
export type LogEntry<T = LoggedTransition> =
  | { readonly kind: 'event'; readonly org: string; readonly user: string; readonly transitions: readonly T[]; readonly event?: StoredEvent }
  | { readonly kind: 'transitions'; readonly org: string; readonly user: string; readonly transitions: readonly T[] };

/** The record as answered to clients: the stored extras removed, absent optionals left out. */
export function toWireRecord(stored: StoredEvent): EventRecord {
  const record: { -readonly [K in keyof EventRecord]: EventRecord[K] } = {
    id: stored.id,
    user_id: stored.user_id,
    name: stored.name,
    time: stored.time,
    properties: stored.properties,
  };
  copyOptionalIds(record, stored);
  return record;
}

/** The engine's view of an event, new or stored, of any layout (epoch-ms time; the ISO `time` is not read). */
export function toEngineEvent(event: Omit<EventFields, 'time'>): EngineEvent {
  return {
    name: event.name,
    time: event.timeMs,
    properties: event.properties,
    session_id: event.session_id ?? null,
    view_id: event.view_id ?? null,
  };
}

/**
 * Stored records (`StoredRecordValue`) in their stored bytes, one after another: a history as read from the store
 * (`Store.encodedValues`), decoded by the thread that replays it, so the reading thread neither decodes nor
 * re-encodes it for the hand-off.
 */
export interface PackedEvents {
  readonly bytes: Uint8Array;
  readonly count: number;
}

/**
 * The engine's events of packed stored records, in their order (engine-reader.ts: what decodeValues then
 * toEngineEvent give); with `keys` (a plan's eventPropertyKeys), only those top-level properties are built.
 */
export function unpackEngineEvents(packed: PackedEvents, keys?: ReadonlySet<string>): EngineEvent[] {
  return readEngineEvents(
    packed.bytes,
    (bytes, start) => {
      const { value, end } = decodeFirstValue<StoredRecordValue>(bytes, start);
      return { event: toEngineEvent(value), end };
    },
    keys,
  );
}
