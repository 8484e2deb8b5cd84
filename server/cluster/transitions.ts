// The cluster's transitions stream (issue 15, D38): what every node's live stream and dashboard charts read.
//
// - Owners publish: each node logs its partitions' transitions in its own store (`t!`, in the same batch as the events
//   that caused them, as a single node does); `TransitionPublisher` copies that log, in commit order, to the JetStream
//   stream `AUDIENCE_TRANSITIONS` and keeps how far it got in the store (`m!transitions-published`), so what a crash
//   cut short is published when the node starts again. Entries marked `quiet` (a node replaying or catching up a
//   partition it took over: an earlier owner published them) stay local. Each message carries a `Nats-Msg-Id` made of
//   the entry's content (org, user, event, transitions; not the commit time), so an entry published again by the same
//   or another owner inside the duplicate window is stored once.
// - A partition's reacted-through point (owners.ts) is published only once the transitions committed before it are
//   published: a node taking the partition over appends up to there quiet, knowing the stream has them.
// - Every node follows the stream from its start (`follow`: the last day feeds the charts, new entries the live
//   subscribers) and serves resuming subscribers from it (`TransitionSource`): a cursor is a stream sequence, the same
//   on every node, so a client may reconnect to any node. JetStream keeps the entries for the retention (48 h), after
//   which a cursor closes with 4410.

import { createHash } from 'node:crypto';
import type { NatsConnection } from '@nats-io/transport-node';
import { DeliverPolicy, jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { plainCodec } from '../msgpack-keys.js';
import type { Store } from '../store/contract.js';
import { key } from '../store/layout.js';
import { reactionsKeys, type TransitionLogEntry } from '../domain/reactions/contract.js';
import { readTransitionLog, type LoggedEntry } from '../domain/reactions/log.js';
import type { TransitionSource } from '../reactions/stream/hub.js';
import { ensureStream, readInOrder, retrying, type SubjectReader } from './nats.js';

export const TRANSITIONS_STREAM = 'AUDIENCE_TRANSITIONS';
const SUBJECT = 'audience.transitions';
const PUBLISHED_KEY = key('m', 'transitions-published');
const DUPLICATE_WINDOW_NS = 2 * 60 * 1_000_000_000;
const PAGE = 256;
const PAGES_IN_FLIGHT = 4;
/** Committed entries held for publishing before the publisher reads them back from the store instead. */
const QUEUE_MAX = 50_000;
const RETRY_MS = 1000;
const STALL_MS = 3000;

const packr = plainCodec();

/** The message id of an entry: its content, not where or when it was committed (another owner logs the same). */
export function transitionMessageId(entry: TransitionLogEntry): string {
  const content = JSON.stringify([entry.org, entry.user, entry.event_id, entry.transitions, entry.replay === true]);
  return createHash('sha256').update(content).digest('base64url');
}

export class ClusterTransitions implements TransitionSource {
  private reader: SubjectReader | undefined;
  private seen = 0;
  private lastProgressAt = Date.now();
  private watchdog: NodeJS.Timeout | undefined;
  private stopped = false;
  private restarting = false;

  private constructor(
    readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
  ) {}

  static async open(nc: NatsConnection, options: { readonly replicas: number; readonly retentionMs: number }): Promise<ClusterTransitions> {
    const jsm = await jetstreamManager(nc);
    await ensureStream(jsm, {
      name: TRANSITIONS_STREAM,
      subjects: [SUBJECT],
      num_replicas: options.replicas,
      max_age: options.retentionMs * 1_000_000,
      duplicate_window: DUPLICATE_WINDOW_NS,
    });
    return new ClusterTransitions(jetstream(nc), jsm);
  }

  private async state(): Promise<{ first: number; last: number }> {
    const { state } = await this.jsm.streams.info(TRANSITIONS_STREAM);
    return { first: state.first_seq, last: state.last_seq };
  }

  async lastCursor(): Promise<number> {
    return (await this.state()).last;
  }

  async prunedThrough(): Promise<number> {
    return Math.max(0, (await this.state()).first - 1);
  }

  /** Entries after `afterCursor`, at most `limit`: exactly those the stream holds, or an error. */
  async *read(afterCursor: number, limit: number): AsyncIterable<LoggedEntry> {
    const { first, last } = await this.state();
    const from = Math.max(afterCursor + 1, first);
    const to = Math.min(last, afterCursor + limit);
    if (to < from) return;
    const consumer = await this.js.consumers.get(TRANSITIONS_STREAM, { filter_subjects: SUBJECT, deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: from });
    const entries: LoggedEntry[] = [];
    for await (const message of await consumer.fetch({ max_messages: to - from + 1, expires: 5000 })) {
      entries.push({ cursor: message.seq, entry: packr.unpack(message.data) as TransitionLogEntry });
      if (message.seq >= to) break;
    }
    if (entries.length === 0 || (entries[entries.length - 1] as LoggedEntry).cursor < to) {
      throw new Error(`the transitions stream answered ${entries.length} of its entries ${from}..${to}`);
    }
    yield* entries;
  }

  /**
   * Follows the stream from its first kept entry, then live: `deliver` gets each entry once, in order. A read that ends
   * or goes quiet while the stream has later entries (a restarted NATS server) is started again after the last seen.
   */
  async follow(deliver: (entry: LoggedEntry) => void, report: (line: string) => void): Promise<void> {
    this.seen = await this.prunedThrough();
    const apply = (seq: number, payload: Uint8Array): void => {
      this.lastProgressAt = Date.now();
      if (seq <= this.seen) return;
      this.seen = seq;
      deliver({ cursor: seq, entry: packr.unpack(payload) as TransitionLogEntry });
    };
    const read = async (): Promise<void> => {
      const reader = await retrying('reading the transitions stream', () => readInOrder(this.js, TRANSITIONS_STREAM, SUBJECT, this.seen, apply));
      this.reader = reader;
      reader.done.catch((error: unknown) => again(`the read ended (${String(error)})`));
    };
    const again = (why: string): void => {
      if (this.stopped || this.restarting) return;
      this.restarting = true;
      report(`cluster: transitions stream: ${why}; reading again from ${this.seen}`);
      void (async () => {
        await this.reader?.stop();
        await new Promise((resolve) => setTimeout(resolve, 250).unref());
        this.lastProgressAt = Date.now();
        if (!this.stopped) await read();
      })()
        .catch((error: unknown) => report(`cluster: reading the transitions stream again failed: ${String(error)}`))
        .finally(() => (this.restarting = false));
    };
    await read();
    this.watchdog = setInterval(() => {
      if (this.stopped || this.restarting || Date.now() - this.lastProgressAt < STALL_MS) return;
      void this.state().then(
        ({ last }) => {
          if (last > this.seen && Date.now() - this.lastProgressAt >= STALL_MS) again(`the read stalled at ${this.seen} of ${last}`);
          else this.lastProgressAt = Date.now();
        },
        () => undefined,
      );
    }, 1000);
    this.watchdog.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.watchdog !== undefined) clearInterval(this.watchdog);
    await this.reader?.stop();
  }
}

/**
 * Copies this node's committed transitions log to the cluster's stream, in commit order, from where it stopped. While
 * it keeps up, the entries come from the commits themselves (`notify`); after a restart or a failure, or when it fell
 * behind by more than QUEUE_MAX, from the store. Up to PAGES_IN_FLIGHT pages are sent before the first is confirmed.
 */
export class TransitionPublisher {
  /** Every entry through this cursor is on the stream (or quiet), and stored as such. */
  private through = 0;
  /** Entries up to this cursor were handed to the stream (confirmed or not). */
  private sent = 0;
  private target = 0;
  /** Committed entries not yet sent, in commit order (dropped when it overflows: read back from the store). */
  private queue: LoggedEntry[] = [];
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private readonly waiters: Array<{ cursor: number; resolve: () => void }> = [];

  constructor(
    private readonly js: JetStreamClient,
    private readonly store: Store,
    private readonly report: (line: string) => void,
  ) {}

  /** Publishes what was committed and not yet published (a crash between the two), then follows `notify`. */
  async start(): Promise<void> {
    const through = await this.store.get<number>(PUBLISHED_KEY);
    const last = await this.store.get<number>(reactionsKeys.logCursor());
    this.through = this.sent = typeof through === 'number' ? through : 0;
    this.target = Math.max(this.through, typeof last === 'number' ? last : 0);
    this.kick();
  }

  /** Entries just committed (pipeline.onCommitted, in commit order). */
  notify(entries: readonly LoggedEntry[]): void {
    for (const entry of entries) {
      if (entry.cursor > this.target) this.target = entry.cursor;
      this.queue.push(entry);
    }
    if (this.queue.length > QUEUE_MAX) this.queue = [];
    this.kick();
  }

  /** Resolves once everything committed before the call is published. */
  flushed(): Promise<void> {
    const cursor = this.target;
    if (this.through >= cursor) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ cursor, resolve }));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
    for (const waiter of this.waiters.splice(0)) waiter.resolve();
  }

  private kick(): void {
    if (this.running !== undefined) {
      this.again = true;
      return;
    }
    this.running = this.run().finally(() => {
      this.running = undefined;
      if (this.again && !this.stopped) {
        this.again = false;
        this.kick();
      }
    });
  }

  /** The next entries after `sent`: from the queue when it continues there, else from the store. */
  private async nextPage(): Promise<LoggedEntry[]> {
    while (this.queue.length > 0 && (this.queue[0] as LoggedEntry).cursor <= this.sent) this.queue.shift();
    if (this.queue.length > 0 && (this.queue[0] as LoggedEntry).cursor === this.sent + 1) return this.queue.splice(0, PAGE);
    const page: LoggedEntry[] = [];
    for await (const entry of readTransitionLog(this.store, this.sent, PAGE)) page.push(entry);
    return page;
  }

  private async run(): Promise<void> {
    const inFlight: Array<{ through: number; done: Promise<unknown> }> = [];
    const confirmFirst = async (): Promise<void> => {
      const first = inFlight.shift() as { through: number; done: Promise<unknown> };
      await first.done;
      await this.store.batch([{ type: 'put', key: PUBLISHED_KEY, value: first.through }]);
      this.advance(first.through);
    };
    while (!this.stopped) {
      try {
        if (this.sent < this.target) {
          const page = await this.nextPage();
          if (page.length === 0) {
            // Committed cursors always have entries; none means the log was pruned past them.
            const through = this.target;
            this.sent = through;
            inFlight.push({ through, done: Promise.resolve() });
          } else {
            // Sent in order on one connection: stored in this order.
            const done = Promise.all(page.filter(({ entry }) => entry.quiet !== true).map(({ entry }) => this.js.publish(SUBJECT, packr.pack(entry), { msgID: transitionMessageId(entry) })));
            done.catch(() => undefined); // awaited in order below
            this.sent = (page[page.length - 1] as LoggedEntry).cursor;
            inFlight.push({ through: this.sent, done });
          }
          if (inFlight.length >= PAGES_IN_FLIGHT) await confirmFirst();
        } else if (inFlight.length > 0) {
          await confirmFirst();
        } else {
          return;
        }
      } catch (error) {
        this.report(`cluster: publishing transitions after ${this.through} failed (tried again in ${RETRY_MS} ms): ${String(error)}`);
        await Promise.allSettled(inFlight.splice(0).map((page) => page.done));
        // Sent again from the last confirmed entry (the stream drops the repeats by message id), from the store.
        this.sent = this.through;
        this.queue = [];
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS).unref());
      }
    }
    await Promise.allSettled(inFlight.map((page) => page.done));
  }

  private advance(through: number): void {
    this.through = Math.max(this.through, through);
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      const waiter = this.waiters[i] as { cursor: number; resolve: () => void };
      if (waiter.cursor <= this.through) {
        this.waiters.splice(i, 1);
        waiter.resolve();
      }
    }
  }
}
