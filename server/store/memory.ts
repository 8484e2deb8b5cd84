// An in-memory Store for tests and the stateless tools: a sorted key array beside a Map, copying values like LevelDB.

import { encodedEntriesOf, encodedValuesOf, type BatchOp, type RangeOptions, type SkipRange, type Store } from './contract.js';

export class MemoryStore implements Store {
  private readonly values = new Map<string, unknown>();
  private keys: string[] = [];
  private closed = false;

  async get<T>(key: string): Promise<T | undefined> {
    this.assertOpen();
    const value = this.values.get(key);
    return value === undefined ? undefined : (structuredClone(value) as T);
  }

  async getMany<T>(keys: readonly string[]): Promise<Array<T | undefined>> {
    return Promise.all(keys.map((key) => this.get<T>(key)));
  }

  async batch(ops: readonly BatchOp[]): Promise<void> {
    this.assertOpen();
    const copies = ops.map((op) => (op.type === 'put' ? { ...op, value: structuredClone(op.value) } : op));
    for (const op of copies) {
      if (op.type === 'put') {
        if (!this.values.has(op.key)) this.keys.splice(this.insertionPoint(op.key), 0, op.key);
        this.values.set(op.key, op.value);
      } else if (this.values.delete(op.key)) {
        this.keys.splice(this.insertionPoint(op.key), 1);
      }
    }
  }

  async *iterate<T>(range: RangeOptions): AsyncIterable<readonly [string, T]> {
    this.assertOpen();
    const selected = this.keys.filter(
      (key) =>
        (range.gt === undefined || key > range.gt) &&
        (range.gte === undefined || key >= range.gte) &&
        (range.lt === undefined || key < range.lt) &&
        (range.lte === undefined || key <= range.lte),
    );
    if (range.reverse) selected.reverse();
    const limited = range.limit === undefined || range.limit < 0 ? selected : selected.slice(0, range.limit);
    // A snapshot at the call, as a LevelDB iterator reads: batches while the caller iterates change nothing it sees
    // (stored values are copies no one changes, so holding them is enough).
    const entries = limited.map((key) => [key, this.values.get(key)] as const);
    for (const [key, value] of entries) yield [key, structuredClone(value) as T] as const;
  }

  encodedValues(range: RangeOptions): Promise<Uint8Array[]> {
    return encodedValuesOf(this, range);
  }

  encodedEntries(range: RangeOptions): Promise<Array<readonly [string, Uint8Array]>> {
    return encodedEntriesOf(this, range);
  }

  async skipKeys(range: SkipRange, next: (key: string) => string, limit: number): Promise<string[]> {
    this.assertOpen();
    const keys: string[] = [];
    let at = this.insertionPoint(range.gte);
    while (keys.length < limit && at < this.keys.length) {
      const key = this.keys[at] as string;
      if (key >= range.lt) break;
      keys.push(key);
      at = this.insertionPoint(next(key));
    }
    return keys;
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('store is closed');
  }

  private insertionPoint(key: string): number {
    let low = 0;
    let high = this.keys.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if ((this.keys[mid] as string) < key) low = mid + 1;
      else high = mid;
    }
    return low;
  }
}
