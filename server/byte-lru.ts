// A least-recently-used map bounded in bytes (D40) and, optionally, in entries: the one eviction policy behind the
// schema cache, the ingest state cache, the imported-data contexts, the identity lookups and the API keys' hashes.

export interface ByteLruOptions<V> {
  /** Entries at most (default unbounded). */
  readonly maxEntries?: number;
  /** Told of each entry evicted to make room (not of deletes). */
  readonly onEvict?: (value: V, key: string) => void;
}

/** An entry, linked from the least recently used (`head`) to the most (`tail`). */
interface Node<V> {
  readonly key: string;
  value: V;
  bytes: number;
  prev: Node<V> | undefined;
  next: Node<V> | undefined;
}

/**
 * Past either bound the least recently used entries are evicted. The entry just set is kept even when it alone
 * exceeds the byte bound, so a caller always reads back what it just stored. Recency is a linked list beside the
 * Map: a read relinks its entry instead of deleting and re-inserting the key (which churns the Map's hash table on
 * every hit of the ingest path's state cache).
 */
export class ByteLru<V> {
  private readonly entries = new Map<string, Node<V>>();
  private head: Node<V> | undefined;
  private tail: Node<V> | undefined;
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
    const node = this.entries.get(key);
    if (node === undefined) return undefined;
    if (node !== this.tail) {
      this.unlink(node);
      this.append(node);
    }
    return node.value;
  }

  /** The value without touching its recency. */
  peek(key: string): V | undefined {
    return this.entries.get(key)?.value;
  }

  set(key: string, value: V): void {
    const bytes = this.sizeOf(key, value);
    const existing = this.entries.get(key);
    if (existing !== undefined) {
      // Replaced in place: one Map lookup instead of a delete and an insert (the ingest state cache replaces every
      // committed user's entry), and no new node.
      existing.value = value;
      this.total += bytes - existing.bytes;
      existing.bytes = bytes;
      if (existing !== this.tail) {
        this.unlink(existing);
        this.append(existing);
      }
    } else {
      const node: Node<V> = { key, value, bytes, prev: undefined, next: undefined };
      this.entries.set(key, node);
      this.append(node);
      this.total += bytes;
    }
    while (this.entries.size > 1 && (this.entries.size > this.maxEntries || this.total > this.maxBytes)) {
      const oldest = this.head as Node<V>;
      this.delete(oldest.key);
      this.onEvict?.(oldest.value, oldest.key);
    }
  }

  delete(key: string): void {
    const node = this.entries.get(key);
    if (node === undefined) return;
    this.entries.delete(key);
    this.unlink(node);
    this.total -= node.bytes;
  }

  /** Forgets every entry (not evictions: onEvict is not told). */
  clear(): void {
    this.entries.clear();
    this.head = undefined;
    this.tail = undefined;
    this.total = 0;
  }

  /** The values from the least recently used to the most. */
  *values(): IterableIterator<V> {
    for (let node = this.head; node !== undefined; ) {
      const next = node.next; // read before the caller may delete the entry
      yield node.value;
      node = next;
    }
  }

  private append(node: Node<V>): void {
    node.prev = this.tail;
    node.next = undefined;
    if (this.tail === undefined) this.head = node;
    else this.tail.next = node;
    this.tail = node;
  }

  private unlink(node: Node<V>): void {
    if (node.prev === undefined) this.head = node.next;
    else node.prev.next = node.next;
    if (node.next === undefined) this.tail = node.prev;
    else node.next.prev = node.prev;
    node.prev = undefined;
    node.next = undefined;
  }
}
