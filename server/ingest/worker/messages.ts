// The bytes a task and its reply cross the thread boundary as (executor.ts, worker.ts): msgpack in one buffer of its
// own, transferred, not cloned. Packing a task costs the main thread about half of what structured clone costs for
// the same objects (events with their properties, imported data), and the receiving side unpacks. Keys `__proto_...`
// cross escaped (server/msgpack-keys.ts), so an event's properties reach the owner as they were tracked.

import { Packr, Unpackr } from 'msgpackr';
import { packKeepingKeys, restoreKeys } from '../../msgpack-keys.js';

const packr = new Packr({ useRecords: false, variableMapSize: true });
const unpackr = new Unpackr({ useRecords: false, mapsAsObjects: true, copyBuffers: true });

const pack = (value: unknown): Buffer => packr.pack(value);

/** The message in a buffer of its own (msgpackr answers views of a shared one), ready to transfer. */
export function packMessage(value: unknown): Uint8Array {
  return new Uint8Array(packKeepingKeys(pack, value));
}

export function unpackMessage<T>(bytes: Uint8Array): T {
  return restoreKeys(bytes, unpackr.unpack(bytes) as T);
}
