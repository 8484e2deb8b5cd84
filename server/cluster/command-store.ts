// The store the control plane's registries write through on a cluster node (issue 15). A replicated command must
// be applied whole or not at all on each node, with the stream sequence it reached, or a node killed in the middle of
// a command would skip the rest of it (or apply its first half twice) after a restart. So inside a command scope
// (scope.ts) every batch is held in an overlay (reads see it, in key order too) and `commit` writes the overlay and
// the applied sequence `m!control-seq` in ONE LevelDB batch. Outside a command, reads and writes go straight through.

import { encodedEntriesOf, encodedValuesOf, skipKeysOf, type BatchOp, type BatchOptions, type RangeOptions, type SkipRange, type Store } from '../store/contract.js';
import { key } from '../store/layout.js';
import { decodeValue, encodeValue } from '../store/values.js';
import { commandSeq } from './scope.js';

/** `m!control-seq`: the last control-stream sequence whose command this store holds (server/store/layout.ts). */
export const CONTROL_SEQ_KEY = key('m', 'control-seq');

/** A pending write: the encoded value, or null for a delete. */
type Pending = Uint8Array | null;

function inRange(k: string, range: RangeOptions): boolean {
  if (range.gt !== undefined && !(k > range.gt)) return false;
  if (range.gte !== undefined && !(k >= range.gte)) return false;
  if (range.lt !== undefined && !(k < range.lt)) return false;
  if (range.lte !== undefined && !(k <= range.lte)) return false;
  return true;
}

export class CommandStore implements Store {
  private overlay: Map<string, Pending> | undefined;
  private sync = false;

  constructor(private readonly inner: Store) {}

  /** The last applied control sequence (0 for a store that applied none). */
  async appliedSeq(): Promise<number> {
    const value = await this.inner.get<number>(CONTROL_SEQ_KEY);
    return typeof value === 'number' ? value : 0;
  }

  /** Starts holding the writes of command `seq`. */
  begin(): void {
    if (this.overlay !== undefined) throw new Error('a command is already being applied');
    this.overlay = new Map();
    this.sync = false;
  }

  /** Writes what command `seq` wrote, with `m!control-seq = seq`, in one batch; the overlay is dropped either way. */
  async commit(seq: number): Promise<void> {
    const overlay = this.overlay ?? new Map<string, Pending>();
    this.overlay = undefined;
    const ops: BatchOp[] = [...overlay].map(([k, bytes]) => (bytes === null ? { type: 'del', key: k } : { type: 'put', key: k, value: decodeValue(bytes) }));
    ops.push({ type: 'put', key: CONTROL_SEQ_KEY, value: seq });
    await this.inner.batch(ops, { sync: this.sync });
  }

  private active(): Map<string, Pending> | undefined {
    return this.overlay !== undefined && commandSeq() !== undefined ? this.overlay : undefined;
  }

  async get<T>(k: string): Promise<T | undefined> {
    const pending = this.active()?.get(k);
    if (pending === undefined) return this.inner.get<T>(k);
    return pending === null ? undefined : decodeValue<T>(pending);
  }

  async getMany<T>(keys: readonly string[]): Promise<Array<T | undefined>> {
    const overlay = this.active();
    if (overlay === undefined) return this.inner.getMany<T>(keys);
    const stored = await this.inner.getMany<T>(keys);
    return keys.map((k, i) => {
      const pending = overlay.get(k);
      if (pending === undefined) return stored[i];
      return pending === null ? undefined : decodeValue<T>(pending);
    });
  }

  async batch(ops: readonly BatchOp[], options?: BatchOptions): Promise<void> {
    const overlay = this.active();
    if (overlay === undefined) return this.inner.batch(ops, options);
    // Encoded now, as LevelDB would: a value the codec refuses fails this call, and later mutations do not leak in.
    const encoded = ops.map((op) => [op.key, op.type === 'put' ? encodeValue(op.value) : null] as const);
    for (const [k, bytes] of encoded) overlay.set(k, bytes);
    if (options?.sync === true) this.sync = true;
  }

  iterate<T>(range: RangeOptions): AsyncIterable<readonly [string, T]> {
    const overlay = this.active();
    if (overlay === undefined) return this.inner.iterate<T>(range);
    return this.merged<T>(overlay, range);
  }

  encodedValues(range: RangeOptions): Promise<Uint8Array[]> {
    return this.active() === undefined ? this.inner.encodedValues(range) : encodedValuesOf(this, range);
  }

  encodedEntries(range: RangeOptions): Promise<Array<readonly [string, Uint8Array]>> {
    return this.active() === undefined ? this.inner.encodedEntries(range) : encodedEntriesOf(this, range);
  }

  skipKeys(range: SkipRange, next: (key: string) => string, limit: number): Promise<string[]> {
    return this.active() === undefined ? this.inner.skipKeys(range, next, limit) : skipKeysOf(this, range, next, limit);
  }

  /** The stored range with the overlay's writes laid over it, in key order (or reverse), `limit` applied last. */
  private async *merged<T>(overlay: Map<string, Pending>, range: RangeOptions): AsyncIterable<readonly [string, T]> {
    const reverse = range.reverse === true;
    const limit = range.limit === undefined || range.limit < 0 ? Infinity : range.limit;
    if (limit === 0) return;
    const pending = [...overlay.keys()].filter((k) => inRange(k, range)).sort();
    if (reverse) pending.reverse();
    const before = (a: string, b: string) => (reverse ? a > b : a < b);
    let emitted = 0;
    let p = 0;
    const emitPending = function* (upTo: string | undefined): Generator<readonly [string, T]> {
      while (p < pending.length && (upTo === undefined || before(pending[p] as string, upTo))) {
        const k = pending[p++] as string;
        const bytes = overlay.get(k);
        if (bytes !== null && bytes !== undefined) yield [k, decodeValue<T>(bytes)] as const;
      }
    };
    // Each pending key hides or replaces at most one stored entry: this many stored ones always suffice.
    const { limit: _limit, ...rest } = range;
    const stored = limit === Infinity ? rest : { ...rest, limit: limit + pending.length };
    for await (const [k, value] of this.inner.iterate<T>(stored)) {
      for (const entry of emitPending(k)) {
        yield entry;
        if (++emitted >= limit) return;
      }
      if (p < pending.length && pending[p] === k) {
        p++;
        const bytes = overlay.get(k);
        if (bytes === null || bytes === undefined) continue;
        yield [k, decodeValue<T>(bytes)] as const;
      } else {
        yield [k, value] as const;
      }
      if (++emitted >= limit) return;
    }
    for (const entry of emitPending(undefined)) {
      yield entry;
      if (++emitted >= limit) return;
    }
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
