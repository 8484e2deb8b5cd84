// The events area (D29, D31): event records, the partition log and per-user indexes (batch builders and reads),
// and track-body validation. Public surface only; tests may import internals.

export type { EventFields, EventRecord, LogEntry, LoggedTransition, NewEvent, PackedEvents, RecordValue, StoredEvent, StoredRecordValue } from './record.js';
export { fromRecordValue, newEvent, toEngineEvent, toRecordValue, toStoredEvent, toWireRecord, unpackEngineEvents } from './record.js';
export { partitionOf, timePart } from './keys.js';
export { mintEventId, mintedTime, needsIdIndex } from './event-id.js';
export type { EventEntry, Snapshot } from './ops.js';
export { eventOps, partitionSeqOps, pushEventOps, pushEventRunOps, snapshotOps } from './ops.js';
export type { EventPage, EventPageOptions, EventReadOptions, LogRecord } from './read.js';
export {
  MAX_EVENTS_PER_READ,
  findByClientId,
  findByMintedTime,
  hasEvents,
  lastSeq,
  readPartitionLog,
  readSnapshot,
  readUserEventPage,
  readUserEvents,
  replayUserEvents,
} from './read.js';
export type { TrackInput } from './validate.js';
export { MAX_CLOCK_SKEW_MS, buildEventRecord, validateTrackBody } from './validate.js';
