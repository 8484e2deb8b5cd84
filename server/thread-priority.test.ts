// serve --helper-nice (thread-priority.ts): every thread of the process but the main one gets the main thread's nice
// value + n, threads started later too (at the next sweep); 0 and a system without /proc/self/task change nothing.
// Runs in the test's own process (vitest's forks pool: the test runs on its process's main thread).

import { readdirSync } from 'node:fs';
import { getPriority } from 'node:os';
import { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { lowerHelperThreads } from './thread-priority.js';

const workers: Worker[] = [];
afterEach(async () => {
  for (const worker of workers.splice(0)) await worker.terminate();
});

function otherThreads(): number[] {
  return readdirSync('/proc/self/task').map(Number).filter((tid) => tid !== process.pid);
}

/** A worker thread that stays alive until terminated. */
async function startWorker(): Promise<void> {
  const worker = new Worker('setInterval(() => {}, 1000);', { eval: true });
  workers.push(worker);
  await new Promise<void>((resolve, reject) => {
    worker.once('online', resolve);
    worker.once('error', reject);
  });
}

describe('lowerHelperThreads', () => {
  it('lowers every other thread to the main thread\'s nice + n, and threads started later at the next sweep', async () => {
    const base = getPriority(process.pid);
    const priority = lowerHelperThreads(3, { everyMs: 0 });
    expect(getPriority(process.pid)).toBe(base);
    const first = otherThreads();
    expect(first.length).toBeGreaterThan(0);
    for (const tid of first) expect(getPriority(tid)).toBe(Math.min(19, base + 3));

    await startWorker();
    const added = otherThreads().filter((tid) => !first.includes(tid));
    expect(added.length).toBeGreaterThan(0);
    const before = priority.lowered;
    priority.sweep();
    expect(priority.lowered).toBe(before + added.length);
    for (const tid of added) expect(getPriority(tid)).toBe(Math.min(19, base + 3));
    expect(getPriority(process.pid)).toBe(base);
    priority.stop();
  });

  it('never goes past 19', () => {
    const priority = lowerHelperThreads(19, { everyMs: 0 });
    for (const tid of otherThreads()) expect(getPriority(tid)).toBe(19);
    expect(getPriority(process.pid)).toBeLessThan(19);
    priority.stop();
  });

  it('changes nothing with 0, or where the threads cannot be listed', async () => {
    await startWorker();
    const before = new Map(otherThreads().map((tid) => [tid, getPriority(tid)]));
    const none = lowerHelperThreads(0, { everyMs: 0 });
    const elsewhere = lowerHelperThreads(5, { everyMs: 0, taskDir: '/nonexistent/task' });
    none.sweep();
    elsewhere.sweep();
    expect(none.lowered).toBe(0);
    expect(elsewhere.lowered).toBe(0);
    for (const [tid, nice] of before) expect(getPriority(tid)).toBe(nice);
  });
});
