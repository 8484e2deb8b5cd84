// A partition owner's thread is named, so that `top -H`, `ps -L` and the benchmarks (bench/usage.ts) tell it from
// the process's other threads (V8's helpers, libuv's pool running LevelDB's reads and writes, LevelDB's compaction),
// which all keep node's name. Linux names a thread by writing its /proc entry's `comm` (at most 15 bytes); elsewhere,
// or when /proc is not mounted, the thread keeps its name and nothing else changes.

import { writeFileSync } from 'node:fs';

export const OWNER_THREAD_NAME = 'audience-owner';

/** Names the calling thread (Linux; elsewhere nothing happens). */
export function nameThisThread(name: string): void {
  try {
    writeFileSync('/proc/thread-self/comm', name.slice(0, 15));
  } catch {
    // not Linux, or /proc not mounted: the thread keeps its name
  }
}
