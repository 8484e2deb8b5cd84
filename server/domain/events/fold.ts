// Folding a user's single records into blocks (blocks.ts), after the fact: the track route appends one event per
// call, so a history arrives as one `e!` value per event; the ingest pipeline asks for a fold of a user's latest
// events every `foldEvery` of them (server/ingest/fold.ts), and this builds its writes. Events never change and no
// other writer rewrites an existing `e!` key (the tick only adds keys after the last), so a fold is a pure
// re-layout: the same records, in the same order, under fewer keys, in one atomic batch; a reader sees either.

import type { BatchOp, Store } from '../../store/contract.js';
import { blockOfEncoded, blockParts, isEncodedBlock, recordCount } from './blocks.js';
import { seqOfKey, userEventKey, userEventPrefix } from './keys.js';

/** A fold of a user's last `events` stored events, through sequence `throughSeq`. */
export interface FoldRequest {
  readonly org: string;
  readonly user: string;
  readonly throughSeq: number;
  readonly events: number;
}

/**
 * The writes that fold the single records among a user's last `events` events through `throughSeq` into blocks:
 * each run of at least two consecutive single records (not split by a block) becomes blocks (`blockParts`), each put
 * under its last record's key, the block's other keys deleted. Read backwards from `throughSeq`, stopping once
 * `events` events are seen. Two folds of one user must not run at once (the folder serializes them): both could
 * rewrite the same run.
 */
export async function foldOps(store: Store, request: FoldRequest): Promise<{ ops: BatchOp[]; folded: number }> {
  const { org, user, throughSeq, events } = request;
  // Stored bytes with their keys: a record's bytes go into its block as they are (no decoding, no encoding again).
  const range = { gte: userEventPrefix(org, user), lte: userEventKey(org, user, throughSeq), reverse: true, limit: Math.max(0, events) };
  const found: (readonly [string, Uint8Array])[] = [];
  let seen = 0;
  for (const entry of await store.encodedEntries(range)) {
    found.push(entry);
    seen += recordCount(entry[1]);
    if (seen >= events) break;
  }
  found.reverse();
  const ops: BatchOp[] = [];
  let folded = 0;
  let run: (readonly [string, Uint8Array])[] = [];
  for (const entry of found) {
    if (!isEncodedBlock(entry[1])) {
      run.push(entry);
      continue;
    }
    folded += pushRunOps(ops, run);
    run = [];
  }
  folded += pushRunOps(ops, run);
  return { ops, folded };
}

/**
 * Pushes the writes that fold `run` (consecutive single records, oldest first) into blocks; returns the records
 * folded. A module function rather than a closure of foldOps: V8 keeps a closure's optimized code only while a
 * closure holding it lives, so one made per fold was compiled again after every collection (docs/performance.md).
 */
function pushRunOps(ops: BatchOp[], run: readonly (readonly [string, Uint8Array])[]): number {
  const sizes: number[] = [];
  for (const [, bytes] of run) sizes.push(bytes.byteLength);
  let folded = 0;
  for (const [start, end] of blockParts(sizes)) {
    if (end - start < 2) continue;
    const lastKey = (run[end - 1] as (typeof run)[number])[0];
    const seqs: number[] = [];
    const parts: Uint8Array[] = [];
    for (let i = start; i < end; i++) {
      const [key, bytes] = run[i] as (typeof run)[number];
      if (key !== lastKey) ops.push({ type: 'del', key });
      seqs.push(seqOfKey(key));
      parts.push(bytes);
    }
    ops.push({ type: 'put', key: lastKey, value: blockOfEncoded(seqs, parts) });
    folded += end - start;
  }
  return folded;
}
