// The one store contract every part of the service writes through: point reads, atomic batches, ordered ranges.
// Implementations: LevelDB (server/store/level.ts) and memory (server/store/memory.ts); one shared contract suite.

/** Keys are strings and sort by UTF-16 code unit order (the same as byte order for the ASCII keys we write). */
export type BatchOp =
  | { readonly type: 'put'; readonly key: string; readonly value: unknown }
  | { readonly type: 'del'; readonly key: string };

export interface RangeOptions {
  readonly gt?: string;
  readonly gte?: string;
  readonly lt?: string;
  readonly lte?: string;
  readonly reverse?: boolean;
  readonly limit?: number;
}

export interface BatchOptions {
  /** fsync before resolving (power-loss durability); without it, a resolved batch survives a process crash. */
  readonly sync?: boolean;
}

export interface Store {
  /** The stored value (a structured-clone-like copy), or undefined. */
  get<T = unknown>(key: string): Promise<T | undefined>;
  getMany<T = unknown>(keys: readonly string[]): Promise<Array<T | undefined>>;
  /** Applies every operation or none. Resolves once the batch is durable against a process crash. */
  batch(ops: readonly BatchOp[], options?: BatchOptions): Promise<void>;
  /** Entries in key order (or reverse) within the range. */
  iterate<T = unknown>(range: RangeOptions): AsyncIterable<readonly [string, T]>;
  close(): Promise<void>;
}

/**
 * An upper bound (for `lt`) above every key that starts with `prefix`, in UTF-16 order (memory) and in UTF-8 byte
 * order (LevelDB) alike: the prefix with its last character incremented. The prefix must end in printable ASCII,
 * as every scan prefix of server/store/layout.ts does (they end with the separator).
 */
export function prefixEnd(prefix: string): string {
  const last = prefix.charCodeAt(prefix.length - 1);
  if (!(last >= 0x20 && last < 0x7e)) throw new RangeError(`a scan prefix must end in printable ASCII: ${JSON.stringify(prefix)}`);
  return prefix.slice(0, -1) + String.fromCharCode(last + 1);
}
