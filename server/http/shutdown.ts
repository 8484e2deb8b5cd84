// Counts requests in flight (received, not yet fully answered nor aborted) so that a graceful close can wait for
// them to drain.

export class InFlightTracker {
  private count = 0;
  private waiters: Array<() => void> = [];

  begin(): void {
    this.count++;
  }

  end(): void {
    this.count--;
    if (this.count === 0 && this.waiters.length > 0) {
      const waiters = this.waiters;
      this.waiters = [];
      for (const wake of waiters) wake();
    }
  }

  size(): number {
    return this.count;
  }

  /** Resolves once nothing is in flight. */
  drained(): Promise<void> {
    if (this.count === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }
}
