// Publishing stateless segmentation's events to ingestion after the reply (D24): each event is checked against its
// schema, non-conforming ones are dropped and counted, the rest are appended for the user. Never throws.
// Bounded: while more than `capacity` events wait to be published, new calls wait for room before they are handled
// (backpressure on the stateless route instead of a backlog that grows with the load, or events dropped).

import { ServiceError } from '../../errors.js';
import type { BatchOp } from '../../store/contract.js';
import type { SchemaRegistry } from '../../domain/schemas/index.js';
import { userKey } from '../../domain/identity/index.js';
import type { IngestPipeline, NewEvent } from '../../ingest/types.js';

/** Counters of one organization's published stateless events (for tests and metrics). */
export interface SegmentationStats {
  /** Events appended to ingestion. */
  published: number;
  /** Events dropped because they did not conform to their schema (D24). */
  dropped: number;
  /** Events lost because the append failed (logged). */
  failed: number;
}


export interface PublishDeps {
  readonly schemas: SchemaRegistry;
  readonly pipeline: IngestPipeline;
  readonly log: (line: string) => void;
  /** Events waiting to be published above which new calls wait for room (default PUBLISH_BACKLOG). */
  readonly capacity?: number;
}

/** Default bound of the publication backlog, in events (a thousand 10-event calls). */
export const PUBLISH_BACKLOG = 10_000;

export interface Publication {
  readonly org: string;
  readonly user: string;
  readonly events: readonly NewEvent[];
}

export class Publisher {
  /** Tail of each user's chain: a user's publications are appended in the order the requests arrived. */
  private readonly chains = new Map<string, Promise<void>>();
  private readonly counters = new Map<string, SegmentationStats>();
  /** Publications started and not yet finished, by organization. */
  private readonly pending = new Map<string, Set<Promise<void>>>();

  /** Events handed to `publishLater` and not yet published (or dropped, or failed). */
  private backlog = 0;
  private waiting: Array<() => void> = [];
  private readonly capacity: number;

  constructor(private readonly deps: PublishDeps) {
    this.capacity = deps.capacity ?? PUBLISH_BACKLOG;
  }

  /** Undefined when there is room for another call's events, else a promise that resolves once there is. */
  room(): Promise<void> | undefined {
    if (this.backlog < this.capacity) return undefined;
    return new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  /** Events waiting to be published (tests and metrics). */
  get pendingEvents(): number {
    return this.backlog;
  }

  /** The organization's counters (zeros when it never published). A copy. */
  stats(org: string): SegmentationStats {
    const counters = this.counters.get(org);
    return counters === undefined ? { published: 0, dropped: 0, failed: 0 } : { ...counters };
  }

  /** The counters summed over every organization (metrics). */
  totals(): SegmentationStats {
    const total = { published: 0, dropped: 0, failed: 0 };
    for (const c of this.counters.values()) {
      total.published += c.published;
      total.dropped += c.dropped;
      total.failed += c.failed;
    }
    return total;
  }

  /**
   * Resolves once every publication of the organization (of every organization when none is given) started before or
   * while waiting has finished: tests wait on it, and a graceful stop calls it before closing the pipeline.
   */
  async published(org?: string): Promise<void> {
    for (;;) {
      const running =
        org === undefined ? [...this.pending.values()].flatMap((set) => [...set]) : [...(this.pending.get(org) ?? [])];
      if (running.length === 0) return;
      await Promise.allSettled(running);
    }
  }

  private countersOf(org: string): SegmentationStats {
    let counters = this.counters.get(org);
    if (counters === undefined) {
      counters = { published: 0, dropped: 0, failed: 0 };
      this.counters.set(org, counters);
    }
    return counters;
  }

  /**
   * Starts publishing after the current turn of the event loop (the reply is written first). Registered as pending
   * at once, so that `segmentationPublished` called after the reply waits for it.
   */
  publishLater(publication: Publication): void {
    if (publication.events.length === 0) return;
    const size = publication.events.length;
    this.backlog += size;
    const chainKey = `${publication.org}\n${publication.user}`;
    const previous = this.chains.get(chainKey) ?? Promise.resolve();
    const run = previous
      .then(() => new Promise<void>((resolve) => setImmediate(resolve)))
      .then(() => this.publish(publication))
      .catch((error: unknown) => this.deps.log(`segmentation: publishing failed: ${describe(error)}`));
    this.chains.set(chainKey, run);
    let running = this.pending.get(publication.org);
    if (running === undefined) {
      running = new Set();
      this.pending.set(publication.org, running);
    }
    const tracked = running;
    tracked.add(run);
    void run.finally(() => {
      this.backlog -= size;
      if (this.backlog < this.capacity && this.waiting.length > 0) {
        const waiting = this.waiting;
        this.waiting = [];
        for (const resolve of waiting) resolve();
      }
      tracked.delete(run);
      if (tracked.size === 0 && this.pending.get(publication.org) === tracked) this.pending.delete(publication.org);
      if (this.chains.get(chainKey) === run) this.chains.delete(chainKey);
    });
  }

  private async publish({ org, user, events }: Publication): Promise<void> {
    const counters = this.countersOf(org);
    const accepted: NewEvent[] = [];
    const extraOps: BatchOp[] = [];
    const grown = new Set<string>();
    let dropped = 0;
    try {
      for (const event of events) {
        try {
          const ops = await this.deps.schemas.check(org, event.name, event.properties);
          if (ops.length > 0) grown.add(event.name);
          extraOps.push(...ops);
          accepted.push(event);
        } catch (error) {
          if (!(error instanceof ServiceError) || error.code !== 1007) throw error;
          dropped += 1;
          counters.dropped += 1;
        }
      }
      if (accepted.length === 0) return;
      // A user with stored history is a recorded user (identity's `u!`), like a tracked one; idempotent.
      extraOps.push({ type: 'put', key: userKey(org, user), value: { id: user } });
      await this.deps.pipeline.append({ org, user, events: accepted, extraOps });
      counters.published += accepted.length;
    } catch (error) {
      for (const name of grown) this.deps.schemas.invalidate(org, name);
      counters.failed += events.length - dropped;
      this.deps.log(`segmentation: publishing ${events.length - dropped} event(s) for user ${user} of ${org} failed: ${describe(error)}`);
    }
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}
