// The event record (spec "Event", D29) as answered to clients, as stored (with its arrival sequence and epoch-ms
// time), the partition log's entries, and the conversions between them and to the engine's event.

import type { EngineEvent } from '../../../engine/api.js';

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
  if (stored.session_id !== undefined) record.session_id = stored.session_id;
  if (stored.view_id !== undefined) record.view_id = stored.view_id;
  return record;
}

/** The engine's view of a stored event (epoch-ms time), for replaying a user's history (ARCHITECTURE backfill). */
export function toEngineEvent(stored: StoredEvent): EngineEvent {
  return {
    name: stored.name,
    time: stored.timeMs,
    properties: stored.properties,
    session_id: stored.session_id ?? null,
    view_id: stored.view_id ?? null,
  };
}
