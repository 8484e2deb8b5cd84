// A keyed mutex: runs tasks with the same key one after another, so that read-check-write sequences on one import
// (code uniqueness, membership diffs, row replacement) cannot interleave. In-process only: one Imports per store.

export class KeyedMutex {
  private readonly tails = new Map<string, Promise<void>>();

  async run<T>(lockKey: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(lockKey) ?? Promise.resolve();
    let release!: () => void;
    const current = new Promise<void>((resolve) => (release = resolve));
    const tail = previous.then(() => current);
    this.tails.set(lockKey, tail);
    await previous;
    try {
      return await task();
    } finally {
      release();
      if (this.tails.get(lockKey) === tail) this.tails.delete(lockKey);
    }
  }
}
