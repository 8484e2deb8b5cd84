// Store keys the ingest pipeline owns (server/store/layout.ts): the partition count `m!partitions`, the
// per-partition audience size counters `sz!{org}!{code}!{partition}` (D19; the total is the sum over partitions) and
// the journal of their changes since they were last written, one `szj!{n}` per store batch (tick/sizes.ts).

import { fromSeqPart, key, scanPrefix, seqPart } from '../store/layout.js';

export const PARTITIONS_KEY = key('m', 'partitions');

export const sizeKey = (org: string, code: number, partition: number): string =>
  key('sz', org, seqPart(code), seqPart(partition));

/** The scan prefix of every size counter. */
export const SIZES_PREFIX = scanPrefix('sz');

/** The journal entry `n` of size counter changes. */
export const sizeJournalKey = (n: number): string => key('szj', seqPart(n));

/** The scan prefix of the size counters' journal. */
export const SIZE_JOURNAL_PREFIX = scanPrefix('szj');

/** Parses a journal key back into its number (undefined: not one). */
export function parseSizeJournalKey(storeKey: string): number | undefined {
  const parts = storeKey.split('!');
  return parts.length === 2 && parts[0] === 'szj' ? fromSeqPart(parts[1] as string) : undefined;
}

/** Parses a size counter key back into its parts (org ids are UUIDs or other '!'-free strings). */
export function parseSizeKey(storeKey: string): { org: string; code: number; partition: number } | undefined {
  const parts = storeKey.split('!');
  if (parts.length !== 4 || parts[0] !== 'sz') return undefined;
  return { org: parts[1] as string, code: fromSeqPart(parts[2] as string), partition: fromSeqPart(parts[3] as string) };
}
