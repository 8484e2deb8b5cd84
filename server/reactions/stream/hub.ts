// The live stream's hub (D38): subscribers of the global transitions log `t!{cursor}`. Committed entries are
// published to live subscribers in commit order; a subscriber that resumes from a cursor first reads the stored log
// after it (in bounded pages, waiting while its socket is backed up) and turns live once it has read everything
// published so far, so nothing is lost or repeated at the switch (publishing happens only after a commit, and the
// switch is synchronous with the last read). A subscriber whose socket holds more than `maxBufferedBytes` unsent is
// closed with 4429: memory per client stays bounded. Entries older than the retention are pruned; a cursor older
// than what is kept closes with 4410. A cluster node (issue 15) gives the hub another `source`: the cluster's
// transitions stream, whose sequences are the cursors, fed to `publish` by the node as it reads the stream.

import type { Store } from '../../store/contract.js';
import { reactionsKeys, type TransitionLogEntry } from '../../domain/reactions/contract.js';
import { logEntryOf, readTransitionLog, type LoggedEntry, type StoredLogEntry } from '../../domain/reactions/log.js';
import { prefixEnd } from '../../store/contract.js';
import { fromSeqPart } from '../../store/layout.js';

/** Where the pruner has deleted through (cursors at or below it are gone). */
const PRUNED_KEY = 'tp';
const PAGE = 500;
const PRUNE_BATCH = 1000;

/** A position in the stream: after transition `index` of entry `cursor` (index -1: before the entry's first). */
export interface StreamPosition {
  readonly cursor: number;
  readonly index: number;
}

/** `"{cursor}.{index}"` or `"{cursor}"` (after the whole entry); undefined when malformed. */
export function parsePosition(text: string): StreamPosition | undefined {
  const match = /^(\d{1,15})(?:\.(\d{1,6}))?$/.exec(text);
  if (match === null) return undefined;
  return { cursor: Number(match[1]), index: match[2] === undefined ? Number.MAX_SAFE_INTEGER : Number(match[2]) };
}

/** One frame of the stream (D38). */
export interface StreamMessage {
  /** `"{entry}.{index}"`: pass it back as `after` to resume right after this transition. */
  readonly cursor: string;
  readonly kind: 'entered' | 'exited';
  readonly cohort: { readonly id: string; readonly code: number };
  readonly user_id: string;
  /** ISO 8601 time of the transition. */
  readonly time: string;
  /** The causing event's id; null for a deadline (D36) or a re-evaluation. */
  readonly event_id: string | null;
}

export interface StreamSocket {
  send(text: string): boolean;
  bufferedAmount(): number;
  end(code: number, reason: string): void;
}

export interface Subscription {
  readonly org: string;
  /** Whether the key may see cohort `code` (D9); asked per message (cohorts come and go). */
  canSee(code: number): boolean;
  /** The cohort's id for the message; undefined when it no longer exists (nothing is sent). */
  cohortId(code: number): string | undefined;
  /** Only these cohort codes (optional `cohorts=`). */
  readonly only?: ReadonlySet<number>;
  /** Resume after this position; absent: live from now. */
  readonly after?: StreamPosition;
}

interface Subscriber {
  readonly socket: StreamSocket;
  readonly sub: Subscription;
  position: StreamPosition;
  live: boolean;
  closed: boolean;
  /** A catch-up waiting for the socket to drain. */
  resume?: () => void;
}

/** Where subscribers resuming from a cursor read (default: this node's `t!` log). */
export interface TransitionSource {
  /** The cursor of the last entry (the position of a subscriber without `after`). */
  lastCursor(): Promise<number>;
  /** Entries after `afterCursor` in order, at most `limit`. */
  read(afterCursor: number, limit: number): AsyncIterable<LoggedEntry>;
  /** Cursors at or below this are no longer kept (4410). */
  prunedThrough(): Promise<number>;
}

export interface StreamHubOptions {
  readonly store: Store;
  /** Default: the store's `t!` log. The store's log is pruned in either case. */
  readonly source?: TransitionSource;
  readonly now: () => number;
  /** Transitions are kept at least this long (default 48 h; D38 asks for at least 24). */
  readonly retentionMs?: number;
  /** Unsent bytes past which a subscriber is dropped with 4429 (default 1 MiB). */
  readonly maxBufferedBytes?: number;
  readonly log?: (line: string) => void;
}

export class StreamHub {
  private readonly subscribers = new Set<Subscriber>();
  private last: number;
  private readonly retentionMs: number;
  private readonly maxBuffered: number;
  private readonly timer: NodeJS.Timeout;
  private pruning: Promise<void> | undefined;

  private constructor(
    private readonly options: StreamHubOptions,
    lastCursor: number,
  ) {
    this.last = lastCursor;
    this.retentionMs = options.retentionMs ?? 48 * 3_600_000;
    this.maxBuffered = options.maxBufferedBytes ?? 1024 * 1024;
    this.timer = setInterval(() => void this.prune(), Math.min(600_000, Math.max(1000, this.retentionMs / 10)));
    this.timer.unref();
  }

  static async open(options: StreamHubOptions): Promise<StreamHub> {
    const last = options.source === undefined ? await options.store.get<number>(reactionsKeys.logCursor()) : await options.source.lastCursor();
    return new StreamHub(options, typeof last === 'number' ? last : 0);
  }

  get clients(): number {
    return this.subscribers.size;
  }

  /** The cursors every new transition will be after (the last committed). */
  lastCursor(): number {
    return this.last;
  }

  /** Committed entries, in commit order (pipeline.onCommitted). */
  publish(entries: readonly { readonly cursor: number; readonly entry: TransitionLogEntry }[]): void {
    for (const { cursor, entry } of entries) {
      if (cursor > this.last) this.last = cursor;
      for (const s of this.subscribers) if (s.live) this.deliver(s, cursor, entry);
    }
  }

  /** A new subscriber: 4410 when `after` is older than what is kept; else catch-up (if `after`) then live. */
  async subscribe(socket: StreamSocket, sub: Subscription): Promise<Subscriber | undefined> {
    const s: Subscriber = { socket, sub, position: sub.after ?? { cursor: this.last, index: Number.MAX_SAFE_INTEGER }, live: sub.after === undefined, closed: false };
    this.subscribers.add(s);
    if (sub.after !== undefined) {
      const pruned = this.options.source === undefined ? ((await this.options.store.get<number>(PRUNED_KEY)) ?? 0) : await this.options.source.prunedThrough();
      if (sub.after.cursor < pruned) {
        this.drop(s, 4410, 'cursor older than the kept transitions');
        return undefined;
      }
      void this.catchUp(s).catch((error: unknown) => {
        this.options.log?.(`stream: a catch-up failed: ${String(error)}`);
        this.drop(s, 1011, 'the stored transitions could not be read');
      });
    }
    return s;
  }

  /** The socket was closed (by either side). */
  unsubscribe(socket: StreamSocket): void {
    for (const s of this.subscribers) {
      if (s.socket !== socket) continue;
      s.closed = true;
      s.resume?.();
      this.subscribers.delete(s);
    }
  }

  /** Whether the socket's catch-up is waiting for it to drain (backpressure; for tests and diagnostics). */
  waitingForDrain(socket: StreamSocket): boolean {
    for (const s of this.subscribers) if (s.socket === socket && s.resume !== undefined) return true;
    return false;
  }

  /** The socket sent what was queued: a waiting catch-up goes on. */
  drained(socket: StreamSocket): void {
    for (const s of this.subscribers) if (s.socket === socket) s.resume?.();
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.pruning;
  }

  /** Deletes entries committed before the retention, oldest first, in bounded batches; remembers how far. */
  async prune(): Promise<void> {
    if (this.pruning !== undefined) return;
    this.pruning = (async () => {
      const cutoff = this.options.now() - this.retentionMs;
      const prefix = reactionsKeys.logPrefix();
      for (;;) {
        const keys: string[] = [];
        let through = -1;
        let done = false;
        for await (const [key, stored] of this.options.store.iterate<StoredLogEntry | TransitionLogEntry>({ gte: prefix, lt: prefixEnd(prefix), limit: PRUNE_BATCH })) {
          if (logEntryOf(stored).at >= cutoff) {
            done = true;
            break;
          }
          keys.push(key);
          through = fromSeqPart(key.slice(key.lastIndexOf('!') + 1));
        }
        if (keys.length > 0) {
          await this.options.store.batch([...keys.map((key) => ({ type: 'del' as const, key })), { type: 'put', key: PRUNED_KEY, value: through }]);
        }
        if (done || keys.length < PRUNE_BATCH) return;
      }
    })()
      .catch((error: unknown) => this.options.log?.(`stream: pruning the transitions log failed: ${String(error)}`))
      .finally(() => {
        this.pruning = undefined;
      });
    await this.pruning;
  }

  private async catchUp(s: Subscriber): Promise<void> {
    for (;;) {
      let read = 0;
      const after = Math.max(0, s.position.cursor - 1);
      const page = this.options.source === undefined ? readTransitionLog(this.options.store, after, PAGE) : this.options.source.read(after, PAGE);
      for await (const { cursor, entry } of page) {
        read++;
        this.deliver(s, cursor, entry);
        if (s.closed) return;
      }
      // Caught up with everything committed so far: live from here (no await between the check and the switch).
      if (s.position.cursor >= this.last && read < PAGE) {
        s.live = true;
        return;
      }
      if (read === 0 && s.position.cursor < this.last) s.position = { cursor: this.last, index: Number.MAX_SAFE_INTEGER };
      while (!s.closed && s.socket.bufferedAmount() > this.maxBuffered / 2) {
        await new Promise<void>((resolve) => {
          s.resume = resolve;
        });
        s.resume = undefined;
      }
      if (s.closed) return;
    }
  }

  private deliver(s: Subscriber, cursor: number, entry: TransitionLogEntry): void {
    if (s.closed || cursor < s.position.cursor) return;
    const from = cursor === s.position.cursor ? s.position.index + 1 : 0;
    if (entry.replay === true || entry.org !== s.sub.org) {
      s.position = { cursor, index: Number.MAX_SAFE_INTEGER };
      return;
    }
    for (let i = from; i < entry.transitions.length; i++) {
      const t = entry.transitions[i] as TransitionLogEntry['transitions'][number];
      s.position = { cursor, index: i };
      if ((s.sub.only !== undefined && !s.sub.only.has(t.cohort)) || !s.sub.canSee(t.cohort)) continue;
      const id = s.sub.cohortId(t.cohort);
      if (id === undefined) continue;
      const message: StreamMessage = { cursor: `${cursor}.${i}`, kind: t.kind, cohort: { id, code: t.cohort }, user_id: entry.user, time: new Date(t.time).toISOString(), event_id: entry.event_id };
      s.socket.send(JSON.stringify(message));
      if (s.socket.bufferedAmount() > this.maxBuffered) {
        this.drop(s, 4429, 'the client reads too slowly');
        return;
      }
    }
    s.position = { cursor, index: Number.MAX_SAFE_INTEGER };
  }

  private drop(s: Subscriber, code: number, reason: string): void {
    s.closed = true;
    this.subscribers.delete(s);
    s.resume?.();
    s.socket.end(code, reason);
  }
}
