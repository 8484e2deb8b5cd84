// Per-key serialisation: tasks with the same key run one after another in the order they were queued, so that
// read-decide-write sequences (aliases of an organization, D28; codes and members of an import) never interleave.

export class KeyedQueue {
  private readonly tails = new Map<string, Promise<void>>();

  /** True while a task of `key` runs or waits: a lock-free read could then overtake a queued write. */
  isBusy(key: string): boolean {
    return this.tails.has(key);
  }

  /** Runs `task` after every task queued before it under `key`; the queueing happens synchronously. */
  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const done = new Promise<void>((resolve) => (release = resolve));
    const tail = previous.then(() => done);
    this.tails.set(key, tail);
    await previous;
    try {
      return await task();
    } finally {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}
