// The reads a tick makes before computing: which events are retries of stored ones (D29 safe retries), the state
// of each user not in the cache: a pending snapshot, or the stored snapshot plus the user's later events (lazy
// recovery: a snapshot and the events after its sequence give the exact state; nothing global is replayed), and
// bounded chunks of a user's history (backfill replays, server/backfill/README.md).

import type { EngineEvent } from '../../../engine/api.js';
import { decodeState } from '../../../engine/index.js';
import type { BatchOp, Store } from '../../store/contract.js';
import { findByMintedTime, mintedTime, readSnapshot, replayUserEvents, snapshotOps, toEngineEvent } from '../../domain/events/index.js';
import type { PackedEvents, StoredEvent } from '../../domain/events/index.js';
import { concatValues } from '../../store/values.js';
import { blockRun, isEncodedBlock, readEventsBySeq } from '../../domain/events/blocks.js';
import { clientIdKey, prefixUpperBound, seqOfKey, userEventKey, userEventPrefix } from '../../domain/events/keys.js';

/** The stored records of event ids already appended for their user, by `clientIdKey(org, user, id)`. */
export async function findStoredIds(
  store: Store,
  ids: readonly { readonly org: string; readonly user: string; readonly id: string }[],
): Promise<Map<string, StoredEvent>> {
  const found = new Map<string, StoredEvent>();
  if (ids.length === 0) return found;
  const keys = ids.map(({ org, user, id }) => clientIdKey(org, user, id));
  const seqs = await store.getMany<number>(keys);
  const reads: Promise<void>[] = [];
  seqs.forEach((seq, i) => {
    const id = ids[i];
    if (id === undefined) return;
    if (seq === undefined) {
      // An id of the minted shape may have no `ei!` entry: its event is found at the time it carries (event-id.ts).
      if (mintedTime(id.id) !== undefined) {
        reads.push(
          findByMintedTime(store, id.org, id.user, id.id).then((record) => {
            if (record !== undefined) found.set(keys[i] as string, record);
          }),
        );
      }
      return;
    }
    // Exact keys first: a single record or a block's last one; an event inside a block costs a seek (blocks.ts).
    reads.push(
      readEventsBySeq(store, id.org, id.user, [seq]).then(([record]) => {
        // An index entry without its record cannot happen (one batch writes both); treat it as a new id if it does.
        if (record !== undefined) found.set(keys[i] as string, record);
      }),
    );
  });
  await Promise.all(reads);
  return found;
}

/**
 * A snapshot's stored state: the encoded engine state, the events it has seen and the plan version it was last
 * caught up with (server/backfill/README.md). Snapshots written before backfill hold the bare bytes (mark 0).
 */
export interface UserSnapshot {
  readonly state: Uint8Array;
  readonly count: number;
  readonly mark: number;
}

/** The snapshot `s!` of a user's state. */
export function userSnapshotOps(org: string, user: string, seq: number, bytes: Uint8Array, count: number, mark: number): BatchOp[] {
  const snapshot: UserSnapshot = { state: bytes, count, mark };
  return snapshotOps(org, user, seq, snapshot);
}

export interface LoadedState {
  readonly bytes: Uint8Array | null;
  /** The log sequence the state covers once `replay` has run. */
  readonly seq: number;
  /** Stored events after the snapshot, in arrival order (E1). */
  readonly replay: readonly EngineEvent[];
  /** Events the state has seen once `replay` has run. */
  readonly count: number;
  /** The snapshot's mark (0 without one). */
  readonly mark: number;
  readonly snapshotted: boolean;
}

/** A user's snapshot (`s!`, encoded engine state) and the events stored after its sequence. */
export async function loadStoredState(store: Store, org: string, user: string): Promise<LoadedState> {
  const snapshot = await readSnapshot<UserSnapshot | Uint8Array>(store, org, user);
  const afterSeq = snapshot?.seq ?? 0;
  const replay: EngineEvent[] = [];
  let seq = afterSeq;
  for await (const event of replayUserEvents(store, org, user, afterSeq)) {
    replay.push(toEngineEvent(event));
    seq = event.seq;
  }
  if (snapshot === undefined) return { bytes: null, seq, replay, count: replay.length, mark: 0, snapshotted: false };
  const stored = snapshot.state;
  if (stored instanceof Uint8Array) {
    const bytes = toBytes(stored);
    return { bytes, seq, replay, count: decodeState(bytes).count + replay.length, mark: 0, snapshotted: true };
  }
  return { bytes: toBytes(stored.state), seq, replay, count: stored.count + replay.length, mark: stored.mark, snapshotted: true };
}

export interface HistoryChunk {
  /** Decoded by the thread that replays them (the owner). */
  readonly events: PackedEvents;
  /** The sequence of the last event read (`afterSeq` when none). */
  readonly lastSeq: number;
  /** Fewer than `limit` events were left: the chunk ends the history (up to `untilSeq`). */
  readonly done: boolean;
}

/**
 * At most `limit` of a user's stored events after `afterSeq` (and at or before `untilSeq`), in arrival order. Stored
 * values are single records or blocks (domain/events/blocks.ts); the first block may hold records at or before
 * `afterSeq` (a chunk's or a snapshot's end inside it), skipped by its sequences. `untilSeq` is the sequence of a
 * user's state, which covers every event stored for the user (its lane appends the next ones): no block holds events
 * on both sides of it, so the range's bound is exact.
 */
export async function readHistoryChunk(
  store: Store,
  org: string,
  user: string,
  afterSeq: number,
  limit: number,
  untilSeq = Number.MAX_SAFE_INTEGER,
): Promise<HistoryChunk> {
  const prefix = userEventPrefix(org, user);
  const upper = untilSeq >= Number.MAX_SAFE_INTEGER ? prefixUpperBound(prefix) : userEventKey(org, user, untilSeq + 1);
  // Each value holds at least one event, so `limit` values hold at least `limit` events when there are that many.
  const entries = await store.encodedEntries({ gt: userEventKey(org, user, afterSeq), lt: upper, limit });
  return historyChunkOf(entries, afterSeq, limit);
}

/**
 * At most `limit` events after `afterSeq` of a user's stored entries (`e!` keys with their records or blocks), in
 * arrival order. A single record's sequence is its key's (ops.ts stores it under `userEventKey(.., seq)`), so the
 * last one is not decoded for it; a block's last sequence is read from the block.
 */
export function historyChunkOf(entries: ReadonlyArray<readonly [string, Uint8Array]>, afterSeq: number, limit: number): HistoryChunk {
  const parts: Uint8Array[] = [];
  let count = 0;
  let lastSeq = afterSeq;
  for (const [entryKey, bytes] of entries) {
    if (count >= limit) break;
    if (!isEncodedBlock(bytes)) {
      parts.push(bytes);
      count++;
      lastSeq = seqOfKey(entryKey);
      continue;
    }
    const run = blockRun(bytes, afterSeq, limit - count);
    if (run.count === 0) continue;
    parts.push(run.bytes);
    count += run.count;
    lastSeq = run.lastSeq as number;
  }
  return {
    events: { bytes: parts.length === 1 ? (parts[0] as Uint8Array) : concatValues(parts), count },
    lastSeq,
    done: count < limit,
  };
}

/** Stores hand back Uint8Array (memory clones, LevelDB views); a Buffer is narrowed to a plain view. */
function toBytes(value: Uint8Array): Uint8Array {
  return value.constructor === Uint8Array ? value : new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
}
