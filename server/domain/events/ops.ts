// Batch builders of the events area: they RETURN store operations so that the ingest pipeline commits a whole tick
// (events, transitions, schema growth, snapshots) in one group-committed batch (ARCHITECTURE "The ingest path").

import type { BatchOp } from '../../store/contract.js';
import {
  clientIdKey,
  partitionSeqKey,
  snapshotKey,
  timeIndexKey,
  userEventKey,
} from './keys.js';
import { encodeValue } from '../../store/values.js';
import { blockOfEncoded, blockParts } from './blocks.js';
import { needsIdIndex } from './event-id.js';
import { toRecordValue, type StoredEvent } from './record.js';

export interface EventEntry {
  readonly org: string;
  /** The stored event: its `seq` is the next sequence of the partition (1, 2, ...), which the partition owner assigns. */
  readonly event: StoredEvent;
}

/** A user's engine state as snapshotted: the state and the partition log sequence it covers. */
export interface Snapshot<S = unknown> {
  readonly seq: number;
  readonly state: S;
}


/**
 * The writes of one event (server/store/README.md has the reasoning): the record once (`toRecordValue`: without
 * what its key and time give), under the per-user arrival index `e!` (replays after a snapshot's sequence,
 * retries); the time index `et!` (reads by time with ties, D29, D39) and the event id `ei!` (safe retries, D29),
 * except for an id minted with the event's own time, which a retry finds through the time index (event-id.ts). The
 * transitions it caused go to the global transitions log (server/ingest/tick/commit-log.ts); the partition's last
 * sequence is written once per batch (`partitionSeqOps`).
 */
export function eventOps(entry: EventEntry): BatchOp[] {
  const ops: BatchOp[] = [];
  pushEventOps(ops, entry.org, entry.event);
  return ops;
}

/** `eventOps` appended to a batch being built (the ingest path: no array per event). */
export function pushEventOps(ops: BatchOp[], org: string, stored: StoredEvent): void {
  const { seq, user_id: user, timeMs, id } = stored;
  ops.push(
    { type: 'put', key: userEventKey(org, user, seq), value: toRecordValue(stored) },
    { type: 'put', key: timeIndexKey(org, user, timeMs, seq), value: seq },
  );
  if (needsIdIndex(id, timeMs)) ops.push({ type: 'put', key: clientIdKey(org, user, id), value: seq });
}

/**
 * The writes of one append's events of one user, consecutive sequences (ascending): as `pushEventOps` for one event;
 * for several, the records go as blocks (blocks.ts `blockParts`: one `e!` value each, keyed by its last sequence)
 * and the two indexes per event as before.
 */
export function pushEventRunOps(ops: BatchOp[], org: string, run: readonly StoredEvent[]): void {
  if (run.length === 1) {
    pushEventOps(ops, org, run[0] as StoredEvent);
    return;
  }
  const encoded = run.map((record) => encodeValue(toRecordValue(record)));
  for (const [start, end] of blockParts(encoded.map((bytes) => bytes.byteLength))) {
    const last = run[end - 1] as StoredEvent;
    const value = end - start === 1 ? toRecordValue(last) : blockOfEncoded(run.slice(start, end).map((record) => record.seq), encoded.slice(start, end));
    ops.push({ type: 'put', key: userEventKey(org, last.user_id, last.seq), value });
  }
  for (const { seq, user_id: user, timeMs, id } of run) {
    ops.push({ type: 'put', key: timeIndexKey(org, user, timeMs, seq), value: seq });
    if (needsIdIndex(id, timeMs)) ops.push({ type: 'put', key: clientIdKey(org, user, id), value: seq });
  }
}

/** The last sequence a batch took in a partition (`ps!`): where the partition's sequences go on after a restart. */
export function partitionSeqOps(partition: number, seq: number): BatchOp[] {
  return [{ type: 'put', key: partitionSeqKey(partition), value: seq }];
}

/** A user's state snapshot `s!`, stamped with the log sequence it covers. */
export function snapshotOps<S>(org: string, user: string, seq: number, state: S): BatchOp[] {
  const snapshot: Snapshot<S> = { seq, state };
  return [{ type: 'put', key: snapshotKey(org, user), value: snapshot }];
}
