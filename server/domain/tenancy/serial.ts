// Runs control-plane mutations one at a time, so a check made in memory still holds when its write lands.
// Reads never wait: they see memory, which a mutation changes only after its batch is written.

export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.tail.then(task);
    this.tail = result.catch(() => undefined);
    return result;
  }
}
