// Hands the C allocator's free memory back to the system (`serve --malloc-trim-every`). glibc keeps what the process
// frees in its arenas (the main thread's, and one per thread that allocates: libuv's pool, where LevelDB's reads and
// memtable inserts allocate, its compaction thread, the partition owners) and returns on its own only the free space
// at the top of an arena, never the free pages between chunks still in use. At 100,000 resident users that free
// memory was a third of the RSS (docs/performance.md, Memory: `malloc_stats()` counted 938 MiB taken from the system
// against 458 MiB in use). `malloc_trim(0)` gives every free whole page of every arena back (madvise), but Node has
// no call for it: koffi, a maintained FFI library with prebuilt binaries, calls it from libc, on a thread of libuv's
// pool (koffi's asynchronous call), so the event loop never waits for a pass (tens of milliseconds with a gigabyte of
// arenas). A pass runs only when the process was not busy over the interval (below BUSY_SHARE of a core): under load
// the allocator reuses its free memory at once, LevelDB's memtables churn through it, and the pages a pass hands back
// are faulted in again (in bench/ab.ts a pass every second cost 275 against 234 µs of server CPU per ingested request
// at the medians, the ratio lower in every round; docs/performance.md). Only Linux with glibc has malloc_trim;
// elsewhere (macOS, Windows, musl) nothing is trimmed and serve says why once.

import { memoryUsage } from 'node:process';
import { CpuShare, type CpuShareOptions } from './cpu-share.js';

/** One pass of `malloc_trim(0)`, reported to `done` (released: whether any memory went back to the system). */
export type NativeTrim = (done: (error: unknown, released: boolean) => void) => void;

/** `serve --malloc-trim-every`'s default, in seconds. */
export const DEFAULT_MALLOC_TRIM_SECONDS = 30;

/** The timer skips its pass when the process used at least this share of one core since its last look. */
export const BUSY_SHARE = 0.5;

/** glibc's `malloc_trim`, or why it cannot be called here. */
export async function loadMallocTrim(): Promise<{ trim: NativeTrim } | { unavailable: string }> {
  if (process.platform !== 'linux') return { unavailable: `not Linux (${process.platform})` };
  try {
    // musl has neither libc.so.6 nor malloc_trim: the load fails, and says so.
    const koffi = (await import('koffi')).default;
    const native = koffi.load('libc.so.6').func('int malloc_trim(size_t)');
    return {
      trim: (done) => native.async(0, (error: unknown, result: number) => done(error ?? undefined, result === 1)),
    };
  } catch (error) {
    return { unavailable: `koffi could not call malloc_trim: ${error instanceof Error ? error.message : String(error)}` };
  }
}

/** What one pass did: its time and the process's RSS around it. */
export interface TrimPass {
  readonly ms: number;
  readonly released: boolean;
  readonly rssBefore: number;
  readonly rssAfter: number;
}

export interface MallocTrimmerOptions extends CpuShareOptions {
  readonly trim: NativeTrim;
  /** Time between two looks of the timer, each a pass unless the process was busy (0: only by `pass()`). */
  readonly everyMs: number;
  /** The process's resident bytes (tests). */
  readonly rss?: () => number;
  /** Told of each pass, the timer's and `pass()`'s. */
  readonly onPass?: (pass: TrimPass) => void;
  /** Told when a pass failed; the timer stops then (a call that failed once is not repeated). */
  readonly onError?: (error: unknown) => void;
}

/**
 * Looks every `everyMs` (the timer does not keep the process alive) and runs a pass unless the process used
 * BUSY_SHARE of a core or more since the last look; runs one on demand (`pass()`) too; one at a time: `pass()` while
 * one runs answers that one.
 */
export class MallocTrimmer {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<TrimPass> | undefined;
  private stopped = false;
  private readonly load: CpuShare;
  /** Looks that found the process busy and ran no pass. */
  skipped = 0;

  constructor(private readonly options: MallocTrimmerOptions) {
    this.load = new CpuShare(options);
    if (options.everyMs > 0) {
      this.timer = setInterval(() => this.look(), options.everyMs);
      this.timer.unref();
    }
  }

  /** The timer's turn: a pass when the process was not busy since the last look. */
  private look(): void {
    const { cpuMs, wallMs } = this.load.look();
    if (cpuMs >= BUSY_SHARE * wallMs) {
      this.skipped++;
      return;
    }
    this.pass().catch(() => undefined); // reported through onError, which also stops the timer
  }

  pass(): Promise<TrimPass> {
    if (this.running !== undefined) return this.running;
    const rss = this.options.rss ?? (() => memoryUsage.rss());
    const rssBefore = rss();
    const started = process.hrtime.bigint();
    const running = new Promise<TrimPass>((resolve, reject) => {
      this.options.trim((error, released) => {
        if (error !== undefined) {
          reject(error);
          return;
        }
        resolve({ ms: Number(process.hrtime.bigint() - started) / 1e6, released, rssBefore, rssAfter: rss() });
      });
    }).then(
      (pass) => {
        this.running = undefined;
        this.options.onPass?.(pass);
        return pass;
      },
      (error: unknown) => {
        this.running = undefined;
        this.clearTimer();
        if (!this.stopped) this.options.onError?.(error);
        throw error;
      },
    );
    this.running = running;
    return running;
  }

  /** No more passes from the timer; resolves once a pass still running has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.clearTimer();
    await this.running?.catch(() => undefined);
  }

  private clearTimer(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }
}

/**
 * serve's trimmer: a look every `everyMs` (0: none, and undefined), a pass at each look that finds the process not
 * busy, each pass logged at `debug`; where there is no malloc_trim, undefined and one `info` line saying why.
 */
export async function startMallocTrimmer(
  everyMs: number,
  log: (level: 'debug' | 'info' | 'warn', text: string) => void,
): Promise<MallocTrimmer | undefined> {
  if (everyMs === 0) return undefined;
  const loaded = await loadMallocTrim();
  if ('unavailable' in loaded) {
    log('info', `--malloc-trim-every: nothing to trim with: ${loaded.unavailable}`);
    return undefined;
  }
  const mib = (bytes: number): string => (bytes / 1024 / 1024).toFixed(0);
  return new MallocTrimmer({
    trim: loaded.trim,
    everyMs,
    onPass: (pass) => log('debug', `malloc_trim: ${pass.ms.toFixed(1)} ms, RSS ${mib(pass.rssBefore)} -> ${mib(pass.rssAfter)} MiB`),
    onError: (error) => log('warn', `malloc_trim failed, no more passes: ${error instanceof Error ? error.message : String(error)}`),
  });
}
