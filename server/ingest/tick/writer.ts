// The groups' store writes (server/ingest/README.md): group commit across groups. Groups hand their writes over in
// the order they were built. While one store batch is in flight, the groups built meanwhile wait, and are then
// written TOGETHER as one store batch (one LevelDB write, one fsync with --fsync), in build order, so a later put of
// a key wins as it would in separate batches. After a write, every group of it commits in build order (sizes,
// cache, answers) before the next write is prepared.
//
// Why: a group can build faster than a synced write when its users are resident, and with one batch per group such
// groups would queue behind the writes one by one, each waiting for every write before it.
//
// A merged batch that fails is written again one group at a time, so a group fails only for its own writes (D40) or
// for the store's, exactly as if it had been written alone.
//
// The size counters the batch's groups changed are written once per batch, after the groups' writes (sizes.ts).

import type { BatchOp, Store } from '../../store/contract.js';
import { PendingCounts, type CounterWrites } from './sizes.js';

export interface GroupWrite {
  /**
   * The group's writes, built when its write is prepared (maybe again, if a merged write failed). Its size counters
   * are counted on in `pending`, on top of the counts the groups before it in the same batch left (sizes.ts `count`).
   */
  ops(pending: PendingCounts): BatchOp[];
  /** After its batch was written: called in build order, before the next batch is prepared. */
  commit(): void;
}

interface Waiting {
  readonly job: GroupWrite;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

export class GroupWriter {
  private queue: Waiting[] = [];
  private writing = false;
  /** Store batches written (for tests and metrics: groups per write). */
  batches = 0;

  constructor(
    private readonly store: Store,
    /** Every batch is synced (`serve --fsync`). */
    readonly sync: boolean,
    /** Writes the counts a batch's groups left in `pending` (sizes.ts AudienceSizes). */
    private readonly counters: { batchOps(pending: PendingCounts): CounterWrites },
  ) {}

  /** Resolves once the group's writes are stored and it has committed; rejects when they could not be stored. */
  write(job: GroupWrite): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ job, resolve, reject });
      if (!this.writing) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.writing = true;
    try {
      while (this.queue.length > 0) {
        const waiting = this.queue;
        this.queue = [];
        const failure = await this.attempt(waiting);
        if (failure === undefined) continue;
        if (waiting.length === 1) (waiting[0] as Waiting).reject(failure.error);
        else {
          for (const one of waiting) {
            const alone = await this.attempt([one]);
            if (alone !== undefined) one.reject(alone.error);
          }
        }
      }
    } finally {
      this.writing = false;
    }
  }

  /** Writes the groups as one batch and commits them; answers the failure instead when the batch was not written. */
  private async attempt(waiting: readonly Waiting[]): Promise<{ error: unknown } | undefined> {
    try {
      const pending = new PendingCounts();
      const ops: BatchOp[] = [];
      for (const { job } of waiting) for (const op of job.ops(pending)) ops.push(op);
      const counts = this.counters.batchOps(pending);
      for (const op of counts.ops) ops.push(op);
      if (ops.length > 0) {
        this.batches += 1;
        await this.store.batch(ops, this.sync ? { sync: true } : undefined);
      }
      counts.written();
    } catch (error) {
      return { error };
    }
    for (const one of waiting) {
      try {
        one.job.commit();
        one.resolve();
      } catch (error) {
        one.reject(error);
      }
    }
    return undefined;
  }
}
