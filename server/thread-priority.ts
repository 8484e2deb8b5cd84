// The main thread's priority over the process's other threads (`serve --helper-nice`). The main thread serves HTTP
// and builds every ingest group (server/ingest/README.md): under load it is the one always runnable, and it waits
// for a core whenever the partition owners, libuv's pool (LevelDB reads and writes), LevelDB's compaction thread or
// V8's GC helpers hold them. Those threads run at a lower priority (a higher nice value) so that the main thread wins a
// contended core; they still get every core nobody else wants. RocksDB lowers its compaction threads the same way
// (`Env::LowerThreadPoolCPUPriority`). Measured with bench/ab.ts: README, Performance.
//
// Linux keeps a nice value per thread (setpriority(PRIO_PROCESS, tid), which node's os.setPriority calls with the
// thread id); the threads are listed in /proc/self/task, once at the start and then every `everyMs` (libuv's pool
// starts at its first use; an owner that crashed is replaced by a new thread). Without /proc/self/task (not Linux)
// nothing happens.

import { readdirSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

/** Nice values run from -20 (first) to 19 (last). */
const LOWEST = 19;

/** `serve --helper-nice`'s default: such a thread gets about a tenth of a core the main thread also wants. */
export const DEFAULT_HELPER_NICE = 10;

export interface HelperPriority {
  /** Lowers the threads started since the last look (the timer calls it every `everyMs`). */
  sweep(): void;
  /** Threads lowered so far. */
  readonly lowered: number;
  stop(): void;
}

export interface HelperPriorityOptions {
  /** How often new threads are looked for (0: only by `sweep()`). */
  readonly everyMs?: number;
  /** Where the process's threads are listed (tests). */
  readonly taskDir?: string;
}

/**
 * Sets every thread of this process but the calling (main) one to the main thread's nice value + `nice` (at most 19),
 * now and as threads start. `nice` 0 changes nothing. Must be called from the main thread.
 */
export function lowerHelperThreads(nice: number, options: HelperPriorityOptions = {}): HelperPriority {
  const taskDir = options.taskDir ?? '/proc/self/task';
  const main = process.pid;
  /** The threads listed at the last look (a thread id is reused only after its thread ended). */
  let seen = new Set<number>([main]);
  let lowered = 0;
  const sweep = (): void => {
    if (nice === 0) return;
    let tids: string[];
    try {
      tids = readdirSync(taskDir);
    } catch {
      return; // not Linux, or /proc not mounted
    }
    const target = Math.min(LOWEST, getPriority(main) + nice);
    const listed = new Set<number>([main]);
    for (const name of tids) {
      const tid = Number(name);
      if (!Number.isInteger(tid)) continue;
      listed.add(tid);
      if (seen.has(tid)) continue;
      try {
        setPriority(tid, target);
        lowered += 1;
      } catch {
        // The thread ended since the listing.
      }
    }
    seen = listed;
  };
  sweep();
  const everyMs = options.everyMs ?? 1_000;
  const timer = nice !== 0 && everyMs > 0 ? setInterval(sweep, everyMs) : undefined;
  timer?.unref();
  return {
    sweep,
    get lowered() {
      return lowered;
    },
    stop: () => clearInterval(timer),
  };
}
