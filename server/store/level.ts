// The LevelDB Store: `level` (classic-level in Node) with utf8 keys and msgpackr-packed values (stored as byte views).
// Opening a directory another process or instance holds fails with StoreLockedError.
// A failed write (a full disk) leaves LevelDB unusable for writes until it is reopened: a sticky background error,
// or a log with a torn record that later records must not follow. RecoveringStore reopens it by itself.

import { statfs } from 'node:fs/promises';
import { Level } from 'level';
import type { BatchOp, BatchOptions, RangeOptions, SkipRange, Store } from './contract.js';
import { decodeValue, encodeValue } from './values.js';

export { encodeValue } from './values.js';

/** The data directory is open in another process (or another instance in this one): LevelDB's LOCK is held. */
export class StoreLockedError extends Error {
  readonly dir: string;
  constructor(dir: string, options?: { cause?: unknown }) {
    super(`data directory is in use: ${dir}`, options);
    this.name = 'StoreLockedError';
    this.dir = dir;
  }
}

type Db = Level<string, Uint8Array>;

export interface LevelStoreOptions {
  /** Where the store reports failed writes and reopening; default silent. */
  readonly log?: ((line: string) => void) | undefined;
  /** Snappy-compress the tables LevelDB writes from now on (`serve --store-compression`); default off (LEVEL_OPTIONS). */
  readonly compression?: boolean | undefined;
}

/** Opens (creating when missing) the LevelDB store in `dir`; it reopens itself after a failed write (RecoveringStore). */
export async function openLevelStore(dir: string, options: LevelStoreOptions = {}): Promise<Store> {
  const compression = options.compression ?? LEVEL_OPTIONS.compression;
  const open = () => openRawLevelStore(dir, compression);
  return new RecoveringStore(await open(), { open, hasRoom: () => hasRoom(dir), log: options.log });
}

/**
 * LevelDB's memtable (and log) size before it is written out as a table: 64 MiB instead of classic-level's 4 MiB.
 * Every event writes a record and two index entries; with small memtables they reach the first level as many small
 * tables that are compacted again and again. `node dist/bench/ab.js --variant before=<4 MiB build> --variant
 * after=dist --users 100000 --rounds 3 --seconds 10` (the HTTP benchmark's ingestion on one seeded data directory,
 * the server restarted for each run): 0.107-0.126x the baseline before, 0.126-0.133x after, p99 56-71 ms against
 * 40-45 ms. The cost: up to twice this in memory while a full memtable is written out, and a longer log to replay
 * after a crash.
 */
export const WRITE_BUFFER_BYTES = 64 * 1024 * 1024;

/**
 * How the store opens LevelDB (the benchmarks that model it open it the same way): utf8 keys, byte values, 64 MiB
 * memtables (above), and table blocks written without Snappy (`serve --store-compression` turns it on). On these 2
 * cores CPU is what every target lacks, and Snappy cost it both ways: a perf record of the backfill bench's two sweeps
 * had Snappy's decompression at 5.4 % of all the process's samples (every stored event read back) and its
 * compression in LevelDB's compactions at 2.1 %. Alternated rounds on 2026-12-03 (server/store/README.md,
 * "Compression"): the backfill sweeps +12 % and +16 % at the medians (`bench/backfill-ab.ts`, 3 rounds), ingestion
 * 0.249x against 0.236x the baseline, higher in 3 of 3 rounds (`bench/ab.ts`, 30,000 users), `bench/store-keys.ts`'s
 * 300,000 events in 15.2-16.9 against 16.1-19.8 CPU-seconds; the price is disk: its data directory 208 MB against
 * 127 MB. Blocks carry their own compression type, so a directory written either way reads the same either way.
 */
export const LEVEL_OPTIONS = { keyEncoding: 'utf8', valueEncoding: 'view', writeBufferSize: WRITE_BUFFER_BYTES, compression: false } as const;

async function openRawLevelStore(dir: string, compression: boolean): Promise<Store> {
  const db: Db = new Level<string, Uint8Array>(dir, { ...LEVEL_OPTIONS, compression });
  try {
    await db.open();
  } catch (error) {
    if (isLockedError(error)) throw new StoreLockedError(dir, { cause: error });
    throw error;
  }
  return new LevelStore(db);
}

/** Reopening needs room: the recovered log becomes a table and a new manifest is written. */
const ROOM_TO_REOPEN = 1024 * 1024;

async function hasRoom(dir: string): Promise<boolean> {
  try {
    const fs = await statfs(dir);
    const blocks = process.getuid?.() === 0 ? fs.bfree : fs.bavail;
    return blocks * fs.bsize >= ROOM_TO_REOPEN;
  } catch {
    return true; // unknown: let the reopen itself find out
  }
}

export interface RecoveringStoreOptions {
  /** Opens the underlying store again (the same directory). */
  readonly open: () => Promise<Store>;
  /** Whether a reopen may succeed now (free space); while false, the failed store keeps serving reads. */
  readonly hasRoom: () => Promise<boolean>;
  readonly log?: ((line: string) => void) | undefined;
}

/**
 * A Store that survives failed writes. After a batch fails, the underlying store is not written again: the batches
 * that follow first close and reopen it (LevelDB replays its log and drops the torn record, so every acknowledged
 * batch is there and the failed one is not), then write. While there is no room to reopen, they fail at once and the
 * old store keeps serving reads. A failed reopen leaves no store open; the next operation tries again.
 * Failures are logged once per burst: the first with its error, then the count when writes work again.
 */
export class RecoveringStore implements Store {
  private current: Store | undefined;
  private broken = false;
  private recovering: Promise<Store> | undefined;
  private closed = false;
  private failures = 0;

  constructor(
    initial: Store,
    private readonly options: RecoveringStoreOptions,
  ) {
    this.current = initial;
  }

  // A healthy store is called straight (no extra await per read, write or iterated entry: replays scan a lot).
  get<T>(key: string): Promise<T | undefined> {
    const store = this.healthy();
    return store ? store.get<T>(key) : this.readable().then((s) => s.get<T>(key));
  }

  getMany<T>(keys: readonly string[]): Promise<Array<T | undefined>> {
    const store = this.healthy();
    return store ? store.getMany<T>(keys) : this.readable().then((s) => s.getMany<T>(keys));
  }

  batch(ops: readonly BatchOp[], options?: BatchOptions): Promise<void> {
    if (ops.length === 0) return Promise.resolve();
    const store = this.healthy();
    return store ? this.write(store, ops, options) : this.writable().then((s) => this.write(s, ops, options));
  }

  encodedValues(range: RangeOptions): Promise<Uint8Array[]> {
    const store = this.healthy();
    return store ? store.encodedValues(range) : this.readable().then((s) => s.encodedValues(range));
  }

  encodedEntries(range: RangeOptions): Promise<Array<readonly [string, Uint8Array]>> {
    const store = this.healthy();
    return store ? store.encodedEntries(range) : this.readable().then((s) => s.encodedEntries(range));
  }

  memoryBytes(): number | undefined {
    return this.healthy()?.memoryBytes?.();
  }

  skipKeys(range: SkipRange, next: (key: string) => string, limit: number): Promise<string[]> {
    const store = this.healthy();
    return store ? store.skipKeys(range, next, limit) : this.readable().then((s) => s.skipKeys(range, next, limit));
  }

  iterate<T>(range: RangeOptions): AsyncIterable<readonly [string, T]> {
    const readable = () => this.readable();
    return {
      [Symbol.asyncIterator]() {
        let inner: AsyncIterator<readonly [string, T]> | undefined;
        const iterator: AsyncIterator<readonly [string, T]> = {
          async next() {
            if (inner === undefined) {
              const started = (await readable()).iterate<T>(range)[Symbol.asyncIterator]();
              inner = started;
              iterator.next = () => started.next();
            }
            return inner.next();
          },
          async return(value?: unknown) {
            if (inner?.return) return inner.return(value);
            return { done: true, value: undefined };
          },
        };
        return iterator;
      },
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.recovering) await this.recovering.catch(() => undefined);
    const store = this.current;
    this.current = undefined;
    if (store) await store.close();
  }

  private async write(store: Store, ops: readonly BatchOp[], options: BatchOptions | undefined): Promise<void> {
    try {
      await store.batch(ops, options);
    } catch (error) {
      if (store === this.current) this.failed(error);
      throw error;
    }
    if (this.failures > 0 && !this.broken) {
      this.log(`store: writes work again (${this.failures - 1} more failure(s) of the same kind)`);
      this.failures = 0;
    }
  }

  private healthy(): Store | undefined {
    return this.closed || this.broken || this.recovering !== undefined ? undefined : this.current;
  }

  private failed(error: unknown): void {
    this.broken = true;
    this.failures += 1;
    if (this.failures === 1) this.log(`store: a write failed; writes reopen the store once there is room: ${describe(error)}`);
  }

  private async readable(): Promise<Store> {
    if (this.closed) throw new Error('the store is closed');
    // A recovery that finds no room leaves the old store serving reads.
    if (this.recovering) await this.recovering.catch(() => undefined);
    if (this.current) return this.current;
    return this.recover();
  }

  private async writable(): Promise<Store> {
    if (this.closed) throw new Error('the store is closed');
    if (this.current && !this.broken && !this.recovering) return this.current;
    return this.recover();
  }

  /** One reopen at a time; every caller meanwhile waits for it. */
  private recover(): Promise<Store> {
    this.recovering ??= (async () => {
      try {
        if (this.current) {
          if (!(await this.options.hasRoom())) {
            this.failures += 1;
            throw new Error('the store cannot be written: no room on its disk');
          }
          const old = this.current;
          this.current = undefined;
          await old.close();
        }
        let store: Store;
        try {
          store = await this.options.open();
        } catch (error) {
          this.failures += 1;
          throw error;
        }
        if (this.closed) {
          await store.close();
          throw new Error('the store is closed');
        }
        this.current = store;
        this.broken = false;
        this.log('store: reopened after a failed write');
        return store;
      } finally {
        this.recovering = undefined;
      }
    })();
    return this.recovering;
  }

  private log(line: string): void {
    try {
      this.options.log?.(line);
    } catch {
      // a failed log line is dropped
    }
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}

function isLockedError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, cause } = error as { code?: unknown; cause?: unknown };
  if (code === 'LEVEL_LOCKED') return true;
  return (
    code === 'LEVEL_DATABASE_NOT_OPEN' &&
    typeof cause === 'object' &&
    cause !== null &&
    (cause as { code?: unknown }).code === 'LEVEL_LOCKED'
  );
}

/** Binary values come back as Uint8Array (not Buffer), as the memory store's structured clones do. Each stored value
 * arrives in its own fresh buffer, so nothing is shared. */
function decode<T>(bytes: Uint8Array | undefined): T | undefined {
  return bytes === undefined ? undefined : decodeValue<T>(bytes);
}

class LevelStore implements Store {
  constructor(private readonly db: Db) {}

  async get<T>(key: string): Promise<T | undefined> {
    return decode<T>(await this.db.get(key));
  }

  async getMany<T>(keys: readonly string[]): Promise<Array<T | undefined>> {
    if (keys.length === 0) return [];
    const values = await this.db.getMany([...keys]);
    return values.map((bytes) => decode<T>(bytes));
  }

  /**
   * One atomic write through a chained batch: abstract-level's array form copies and re-validates every operation
   * in JavaScript (about 4 µs per operation on the bench machine), the chained form hands each one straight to
   * LevelDB's WriteBatch (under 1 µs); the write is the same single atomic WriteBatch.
   */
  async batch(ops: readonly BatchOp[], options?: BatchOptions): Promise<void> {
    if (ops.length === 0) return;
    const chained = this.db.batch();
    try {
      for (const op of ops) {
        if (op.type === 'put') chained.put(op.key, encodeValue(op.value));
        else chained.del(op.key);
      }
    } catch (error) {
      await chained.close();
      throw error;
    }
    await chained.write({ sync: options?.sync === true });
  }

  async *iterate<T>(range: RangeOptions): AsyncIterable<readonly [string, T]> {
    if (range.limit === 0) return;
    const iterator = this.db.iterator(levelRange(range));
    try {
      for (;;) {
        const entries = await iterator.nextv(256);
        if (entries.length === 0) return;
        for (const [key, bytes] of entries) yield [key, decode<T>(bytes) as T] as const;
      }
    } finally {
      await iterator.close();
    }
  }

  memoryBytes(): number | undefined {
    if (this.db.status !== 'open') return undefined;
    // `level` resolves to classic-level in Node; its browser-neutral type leaves getProperty out.
    const bytes = Number((this.db as unknown as { getProperty(name: string): string }).getProperty('leveldb.approximate-memory-usage'));
    return Number.isFinite(bytes) ? bytes : undefined;
  }

  /**
   * One keys-only iterator read a few hundred keys at a time: a key below the bound (`next` of the last key taken)
   * is stepped over, and after SKIP_SEEK_AFTER of them in a row the iterator seeks to the bound. Groups of keys are
   * mostly short (a user's stored values: a few blocks and the records since), where reading on costs less than a
   * seek and a native call per key (a new sweep's user count: 13 % of the sweep's main thread in a profile,
   * docs/performance.md), and a long group still costs one seek and at most SKIP_READ keys read.
   */
  async skipKeys(range: SkipRange, next: (key: string) => string, limit: number): Promise<string[]> {
    const keys: string[] = [];
    if (limit <= 0) return keys;
    const iterator = this.db.keys({ gte: range.gte, lt: range.lt, highWaterMarkBytes: SKIP_READ * 128 });
    try {
      let bound = range.gte;
      let below = 0;
      for (;;) {
        const batch = await iterator.nextv(SKIP_READ);
        if (batch.length === 0) break;
        for (const key of batch) {
          if (byteOrderBelow(key, bound)) {
            below++;
            continue;
          }
          keys.push(key);
          if (keys.length >= limit) return keys;
          bound = next(key);
          below = 0;
        }
        if (below >= SKIP_SEEK_AFTER) {
          iterator.seek(bound);
          below = 0;
        }
      }
    } finally {
      await iterator.close();
    }
    return keys;
  }

  /**
   * Values only (no keys decoded), a megabyte of them per native read: a history replay reads hundreds of events per
   * user, and the default 16 KB per read would split it into many calls.
   */
  async encodedValues(range: RangeOptions): Promise<Uint8Array[]> {
    const values: Uint8Array[] = [];
    for (const entries of await this.readEncoded(range, false)) for (const entry of entries) values.push(entry[1]);
    return values;
  }

  async encodedEntries(range: RangeOptions): Promise<Array<readonly [string, Uint8Array]>> {
    const found: Array<readonly [string, Uint8Array]> = [];
    for (const entries of await this.readEncoded(range, true)) for (const entry of entries) found.push(entry as readonly [string, Uint8Array]);
    return found;
  }

  /**
   * The range's entries as the native reads returned them (keys undefined unless `keys`). No callback per call: a
   * closure made per read loses its optimized code at each collection (docs/performance.md).
   */
  private async readEncoded(range: RangeOptions, keys: boolean): Promise<Array<ReadonlyArray<readonly [string | undefined, Uint8Array]>>> {
    const reads: Array<ReadonlyArray<readonly [string | undefined, Uint8Array]>> = [];
    const limit = range.limit === undefined || range.limit < 0 ? Infinity : range.limit;
    if (limit === 0) return reads;
    const iterator = this.db.iterator({ ...levelRange(range), keys, highWaterMarkBytes: 1024 * 1024 });
    let read = 0;
    try {
      while (read < limit) {
        const entries: ReadonlyArray<readonly [string | undefined, Uint8Array]> = await iterator.nextv(Math.min(limit - read, 4096));
        if (entries.length === 0) break;
        read += entries.length;
        reads.push(entries);
      }
    } finally {
      await iterator.close();
    }
    return reads;
  }

  async close(): Promise<void> {
    await this.db.close();
  }
}

/** Keys a skip scan reads per native read (skipKeys). */
const SKIP_READ = 256;
/** Keys below the bound read in a row after which a skip scan seeks (skipKeys). */
const SKIP_SEEK_AFTER = 64;

/**
 * Whether `a` sorts before `b` in UTF-8 byte order, LevelDB's. JavaScript's `<` compares UTF-16 code units, which
 * agrees except between a character above U+FFFF (a surrogate pair) and one in U+E000–U+FFFF: there the units are
 * shifted so that surrogates sort above.
 */
export function byteOrderBelow(a: string, b: string): boolean {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    if (x < 0xd800 || y < 0xd800) return x < y;
    return (x >= 0xe000 ? x - 0x800 : x + 0x2000) < (y >= 0xe000 ? y - 0x800 : y + 0x2000);
  }
  return a.length < b.length;
}

function levelRange(range: RangeOptions) {
  return {
    ...(range.gt !== undefined ? { gt: range.gt } : {}),
    ...(range.gte !== undefined ? { gte: range.gte } : {}),
    ...(range.lt !== undefined ? { lt: range.lt } : {}),
    ...(range.lte !== undefined ? { lte: range.lte } : {}),
    reverse: range.reverse === true,
    limit: range.limit === undefined || range.limit < 0 ? -1 : range.limit,
  };
}
