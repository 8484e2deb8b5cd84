// A least-recently-used map bounded in bytes (D40) and, optionally, in entries: the one eviction policy behind the
// schema cache, the ingest state cache and the imported-data contexts.

export interface ByteLruOptions<V> {
  /** Entries at most (default unbounded). */
  readonly maxEntries?: number;
  /** Told of each entry evicted to make room (not of deletes). */
  readonly onEvict?: (value: V, key: string) => void;
}

/**
 * Past either bound the least recently used entries are evicted. The entry just set is kept even when it alone
 * exceeds the byte bound, so a caller always reads back what it just stored.
 */
export class ByteLru<V> {
  private readonly entries = new Map<string, { value: V; bytes: number }>();
  private total = 0;
  private readonly maxEntries: number;
  private readonly onEvict: ((value: V, key: string) => void) | undefined;

  constructor(
    private readonly maxBytes: number,
    private readonly sizeOf: (key: string, value: V) => number,
    options: ByteLruOptions<V> = {},
  ) {
    this.maxEntries = options.maxEntries ?? Infinity;
    this.onEvict = options.onEvict;
  }

  /** Bytes held by the entries (sizeOf of each when it was set). */
  get bytes(): number {
    return this.total;
  }

  get size(): number {
    return this.entries.size;
  }

  has(key: string): boolean {
    return this.entries.has(key);
  }

  /** The value, now the most recently used; undefined when absent. */
  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value;
  }

  /** The value without touching its recency. */
  peek(key: string): V | undefined {
    return this.entries.get(key)?.value;
  }

  set(key: string, value: V): void {
    this.delete(key);
    const bytes = this.sizeOf(key, value);
    this.entries.set(key, { value, bytes });
    this.total += bytes;
    while (this.entries.size > 1 && (this.entries.size > this.maxEntries || this.total > this.maxBytes)) {
      const oldest = this.entries.entries().next();
      if (oldest.done === true) break;
      const [oldKey, entry] = oldest.value;
      this.delete(oldKey);
      this.onEvict?.(entry.value, oldKey);
    }
  }

  delete(key: string): void {
    const entry = this.entries.get(key);
    if (entry === undefined) return;
    this.entries.delete(key);
    this.total -= entry.bytes;
  }

  /** Forgets every entry (not evictions: onEvict is not told). */
  clear(): void {
    this.entries.clear();
    this.total = 0;
  }

  *values(): IterableIterator<V> {
    for (const entry of this.entries.values()) yield entry.value;
  }
}
