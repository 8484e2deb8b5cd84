// Compacts a thread's V8 heap once the thread has gone idle (`serve --compact-heap-every`). V8 frees the objects of
// its old generation but keeps the pages they sat on resident while any object on them lives: at 100,000 resident
// users the main thread's old space held 363 MiB of pages for 172 MiB of live objects after the memory bench's load
// (docs/performance.md, Memory), ~2 KB a user of a ~9 KB RSS. Its own collections move objects off only the emptiest
// pages (a few MB per collection), so the pages stay. A full collection with every fragmented page evacuated (V8's
// `--compact-on-every-full-gc`, set for that one collection) gave them back: 176 MiB resident for 172 live. It pauses
// the thread (~0.7 s at 100,000 users on this machine, 1.2-2.0 s once the memory bench's 1 GiB state cache is full:
// bench/README.md (6)), and under load the same flag cost the server a quarter more CPU per request, so it runs only
// at a look that finds the process idle (under IDLE_SHARE of a core since the last look) and, in each heap, only when
// a quarter or more of its old space is free pages. serve's main thread looks; the partition owners' heaps, where the
// decoded states live, are compacted by a task sent to each (worker.ts: an owner idle in piscina waits on a lock, so
// a timer of its own would not run).

import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { CpuShare, type CpuShareOptions } from './cpu-share.js';

/** `serve --compact-heap-every`'s default, in seconds. */
export const DEFAULT_HEAP_COMPACTION_SECONDS = 30;

/** A look compacts only when the process used less than this share of one core since the last look. */
export const IDLE_SHARE = 0.05;

/** ... and the old space's free resident bytes are at least this many, and FREE_SHARE of its live bytes. */
export const MIN_FREE_BYTES = 32 * 1024 * 1024;
export const FREE_SHARE = 0.25;

/** The old space's resident pages and the live objects on them, in bytes. */
export interface OldSpace {
  readonly residentBytes: number;
  readonly usedBytes: number;
}

/** This thread's old space (V8's `old_space`: where objects that lived through two young collections go). */
export function oldSpace(): OldSpace {
  const space = getHeapSpaceStatistics().find((one) => one.space_name === 'old_space');
  return { residentBytes: space?.physical_space_size ?? 0, usedBytes: space?.space_used_size ?? 0 };
}

/** Whether `space` has enough free pages to be worth a compaction (MIN_FREE_BYTES and FREE_SHARE). */
export function fragmented(space: OldSpace): boolean {
  const free = space.residentBytes - space.usedBytes;
  return free >= MIN_FREE_BYTES && free >= FREE_SHARE * space.usedBytes;
}

let fullGc: (() => void) | undefined;

/**
 * A full collection of this thread's heap. Node gives no call for it without `--expose-gc`: the flag is set for a
 * moment to make a context whose `gc` collects this thread's heap.
 */
export function collectGarbage(): void {
  if (fullGc === undefined) {
    setFlagsFromString('--expose-gc');
    try {
      fullGc = runInNewContext('gc') as () => void;
    } finally {
      setFlagsFromString('--no-expose-gc');
    }
  }
  fullGc();
}

/**
 * One full collection of this thread's heap that evacuates every fragmented page: `--compact-on-every-full-gc` set
 * for the one collection (V8 reads the flag when it collects; flags are process-wide, so an owner's collection running
 * meanwhile may compact too, which costs it time, nothing else).
 */
export function compactHeap(): void {
  setFlagsFromString('--compact-on-every-full-gc');
  try {
    collectGarbage();
  } finally {
    setFlagsFromString('--no-compact-on-every-full-gc');
  }
}

/** What one compaction did: its pause and the old space around it. */
export interface HeapCompaction {
  readonly ms: number;
  readonly before: OldSpace;
  readonly after: OldSpace;
}

/** The collections a compaction pass uses (tests give their own). */
export interface HeapCalls {
  readonly compact: () => void;
  readonly collect: () => void;
  readonly space: () => OldSpace;
}

const V8_CALLS: HeapCalls = { compact: compactHeap, collect: collectGarbage, space: oldSpace };

/**
 * This thread's heap compacted if fragmented (undefined if not; `ms` is the whole pause, a settling collection
 * included). The old space counts as used every object that died since its last full collection: right after a load
 * it can look full of objects that are garbage. With `settle`, when it does not look fragmented, a plain full
 * collection first says what is live (once per load: the compactor asks for it at its first idle look after a busy one).
 */
export function compactIfFragmented(settle: boolean, calls: HeapCalls = V8_CALLS): HeapCompaction | undefined {
  const started = performance.now();
  let before = calls.space();
  if (settle && !fragmented(before) && before.residentBytes >= MIN_FREE_BYTES) {
    calls.collect();
    before = calls.space();
  }
  if (!fragmented(before)) return undefined;
  calls.compact();
  return { ms: performance.now() - started, before, after: calls.space() };
}

export interface HeapCompactorOptions extends CpuShareOptions {
  /** Time between two looks (0: only by `pass()`). */
  readonly everyMs: number;
  /** The partition owners' heaps, each compacted if fragmented, after this thread's (undefined: no owner threads). */
  readonly owners?: (settle: boolean) => Promise<ReadonlyArray<HeapCompaction | undefined>>;
  /** This thread's heap compacted if fragmented (tests; `compactIfFragmented`). */
  readonly own?: (settle: boolean) => HeapCompaction | undefined;
  /** Told of each compaction: `thread` is "main thread" or "owner N" (from 1). */
  readonly onCompaction?: (done: HeapCompaction, thread: string) => void;
  /** Told at the end of each pass: its compactions, and how many heaps it looked at. */
  readonly onPass?: (done: readonly HeapCompaction[], heaps: number) => void;
  /** Told when the owners could not be asked (the pipeline closing); the next look asks again. */
  readonly onError?: (error: unknown) => void;
}

/**
 * Looks every `everyMs` (the timer does not keep the process alive); a look that finds the process idle since the
 * last one runs `pass()`: this thread's heap, then each owner's, each compacted if fragmented (the first pass after a
 * busy look settles them first). One pass at a time.
 */
export class HeapCompactor {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<HeapCompaction[]> | undefined;
  private readonly load: CpuShare;
  /** Whether a pass has settled the heaps since the process was last busy (compactIfFragmented's `settle`). */
  private settled = false;
  /** Looks that found the process busy. */
  busy = 0;

  constructor(private readonly options: HeapCompactorOptions) {
    this.load = new CpuShare(options);
    if (options.everyMs > 0) {
      this.timer = setInterval(() => void this.look(), options.everyMs);
      this.timer.unref();
    }
  }

  /** The timer's turn: `pass()` when the process was idle since the last look; undefined when it was busy. */
  look(): Promise<HeapCompaction[]> | undefined {
    const { cpuMs, wallMs } = this.load.look();
    if (cpuMs >= IDLE_SHARE * wallMs) {
      this.busy++;
      this.settled = false;
      return undefined;
    }
    return this.pass();
  }

  /** Compacts each fragmented heap now, this thread's first; resolves with the compactions done. */
  pass(): Promise<HeapCompaction[]> {
    this.running ??= this.compactAll().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async compactAll(): Promise<HeapCompaction[]> {
    const done: HeapCompaction[] = [];
    const report = (compaction: HeapCompaction | undefined, thread: string): void => {
      if (compaction === undefined) return;
      done.push(compaction);
      this.options.onCompaction?.(compaction, thread);
    };
    const settle = !this.settled;
    this.settled = true;
    report((this.options.own ?? compactIfFragmented)(settle), 'main thread');
    let heaps = 1;
    if (this.options.owners !== undefined) {
      try {
        const owners = await this.options.owners(settle);
        heaps += owners.length;
        for (const [index, compaction] of owners.entries()) report(compaction, `owner ${index + 1}`);
      } catch (error) {
        this.options.onError?.(error);
      }
    }
    this.options.onPass?.(done, heaps);
    // The CPU of the pass itself is not the load's: the next look measures from here.
    this.load.restart();
    return done;
  }

  /** No more looks; resolves once a pass still running has ended. */
  async stop(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => undefined);
  }
}

/**
 * serve's compactor: a look every `everyMs` (0: none, and undefined), the owners' heaps through `owners`, each
 * compaction logged at debug, and a pass that found nothing worth compacting too.
 */
export function startHeapCompactor(
  everyMs: number,
  owners: ((settle: boolean) => Promise<ReadonlyArray<HeapCompaction | undefined>>) | undefined,
  log: (level: 'debug' | 'warn', text: string) => void,
): HeapCompactor | undefined {
  if (everyMs === 0) return undefined;
  const mib = (bytes: number): string => (bytes / 1024 / 1024).toFixed(0);
  return new HeapCompactor({
    everyMs,
    ...(owners === undefined ? {} : { owners }),
    onCompaction: ({ ms, before, after }, thread) =>
      log('debug', `heap compaction (${thread}): ${ms.toFixed(0)} ms, old space ${mib(before.residentBytes)} -> ${mib(after.residentBytes)} MiB resident for ${mib(after.usedBytes)} MiB live`),
    onPass: (done, heaps) => {
      if (done.length === 0) log('debug', `heap compaction: none of ${heaps} heaps had a quarter of its old space free`);
    },
    onError: (error) => log('warn', `heap compaction: the owners could not be asked: ${error instanceof Error ? error.message : String(error)}`),
  });
}
