// A partition owner's thread names itself (thread-name.ts), so that `top -H` and bench/usage.ts tell the owners
// from the process's other threads. Needs the compiled worker (`npm run build`) and Linux's /proc.

import { readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createExecutor } from './executor.js';
import { OWNER_THREAD_NAME } from './thread-name.js';

/** The names of this process's threads, from /proc. */
function threadNames(): string[] {
  const names: string[] = [];
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      names.push(readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim());
    } catch {
      // the thread ended meanwhile
    }
  }
  return names;
}

describe('owner thread names', () => {
  it('names each owner thread, and only those', async () => {
    const before = threadNames().filter((name) => name === OWNER_THREAD_NAME).length;
    const executor = createExecutor(2);
    try {
      // A task on each owner: its thread has loaded the worker file.
      for (let owner = 0; owner < 2; owner++) expect(await executor.run({ groups: [] }, owner)).toEqual({ groups: [] });
      expect(threadNames().filter((name) => name === OWNER_THREAD_NAME).length - before).toBe(2);
      // The main thread keeps its name.
      expect(readFileSync(`/proc/self/task/${process.pid}/comm`, 'utf8').trim()).not.toBe(OWNER_THREAD_NAME);
    } finally {
      await executor.close();
    }
  });
});
