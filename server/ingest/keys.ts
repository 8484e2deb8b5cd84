// Store keys the ingest pipeline owns (server/store/layout.ts): the partition count `m!partitions` and the
// per-partition audience size counters `sz!{org}!{code}!{partition}` (D19; the total is the sum over partitions).

import { fromSeqPart, key, scanPrefix, seqPart } from '../store/layout.js';

export const PARTITIONS_KEY = key('m', 'partitions');

export const sizeKey = (org: string, code: number, partition: number): string =>
  key('sz', org, seqPart(code), seqPart(partition));

/** The scan prefix of every size counter. */
export const SIZES_PREFIX = scanPrefix('sz');

/** Parses a size counter key back into its parts (org ids are UUIDs or other '!'-free strings). */
export function parseSizeKey(storeKey: string): { org: string; code: number; partition: number } | undefined {
  const parts = storeKey.split('!');
  if (parts.length !== 4 || parts[0] !== 'sz') return undefined;
  return { org: parts[1] as string, code: fromSeqPart(parts[2] as string), partition: fromSeqPart(parts[3] as string) };
}
