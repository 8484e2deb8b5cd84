// The bytes a task and its reply cross the thread boundary as (executor.ts, worker.ts): msgpack in one buffer of its
// own, transferred, not cloned. Packing a task costs the main thread about half of what structured clone costs for
// the same objects (events with their properties, imported data), and the receiving side unpacks.

import { Packr, Unpackr } from 'msgpackr';

const packr = new Packr({ useRecords: false, variableMapSize: true });
const unpackr = new Unpackr({ useRecords: false, mapsAsObjects: true, copyBuffers: true });

/** The message in a buffer of its own (msgpackr answers views of a shared one), ready to transfer. */
export function packMessage(value: unknown): Uint8Array {
  return new Uint8Array(packr.pack(value));
}

export function unpackMessage<T>(bytes: Uint8Array): T {
  return unpackr.unpack(bytes) as T;
}
