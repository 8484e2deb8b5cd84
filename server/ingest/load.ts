// The reads a tick makes before computing: which events are retries of stored ones (D29 safe retries), and the
// state of each user not in the cache: a pending snapshot, or the stored snapshot plus the user's later events
// (lazy recovery: a snapshot and the events after its sequence give the exact state; nothing global is replayed).

import type { EngineEvent } from '../../engine/api.js';
import type { Store } from '../store/contract.js';
import { readSnapshot, replayUserEvents, toEngineEvent } from '../domain/events/index.js';
import type { StoredEvent } from '../domain/events/index.js';
import { clientIdKey, userEventKey } from '../domain/events/keys.js';

/** The stored records of event ids already appended for their user, by `clientIdKey(org, user, id)`. */
export async function findStoredIds(
  store: Store,
  ids: readonly { readonly org: string; readonly user: string; readonly id: string }[],
): Promise<Map<string, StoredEvent>> {
  const found = new Map<string, StoredEvent>();
  if (ids.length === 0) return found;
  const keys = ids.map(({ org, user, id }) => clientIdKey(org, user, id));
  const seqs = await store.getMany<number>(keys);
  const hits: { key: string; recordKey: string }[] = [];
  seqs.forEach((seq, i) => {
    const id = ids[i];
    if (seq !== undefined && id !== undefined) hits.push({ key: keys[i] as string, recordKey: userEventKey(id.org, id.user, seq) });
  });
  if (hits.length === 0) return found;
  const records = await store.getMany<StoredEvent>(hits.map((hit) => hit.recordKey));
  records.forEach((record, i) => {
    // An index entry without its record cannot happen (one batch writes both); treat it as a new id if it does.
    if (record !== undefined) found.set((hits[i] as { key: string }).key, record);
  });
  return found;
}

export interface LoadedState {
  readonly bytes: Uint8Array | null;
  /** The log sequence the state covers once `replay` has run. */
  readonly seq: number;
  /** Stored events after the snapshot, in arrival order (E1). */
  readonly replay: readonly EngineEvent[];
}

/** A user's snapshot (`s!`, encoded engine state) and the events stored after its sequence. */
export async function loadStoredState(store: Store, org: string, user: string): Promise<LoadedState> {
  const snapshot = await readSnapshot<Uint8Array>(store, org, user);
  const afterSeq = snapshot?.seq ?? 0;
  const replay: EngineEvent[] = [];
  let seq = afterSeq;
  for await (const event of replayUserEvents(store, org, user, afterSeq)) {
    replay.push(toEngineEvent(event));
    seq = event.seq;
  }
  return { bytes: snapshot === undefined ? null : toBytes(snapshot.state), seq, replay };
}

/** Stores hand back Uint8Array (memory clones, LevelDB views); a Buffer is narrowed to a plain view. */
function toBytes(value: Uint8Array): Uint8Array {
  return value.constructor === Uint8Array ? value : new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
}
