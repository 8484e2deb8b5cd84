// The partitions a cluster node owns (issue 15): for each, a reader of its subject of the event log that appends
// every event through this node's ingest pipeline (the single-node partition owner: resident states, transitions,
// outbox, deadlines, sizes), from where this node's store last stood.
//
// - Exactly once per user: the pipeline stores each event id once per user (D29 lookup, `ei!`), and the owner's
//   events carry no `minted` mark, so an event read again (after a restart, a failed append, a partition lost and
//   taken back) is answered from the store and appended nothing.
// - Applied-through: events are appended without waiting one by one (the lanes keep each user's order, E1), up to
//   MAX_IN_FLIGHT; `appliedThrough` is the stream sequence up to which every event of the partition is durable, kept
//   in `cw!{partition}` (at most every PERSIST_MS, and when the partition is lost), where a later read resumes.
// - A failed append (a full disk, an overloaded lane) stops the read; it restarts from `appliedThrough` after
//   RETRY_MS, and the events appended meanwhile are found stored.
// - Reactions once (D37): the owner publishes how far it applied the partition to the KV bucket `audience_reacted`
//   with its watermark; a node taking the partition over appends the events up to there `quiet` (their transitions
//   are logged as a replay and fire no webhook), so only the events after the last published point can fire twice
//   (at least once; a webhook receiver dedupes on reaction, event id, cohort and trigger, which a replay keeps).
//   The point is published only once the transitions committed before it are on the cluster's transitions stream
//   (transitions.ts), whose copies the quiet appends then leave alone.
// - Gaining a partition also catches its users up with the current plans (cohorts created while another node owned
//   it), so its size counters are exact once the catch-ups end.

import type { KV } from '@nats-io/kv';
import type { Store } from '../store/contract.js';
import { key, seqPart } from '../store/layout.js';
import type { IngestPipeline } from '../ingest/types.js';
import { partitionOf } from '../domain/events/index.js';
import { listUsers } from '../backfill/users.js';
import type { EventLog } from './event-log.js';
import { retrying, type SubjectReader } from './nats.js';
import { decodeLoggedEvent } from './event-message.js';

const MAX_IN_FLIGHT = 2048;
const PERSIST_MS = 500;
const RETRY_MS = 1000;
/** A read that made no progress for this long while the partition has later events is started again. */
const STALL_MS = 3000;
const STALL_CHECK_MS = 1000;
/** How long a reacted point waits for its transitions to be published (then it is left for the next round). */
const PUBLISHED_WAIT_MS = 5000;
const STOP_PUBLISHED_WAIT_MS = 1000;
const SWEEP_BATCH = 256;

/** `cw!{partition}`: the event-log sequence through which this node applied the partition (server/store/layout.ts). */
const watermarkKey = (partition: number): string => key('cw', seqPart(partition));
/** The key of a partition's reacted-through sequence in the `audience_reacted` bucket. */
const reactedKey = (partition: number): string => `p${partition}`;
export const REACTED_BUCKET = 'audience_reacted';

interface ConsumerDeps {
  readonly log: EventLog;
  readonly pipeline: IngestPipeline;
  readonly store: Store;
  readonly reacted: KV;
  /** Resolves once the transitions committed so far are on the cluster's stream (transitions.ts); rejects after `ms`. */
  readonly published: (ms: number) => Promise<void>;
  readonly report: (line: string) => void;
}

interface Pending {
  readonly seq: number;
  done: boolean;
}

class PartitionConsumer {
  private reader: SubjectReader | undefined;
  private readonly pending: Pending[] = [];
  private inFlight = 0;
  private room: (() => void) | undefined;
  private readonly idle: Array<() => void> = [];
  private readonly waiters: Array<{ seq: number; resolve: () => void }> = [];
  private persisted: number;
  private stopped = false;
  private restarting = false;
  private timer: NodeJS.Timeout | undefined;
  private watchdog: NodeJS.Timeout | undefined;
  private lastProgressAt = Date.now();
  private checking = false;
  private persisting: Promise<void> | undefined;

  constructor(
    readonly partition: number,
    /** Every event of the partition up to this stream sequence is durable in this node's store. */
    public appliedThrough: number,
    /** Events up to this sequence were reacted to by an earlier owner: appended quiet. */
    private readonly quietThrough: number,
    private readonly deps: ConsumerDeps,
  ) {
    this.persisted = appliedThrough;
  }

  async start(): Promise<void> {
    this.timer = setInterval(() => {
      if (this.persisting === undefined) void this.persist();
    }, PERSIST_MS);
    this.timer.unref();
    this.watchdog = setInterval(() => void this.checkStalled(), STALL_CHECK_MS);
    this.watchdog.unref();
    // A read that cannot start now (NATS electing a leader) is tried again like a failed append.
    await this.read().catch((error: unknown) => this.failed(error));
  }

  private async read(): Promise<void> {
    const from = this.appliedThrough;
    const reader = await this.deps.log.read(this.partition, from, (seq, payload) => this.apply(seq, payload));
    this.reader = reader;
    reader.done.catch((error: unknown) => this.failed(error));
  }

  private async apply(seq: number, payload: Uint8Array): Promise<void> {
    if (this.stopped || this.restarting) return;
    this.lastProgressAt = Date.now();
    const { org, user, event } = decodeLoggedEvent(payload);
    const entry: Pending = { seq, done: false };
    this.pending.push(entry);
    this.inFlight++;
    this.deps.pipeline.append({ org, user, events: [event], ...(seq <= this.quietThrough ? { quiet: true } : {}) }).then(
      () => {
        entry.done = true;
        this.settle();
        this.advance();
      },
      (error: unknown) => {
        this.settle();
        this.failed(error);
      },
    );
    if (this.inFlight >= MAX_IN_FLIGHT) await new Promise<void>((resolve) => (this.room = resolve));
  }

  /**
   * An ordered consumer can go quiet without ending when its NATS server restarts: when the partition has events
   * after `appliedThrough`, nothing is in flight and nothing arrived for STALL_MS, the read is started again.
   */
  private async checkStalled(): Promise<void> {
    if (this.stopped || this.restarting || this.checking || this.inFlight > 0 || Date.now() - this.lastProgressAt < STALL_MS) return;
    this.checking = true;
    try {
      const last = await this.deps.log.lastSeq(this.partition);
      if (last > this.appliedThrough && this.inFlight === 0 && Date.now() - this.lastProgressAt >= STALL_MS) this.failed(new Error(`the read stalled at ${this.appliedThrough} of ${last}`));
      else this.lastProgressAt = Date.now();
    } catch {
      // NATS unavailable: checked again later.
    } finally {
      this.checking = false;
    }
  }

  private advance(): void {
    while (this.pending.length > 0 && (this.pending[0] as Pending).done) this.appliedThrough = (this.pending.shift() as Pending).seq;
    if (this.inFlight < MAX_IN_FLIGHT && this.room !== undefined) {
      const room = this.room;
      this.room = undefined;
      room();
    }
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      const waiter = this.waiters[i] as { seq: number; resolve: () => void };
      if (waiter.seq <= this.appliedThrough) {
        this.waiters.splice(i, 1);
        waiter.resolve();
      }
    }
  }

  /** Stops reading, lets the appends in flight settle, and reads again from `appliedThrough` after a pause. */
  private failed(error: unknown): void {
    if (this.stopped || this.restarting) return;
    this.restarting = true;
    this.deps.report(`cluster: partition ${this.partition}: reading again from ${this.appliedThrough} in ${RETRY_MS} ms: ${String(error)}`);
    void (async () => {
      await this.reader?.stop();
      await this.settled();
      this.pending.length = 0;
      this.room?.();
      this.room = undefined;
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS).unref());
      this.restarting = false;
      this.lastProgressAt = Date.now();
      if (!this.stopped) await this.read().catch((readError: unknown) => this.failed(readError));
    })();
  }

  private settle(): void {
    this.inFlight--;
    if (this.inFlight === 0) for (const resolve of this.idle.splice(0)) resolve();
  }

  /** Resolves once no append is in flight. */
  private settled(): Promise<void> {
    return this.inFlight === 0 ? Promise.resolve() : new Promise((resolve) => this.idle.push(resolve));
  }

  /** Resolves once every event of the partition up to `seq` is applied here. */
  waitThrough(seq: number): Promise<void> {
    if (seq <= this.appliedThrough) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ seq, resolve }));
  }

  /** Stores the watermark and publishes the reacted point; one at a time (a later call waits for the running one). */
  private persist(waitMs = PUBLISHED_WAIT_MS): Promise<void> {
    const next = (this.persisting ?? Promise.resolve()).then(() => this.persistNow(waitMs));
    this.persisting = next;
    void next.finally(() => {
      if (this.persisting === next) this.persisting = undefined;
    });
    return next;
  }

  private async persistNow(waitMs: number): Promise<void> {
    const through = this.appliedThrough;
    if (through <= this.persisted) return;
    try {
      await this.deps.store.batch([{ type: 'put', key: watermarkKey(this.partition), value: through }]);
      // The events through `through` are committed: once their transitions are published, a later owner may skip them.
      await this.deps.published(waitMs);
      await this.deps.reacted.put(reactedKey(this.partition), String(through));
      this.persisted = Math.max(this.persisted, through);
    } catch {
      // The next round tries again; a lower stored watermark only means more events found stored on a restart, a
      // lower published one more events reacted to again after a takeover.
    }
  }

  /** Stops reading; the appends in flight finish; the watermark is stored. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) clearInterval(this.timer);
    if (this.watchdog !== undefined) clearInterval(this.watchdog);
    this.room?.();
    await this.reader?.stop();
    await this.settled();
    this.advance();
    // Leaving: the reacted point waits little for the publisher (a handover is not held up; the next owner reacts
    // again to what it could not skip, and the stream drops the repeats by message id).
    // Not queued behind a running round, which may wait longer: a lower point published after this one is harmless.
    await this.persistNow(STOP_PUBLISHED_WAIT_MS);
  }
}

export interface OwnersOptions {
  readonly log: EventLog;
  readonly pipeline: IngestPipeline;
  /** This node's raw store (the pipeline's). */
  readonly store: Store;
  /** The `audience_reacted` bucket. */
  readonly reacted: KV;
  readonly published: (ms: number) => Promise<void>;
  /** The organizations to catch up when a partition is gained. */
  readonly organizations: () => readonly string[];
  readonly report: (line: string) => void;
}

export class PartitionOwners {
  private readonly consumers = new Map<number, PartitionConsumer>();
  private readonly changes = new Map<number, Promise<void>>();
  private readonly toCatchUp = new Set<number>();
  private catchingUp: Promise<void> | undefined;

  constructor(private readonly options: OwnersOptions) {}

  owns(partition: number): boolean {
    return this.consumers.has(partition);
  }

  owned(): number[] {
    return [...this.consumers.keys()].sort((a, b) => a - b);
  }

  /** Starts consuming `partition` from this node's stored watermark, then catches its users up (background). */
  gain(partition: number): Promise<void> {
    return this.serialised(partition, async () => {
      if (this.consumers.has(partition)) return;
      const stored = await this.options.store.get<number>(watermarkKey(partition));
      const reacted = Number((await retrying(`reading partition ${partition}'s reacted point`, () => this.options.reacted.get(reactedKey(partition)), 10_000))?.string() ?? 0);
      const consumer = new PartitionConsumer(partition, typeof stored === 'number' ? stored : 0, Number.isFinite(reacted) ? reacted : 0, {
        log: this.options.log,
        pipeline: this.options.pipeline,
        store: this.options.store,
        reacted: this.options.reacted,
        published: this.options.published,
        report: this.options.report,
      });
      this.consumers.set(partition, consumer);
      await consumer.start();
      this.options.pipeline.ownershipChanged();
      this.catchUpSoon(partition);
    });
  }

  /** Stops consuming `partition` (its appends in flight finish first). */
  lose(partition: number): Promise<void> {
    return this.serialised(partition, async () => {
      const consumer = this.consumers.get(partition);
      if (consumer === undefined) return;
      this.consumers.delete(partition);
      await consumer.stop();
    });
  }

  /** Resolves once this node applied every event of `partition` published before the call (it must own it). */
  async caughtUp(partition: number): Promise<boolean> {
    const consumer = this.consumers.get(partition);
    if (consumer === undefined) return false;
    const last = await this.options.log.lastSeq(partition);
    await consumer.waitThrough(last);
    return this.consumers.get(partition) === consumer;
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.consumers.keys()].map((partition) => this.lose(partition)));
  }

  /**
   * Brings the users of gained partitions that this node's store holds up to date with their organization's plan. The
   * partitions gained together (a start, a rebalance) share one scan of the stored users.
   */
  private catchUpSoon(partition: number): void {
    this.toCatchUp.add(partition);
    this.catchingUp ??= (async () => {
      // The gains of one balancing round land within a moment of each other: let them join the first scan.
      await new Promise((resolve) => setTimeout(resolve, 100).unref());
      while (this.toCatchUp.size > 0) {
        const partitions = new Set(this.toCatchUp);
        this.toCatchUp.clear();
        await this.catchUp(partitions).catch((error: unknown) => this.options.report(`cluster: catching partitions ${[...partitions].join(', ')} up failed: ${String(error)}`));
      }
    })().finally(() => (this.catchingUp = undefined));
  }

  private async catchUp(partitions: ReadonlySet<number>): Promise<void> {
    const { store, pipeline } = this.options;
    for (const org of this.options.organizations()) {
      let after: string | null = null;
      for (;;) {
        const users = await listUsers(store, org, after, SWEEP_BATCH);
        if (users.length === 0) break;
        after = users[users.length - 1] as string;
        const mine = users.filter((user) => {
          const partition = partitionOf(org, user, pipeline.partitions);
          return partitions.has(partition) && this.consumers.has(partition);
        });
        if (mine.length > 0) await pipeline.catchUp(org, mine, { quiet: true });
      }
    }
  }

  private serialised(partition: number, work: () => Promise<void>): Promise<void> {
    const previous = this.changes.get(partition) ?? Promise.resolve();
    const next = previous.then(work, work);
    this.changes.set(partition, next.catch(() => undefined));
    return next;
  }
}
