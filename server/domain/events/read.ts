// Reads of the events area: a user's events by time (D29) and in arrival order (replay), the partition log after a
// sequence (recovery), event ids (safe retries, D29), the last sequence, snapshots and checkpoints.

import type { Store } from '../../store/contract.js';
import {
  clientIdKey,
  logKey,
  partitionSeqKey,
  logPrefix,
  prefixUpperBound,
  seqOfKey,
  snapshotKey,
  timeIndexAtPrefix,
  timeIndexPrefix,
  timePart,
  userEventKey,
  userEventPrefix,
} from './keys.js';
import { mintedTime } from './event-id.js';
import { readEventsBySeq, recordsOf, type StoredEventValue } from './blocks.js';
import type { Snapshot } from './ops.js';
import type { LogEntry, LoggedTransition, StoredEvent } from './record.js';

/** The most events one read answers (spec "Limits", D29). */
export const MAX_EVENTS_PER_READ = 1000;

export interface EventReadOptions {
  /** Epoch ms, exclusive: only events after it. */
  readonly from?: number;
  /** Epoch ms, inclusive: only events at or before it. */
  readonly to?: number;
  /** Default and cap: 1000. */
  readonly limit?: number;
}

/**
 * A user's events in ascending time, ties in arrival order (D29): `from` exclusive, `to` inclusive, at most `limit`
 * (the oldest ones after `from`). Times are whole milliseconds, so `> from` is `>= floor(from) + 1`.
 */
export async function readUserEvents(
  store: Store,
  org: string,
  user: string,
  options: EventReadOptions = {},
): Promise<StoredEvent[]> {
  return (await readUserEventPage(store, org, user, options)).events;
}

export interface EventPageOptions extends EventReadOptions {
  /** Continue right after the event this cursor (from an earlier page's `next`) names; see decodeEventCursor. */
  readonly cursor?: string;
}

export interface EventPage {
  readonly events: StoredEvent[];
  /** When more events of the range remain after `events`: the cursor that continues right after the last one. */
  readonly next: string | undefined;
}

/** The part of a time index key after the user's prefix: `{timePart}!{seqPart}`. */
const CURSOR_POSITION = /^[0-9a-f]{14}![0-9a-f]{14}$/;

/**
 * D39: a cursor is the base64url of the position (time, then arrival sequence) of the last event a page returned
 * in the user's time index, so the next page starts right after it, ties in time included. Opaque to clients.
 */
export function encodeEventCursor(position: string): string {
  return Buffer.from(position, 'utf8').toString('base64url');
}

/** The position a cursor names, or undefined when it is not one encodeEventCursor makes. */
export function decodeEventCursor(cursor: string): string | undefined {
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) return undefined;
  const position = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!CURSOR_POSITION.test(position) || encodeEventCursor(position) !== cursor) return undefined;
  return position;
}

/**
 * One page of a user's events (D29, D39): as readUserEvents, starting right after `cursor` when given (and still
 * after `from`), with the cursor of the next page when more events of the range remain. Throws a RangeError for a
 * cursor decodeEventCursor refuses (the caller answers it as a bad parameter).
 */
export async function readUserEventPage(
  store: Store,
  org: string,
  user: string,
  options: EventPageOptions = {},
): Promise<EventPage> {
  const limit = Math.min(options.limit ?? MAX_EVENTS_PER_READ, MAX_EVENTS_PER_READ);
  const after = options.cursor === undefined ? undefined : decodeEventCursor(options.cursor);
  if (options.cursor !== undefined && after === undefined) throw new RangeError('cursor: not a cursor of this API');
  if (limit <= 0) return { events: [], next: undefined };
  const prefix = timeIndexPrefix(org, user);
  const gte = options.from === undefined ? prefix : prefix + timePart(Math.floor(options.from) + 1);
  const lt = options.to === undefined ? prefixUpperBound(prefix) : prefix + timePart(Math.floor(options.to) + 1);
  if (gte >= lt) return { events: [], next: undefined };
  const gt = after === undefined ? undefined : prefix + after;
  const range = gt !== undefined && gt >= gte ? { gt, lt } : { gte, lt };
  const indexKeys: string[] = [];
  // One more than the page: whether it exists decides whether there is a next page.
  for await (const [indexKey] of store.iterate<number>({ ...range, limit: limit + 1 })) indexKeys.push(indexKey);
  const page = indexKeys.slice(0, limit);
  const last = page[page.length - 1];
  const next = indexKeys.length > limit && last !== undefined ? encodeEventCursor(last.slice(prefix.length)) : undefined;
  const events = await readEventsBySeq(store, org, user, page.map(seqOfKey));
  return { events: events.filter((event): event is StoredEvent => event !== undefined), next };
}

/** A user's events in arrival order (the order the engine saw them, E1); after a sequence when given. */
export async function* replayUserEvents(
  store: Store,
  org: string,
  user: string,
  afterSeq = 0,
): AsyncIterable<StoredEvent> {
  const prefix = userEventPrefix(org, user);
  const range = { gt: userEventKey(org, user, afterSeq), lt: prefixUpperBound(prefix) };
  // A value is a record or a block (blocks.ts); the first block may hold records at or before `afterSeq`.
  for await (const [key, value] of store.iterate<StoredEventValue>(range)) yield* recordsOf(key, value, user, afterSeq);
}

/** Whether the user has any stored event. */
export async function hasEvents(store: Store, org: string, user: string): Promise<boolean> {
  const prefix = userEventPrefix(org, user);
  for await (const _ of store.iterate({ gte: prefix, lt: prefixUpperBound(prefix), limit: 1 })) return true;
  return false;
}

export interface LogRecord<T = LoggedTransition> {
  readonly seq: number;
  readonly entry: LogEntry<T>;
}

/** A partition's log entries after `afterSeq`, in sequence order (recovery after the checkpoint). */
export async function* readPartitionLog<T = LoggedTransition>(
  store: Store,
  partition: number,
  afterSeq = 0,
): AsyncIterable<LogRecord<T>> {
  const range = { gt: logKey(partition, afterSeq), lt: prefixUpperBound(logPrefix(partition)) };
  for await (const [entryKey, entry] of store.iterate<LogEntry<T>>(range)) yield { seq: seqOfKey(entryKey), entry };
}

/**
 * The last sequence a partition has taken, 0 when none: its `ps!` key, or the last log key of a data directory
 * written before `ps!` existed (every event had a log entry then), whichever is larger.
 */
export async function lastSeq(store: Store, partition: number): Promise<number> {
  const stored = (await store.get<number>(partitionSeqKey(partition))) ?? 0;
  const prefix = logPrefix(partition);
  for await (const [entryKey] of store.iterate({ gte: prefix, lt: prefixUpperBound(prefix), reverse: true, limit: 1 })) {
    return Math.max(stored, seqOfKey(entryKey));
  }
  return stored;
}

/** The stored record of a user's event id (D29: a repeated id returns it and changes nothing), or undefined. */
export async function findByClientId(
  store: Store,
  org: string,
  user: string,
  eventId: string,
): Promise<StoredEvent | undefined> {
  const seq = await store.get<number>(clientIdKey(org, user, eventId));
  return seq === undefined ? findByMintedTime(store, org, user, eventId) : (await readEventsBySeq(store, org, user, [seq]))[0];
}

/**
 * D29 for an id of the minted shape (event-id.ts), which has no `ei!` entry when it carries its event's own time:
 * the record among the user's events at that time (usually one), or undefined (any other id: undefined at once).
 */
export async function findByMintedTime(store: Store, org: string, user: string, eventId: string): Promise<StoredEvent | undefined> {
  const timeMs = mintedTime(eventId);
  if (timeMs === undefined) return undefined;
  const prefix = timeIndexAtPrefix(org, user, timeMs);
  const seqs: number[] = [];
  for await (const [, seq] of store.iterate<number>({ gte: prefix, lt: prefixUpperBound(prefix) })) seqs.push(seq);
  if (seqs.length === 0) return undefined;
  return (await readEventsBySeq(store, org, user, seqs)).find((record) => record?.id === eventId);
}

export async function readSnapshot<S = unknown>(store: Store, org: string, user: string): Promise<Snapshot<S> | undefined> {
  return store.get<Snapshot<S>>(snapshotKey(org, user));
}

