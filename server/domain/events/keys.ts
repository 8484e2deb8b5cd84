// Store keys of the events area (server/store/layout.ts) and the partitioning of users: the partition log `l!`
// (transitions), each partition's last sequence `ps!`, the per-user arrival index `e!` (the record), the time index
// `et!`, client ids `ei!` and snapshots `s!`.

import { key, keyPart, scanPrefix, seqPart } from '../../store/layout.js';

/** Shift of epoch ms in time keys (2^46 ms, before year 0000), so that every time D3 accepts (years 0000..9999)
 * encodes as a non-negative integer below 2^53; times outside are clamped (only bounds of reads can be). */
const TIME_OFFSET = 2 ** 46;
const MAX_TIME = 2 ** 53 - 1 - TIME_OFFSET;

/** A time as a fixed-width key part that sorts in time order, years before 1970 included. */
export function timePart(ms: number): string {
  return seqPart(Math.min(Math.max(Math.floor(ms), -TIME_OFFSET), MAX_TIME) + TIME_OFFSET);
}

/** Reverses timePart. */
export function fromTimePart(part: string): number {
  return parseInt(part, 16) - TIME_OFFSET;
}

export const logKey = (partition: number, seq: number): string => key('l', seqPart(partition), seqPart(seq));
export const logPrefix = (partition: number): string => scanPrefix('l', seqPart(partition));
export const partitionSeqKey = (partition: number): string => key('ps', seqPart(partition));
export const userEventKey = (org: string, user: string, seq: number): string => key('e', org, user, seqPart(seq));
export const userEventPrefix = (org: string, user: string): string => scanPrefix('e', org, user);
export const timeIndexKey = (org: string, user: string, timeMs: number, seq: number): string =>
  key('et', org, user, timePart(timeMs), seqPart(seq));
export const timeIndexPrefix = (org: string, user: string): string => scanPrefix('et', org, user);
/** The time index entries of a user's events at exactly `timeMs` (any sequence). */
export const timeIndexAtPrefix = (org: string, user: string, timeMs: number): string => scanPrefix('et', org, user, timePart(timeMs));
export const clientIdKey = (org: string, user: string, eventId: string): string =>
  key('ei', org, user, keyPart(eventId));
export const snapshotKey = (org: string, user: string): string => key('s', org, user);

/** The exclusive upper bound of a scan prefix ending in '!': the same prefix ending in '"', the next character.
 * It bounds the prefix in UTF-16 and UTF-8 byte order alike. */
export function prefixUpperBound(prefix: string): string {
  return prefix.slice(0, -1) + '"';
}

/** The sequence number at the end of a key (`...!{seqPart}`). */
export function seqOfKey(storeKey: string): number {
  return parseInt(storeKey.slice(storeKey.lastIndexOf('!') + 1), 16);
}

/**
 * The partition that owns a user: FNV-1a (32 bit) of `org!user`, modulo the partition count. Stable across
 * processes and machines; the partition count is fixed when the data directory is created, so a user's log
 * sequence numbers only grow.
 */
export function partitionOf(org: string, user: string, partitions: number): number {
  // FNV-1a over `${org}!${user}`, read in place (no joined string to build and flatten per call).
  let hash = 0x811c9dc5;
  for (let i = 0; i < org.length; i++) hash = Math.imul(hash ^ org.charCodeAt(i), 0x01000193);
  hash = Math.imul(hash ^ 0x21, 0x01000193); // '!'
  for (let i = 0; i < user.length; i++) hash = Math.imul(hash ^ user.charCodeAt(i), 0x01000193);
  return (hash >>> 0) % partitions;
}
