// The webhook delivery loop (D37). The outbox is on disk (`oq!{reaction}!{seq}` pending, `od!{reaction}!{seq}` the
// record, written with the transition that fired it); this loop reads it per reaction in commit order, in bounded
// windows, and POSTs each delivery with its signature. Per (reaction, user) one delivery at a time, in order; other
// users and other reactions never wait behind it. A failure is retried with exponential backoff and jitter (about
// 1 s, 2 s, 4 s ... capped at 10 minutes) until its 24-hour horizon, then marked failed. Success and failure are
// recorded in one batch with the queue entry's removal, so a crash at any point leaves the delivery pending (sent
// again: at least once, under the same id). Memory is bounded by the windows and the in-flight limits, whatever the
// queue holds; a slow receiver holds only its own reaction's slots.

import type { Store } from '../../store/contract.js';
import { prefixEnd } from '../../store/contract.js';
import { fromSeqPart } from '../../store/layout.js';
import { reactionsKeys, type Delivery } from '../../domain/reactions/contract.js';
import { signDelivery, transitionKey } from './signature.js';

export interface DeliveryTarget {
  readonly url: string;
  readonly secret: string;
  readonly state: 'Enabled' | 'Disabled';
}

export interface DeliveryOutcome {
  readonly reactionId: string;
  readonly delivery: Delivery;
  readonly result: 'delivered' | 'retry' | 'failed';
}

export interface DeliveryLoopOptions {
  readonly store: Store;
  /** The reaction's endpoint and secret; undefined once deleted (its queue is left to the registry's delete). */
  target(reactionId: string): DeliveryTarget | undefined;
  /** Reactions to look at when the loop starts (deliveries left pending by a previous run). */
  reactionIds(): Iterable<string>;
  readonly now?: () => number;
  /** In [0, 1): the backoff's jitter. */
  readonly random?: () => number;
  readonly fetch?: typeof fetch;
  readonly timeoutMs?: number;
  readonly firstRetryMs?: number;
  readonly maxRetryMs?: number;
  readonly horizonMs?: number;
  /** Attempts in flight per endpoint (the webhook URL's origin, whatever reactions share it; default 8). */
  readonly perEndpoint?: number;
  /** Queue entries read per scan of a reaction (default 256). */
  readonly window?: number;
  readonly log?: (line: string) => void;
  readonly onOutcome?: (outcome: DeliveryOutcome) => void;
  /** Delivered records are kept this long after their last attempt (default 24 h), failed ones `keepFailedMs` (7 days). */
  readonly keepDeliveredMs?: number;
  readonly keepFailedMs?: number;
}

export interface DeliveryStats {
  readonly inFlight: number;
  readonly delivered: number;
  readonly retried: number;
  readonly failed: number;
  /** Reactions the loop is following. */
  readonly reactions: number;
}

interface ReactionWork {
  inFlight: number;
  /** Users with a delivery in flight (per-user order). */
  readonly busy: Set<string>;
  scanning: boolean;
  again: boolean;
  timer: NodeJS.Timeout | undefined;
  wakeAt: number;
  /** Held back by its endpoint's in-flight bound. */
  waiting: boolean;
}

export class DeliveryLoop {
  private readonly work = new Map<string, ReactionWork>();
  /** Attempts in flight per endpoint (URL origin), across the reactions sending there. */
  private readonly endpoints = new Map<string, number>();
  private readonly inFlight = new Set<Promise<void>>();
  private readonly scans = new Set<Promise<void>>();
  private readonly abort = new AbortController();
  private stopped = false;
  private delivered = 0;
  private retried = 0;
  private failed = 0;
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly send: typeof fetch;
  private readonly timeoutMs: number;
  private readonly firstRetryMs: number;
  private readonly maxRetryMs: number;
  private readonly horizonMs: number;
  private readonly perEndpoint: number;
  private readonly window: number;
  private readonly log: (line: string) => void;
  private pruneTimer: NodeJS.Timeout | undefined;
  private readonly outcomeListeners: ((outcome: DeliveryOutcome) => void)[] = [];

  constructor(private readonly options: DeliveryLoopOptions) {
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
    this.send = options.fetch ?? fetch;
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.firstRetryMs = options.firstRetryMs ?? 1000;
    this.maxRetryMs = options.maxRetryMs ?? 600_000;
    this.horizonMs = options.horizonMs ?? 24 * 3_600_000;
    this.perEndpoint = Math.max(1, options.perEndpoint ?? 8);
    this.window = Math.max(1, options.window ?? 256);
    this.log = options.log ?? (() => undefined);
  }

  start(): void {
    this.notify(this.options.reactionIds());
    this.pruneTimer = setInterval(() => void this.prune().catch((error: unknown) => this.log(`reactions: pruning deliveries failed: ${String(error)}`)), 3_600_000);
    this.pruneTimer.unref();
  }

  /**
   * Deletes delivered records older than `keepDeliveredMs` and failed ones older than `keepFailedMs` (by their last
   * attempt), so the outbox does not grow forever; pending ones stay. Bounded batches, oldest first per reaction.
   */
  async prune(): Promise<number> {
    const now = this.now();
    const keepDelivered = this.options.keepDeliveredMs ?? 24 * 3_600_000;
    const keepFailed = this.options.keepFailedMs ?? 7 * 24 * 3_600_000;
    let deleted = 0;
    for (const id of this.options.reactionIds()) {
      const prefix = reactionsKeys.deliveryPrefix(id);
      let ops: { type: 'del'; key: string }[] = [];
      for await (const [key, d] of this.options.store.iterate<Delivery>({ gte: prefix, lt: prefixEnd(prefix) })) {
        if (this.stopped) return deleted;
        const last = d.last_attempt_at ?? d.created_at;
        if ((d.status === 'delivered' && now - last > keepDelivered) || (d.status === 'failed' && now - last > keepFailed)) ops.push({ type: 'del', key });
        if (ops.length >= 1000) {
          await this.options.store.batch(ops);
          deleted += ops.length;
          ops = [];
        }
      }
      if (ops.length > 0) await this.options.store.batch(ops);
      deleted += ops.length;
    }
    return deleted;
  }

  /** Called after each recorded attempt (metrics). */
  onOutcome(listener: (outcome: DeliveryOutcome) => void): void {
    this.outcomeListeners.push(listener);
  }

  /** New pending deliveries (a commit, a retry) or a changed reaction: look at their queues. */
  notify(reactionIds: Iterable<string>): void {
    for (const id of reactionIds) this.pump(id);
  }

  stats(): DeliveryStats {
    let inFlight = 0;
    for (const w of this.work.values()) inFlight += w.inFlight;
    return { inFlight, delivered: this.delivered, retried: this.retried, failed: this.failed, reactions: this.work.size };
  }

  /** Stops scanning and aborts attempts in flight; their deliveries stay pending as stored (sent again later). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.pruneTimer !== undefined) clearInterval(this.pruneTimer);
    for (const w of this.work.values()) if (w.timer !== undefined) clearTimeout(w.timer);
    this.abort.abort();
    await Promise.allSettled([...this.inFlight]);
  }

  private workOf(id: string): ReactionWork {
    let w = this.work.get(id);
    if (w === undefined) {
      w = { inFlight: 0, busy: new Set(), scanning: false, again: false, timer: undefined, wakeAt: Number.POSITIVE_INFINITY, waiting: false };
      this.work.set(id, w);
    }
    return w;
  }

  private pump(id: string): void {
    if (this.stopped) return;
    const w = this.workOf(id);
    if (w.scanning) {
      w.again = true;
      return;
    }
    w.scanning = true;
    const scanning: Promise<void> = this.scan(id, w)
      .catch((error: unknown) => {
        this.log(`reactions: reading the outbox of reaction ${id} failed (retried): ${String(error)}`);
        this.arm(id, w, this.now() + 1000);
      })
      .finally(() => {
        w.scanning = false;
        this.scans.delete(scanning);
        if (w.again) {
          w.again = false;
          this.pump(id);
        }
      });
    this.scans.add(scanning);
  }

  /**
   * Resolves once no reaction's queue is being read (the scans started by a notify, and the ones they started, have
   * decided what to send); attempts may still be in flight. For tests and a graceful reading of `stats()`.
   */
  async scanned(): Promise<void> {
    while (this.scans.size > 0) await Promise.allSettled([...this.scans]);
  }

  /** One pass over the head of the reaction's queue: start what is due, arm a timer for the earliest backoff. */
  private async scan(id: string, w: ReactionWork): Promise<void> {
    const target = this.options.target(id);
    if (target === undefined) {
      if (w.inFlight === 0) this.work.delete(id);
      return;
    }
    if (target.state !== 'Enabled') return; // waits: the registry notifies when the reaction is enabled again
    const prefix = reactionsKeys.pendingPrefix(id);
    const heads: { seq: number; user: string }[] = [];
    const seen = new Set<string>();
    for await (const [key, user] of this.options.store.iterate<string>({ gte: prefix, lt: prefixEnd(prefix), limit: this.window })) {
      // Per-user order: only a user's oldest pending delivery may go, and not while another of theirs is in flight.
      if (seen.has(user)) continue;
      seen.add(user);
      if (!w.busy.has(user)) heads.push({ seq: fromSeqPart(key.slice(key.lastIndexOf('!') + 1)), user });
    }
    if (heads.length === 0) return;
    const records = await this.options.store.getMany<Delivery>(heads.map((h) => reactionsKeys.delivery(id, h.seq)));
    const now = this.now();
    let earliest = Number.POSITIVE_INFINITY;
    for (let i = 0; i < heads.length; i++) {
      const record = records[i];
      const head = heads[i] as { seq: number; user: string };
      if (record === undefined || record.status !== 'pending') {
        // A queue entry without a pending record (a crash between writes cannot make one; a concurrent delete can).
        await this.options.store.batch([{ type: 'del', key: reactionsKeys.pending(id, head.seq) }]);
        continue;
      }
      if (record.next_at > now) {
        earliest = Math.min(earliest, record.next_at);
        continue;
      }
      // Full: the next finished attempt to this endpoint scans again (attempt's finally).
      if ((this.endpoints.get(endpointOf(target.url)) ?? 0) >= this.perEndpoint) {
        w.waiting = true;
        break;
      }
      this.attempt(id, w, target, record);
    }
    if (Number.isFinite(earliest)) this.arm(id, w, earliest);
  }

  private arm(id: string, w: ReactionWork, at: number): void {
    if (this.stopped || at >= w.wakeAt) return;
    if (w.timer !== undefined) clearTimeout(w.timer);
    w.wakeAt = at;
    w.timer = setTimeout(() => {
      w.timer = undefined;
      w.wakeAt = Number.POSITIVE_INFINITY;
      this.pump(id);
    }, Math.max(0, at - this.now()));
    w.timer.unref();
  }

  private attempt(id: string, w: ReactionWork, target: DeliveryTarget, record: Delivery): void {
    const user = record.body.user_id;
    const endpoint = endpointOf(target.url);
    this.endpoints.set(endpoint, (this.endpoints.get(endpoint) ?? 0) + 1);
    w.inFlight++;
    w.busy.add(user);
    const running = this.post(target, record)
      .then((answer) => (this.stopped ? undefined : this.record(id, record, answer)))
      .catch((error: unknown) => this.log(`reactions: recording delivery ${record.body.id} failed (sent again later): ${String(error)}`))
      .finally(() => {
        const left = (this.endpoints.get(endpoint) ?? 1) - 1;
        if (left === 0) this.endpoints.delete(endpoint);
        else this.endpoints.set(endpoint, left);
        w.inFlight--;
        w.busy.delete(user);
        this.inFlight.delete(running);
        this.pump(id);
        // Other reactions sending to the same endpoint may have been held back by its bound.
        for (const [other, ow] of this.work) {
          if (other === id || !ow.waiting) continue;
          ow.waiting = false;
          this.pump(other);
        }
      });
    this.inFlight.add(running);
  }

  /** One POST: any 2xx within the timeout is success; redirects are not followed. */
  private async post(target: DeliveryTarget, record: Delivery): Promise<{ status: number | null; error: string | null }> {
    const raw = JSON.stringify(record.body);
    // One controller per attempt, aborted by its own timer or by stop() (a combined AbortSignal.any/timeout is not
    // reliable on Node 20).
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, this.timeoutMs);
    const onStop = () => controller.abort();
    this.abort.signal.addEventListener('abort', onStop);
    try {
      const response = await this.send(target.url, {
        method: 'POST',
        redirect: 'manual',
        headers: {
          'Content-Type': 'application/json',
          'X-Audience-Delivery': record.body.id,
          'X-Audience-Transition': transitionKey(record.body),
          'X-Audience-Signature': signDelivery(target.secret, Math.floor(this.now() / 1000), raw),
        },
        body: raw,
        signal: controller.signal,
      });
      await response.body?.cancel().catch(() => undefined);
      return { status: response.status, error: response.status >= 200 && response.status < 300 ? null : `HTTP ${response.status}` };
    } catch (error) {
      return { status: null, error: timedOut ? `no answer within ${this.timeoutMs} ms` : describe(error) };
    } finally {
      clearTimeout(timer);
      this.abort.signal.removeEventListener('abort', onStop);
    }
  }

  private async record(id: string, record: Delivery, answer: { status: number | null; error: string | null }): Promise<void> {
    const now = this.now();
    const attempts = record.attempts + 1;
    const base = { ...record, attempts, last_status: answer.status, last_error: answer.error, last_attempt_at: now };
    let next: Delivery;
    let result: DeliveryOutcome['result'];
    if (answer.error === null) {
      next = { ...base, status: 'delivered' };
      result = 'delivered';
    } else if (now - (record.retried_at ?? record.created_at) >= this.horizonMs) {
      next = { ...base, status: 'failed' };
      result = 'failed';
    } else {
      const backoff = Math.min(this.maxRetryMs, this.firstRetryMs * 2 ** Math.min(30, attempts - 1));
      next = { ...base, next_at: now + Math.round(backoff * (0.75 + 0.5 * this.random())) };
      result = 'retry';
    }
    // A reaction deleted meanwhile keeps nothing (its outbox went with it).
    if (this.options.target(id) === undefined) return;
    const key = reactionsKeys.delivery(id, record.seq);
    await this.options.store.batch(
      result === 'retry'
        ? [{ type: 'put', key, value: next }]
        : [
            { type: 'put', key, value: next },
            { type: 'del', key: reactionsKeys.pending(id, record.seq) },
          ],
    );
    if (result === 'delivered') this.delivered++;
    else if (result === 'failed') this.failed++;
    else this.retried++;
    const outcome: DeliveryOutcome = { reactionId: id, delivery: next, result };
    this.options.onOutcome?.(outcome);
    for (const listener of this.outcomeListeners) listener(outcome);
  }
}

/** The endpoint a URL sends to: its origin (scheme, host, port). */
function endpointOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = (error as { cause?: unknown }).cause;
  const text = cause instanceof Error ? `${error.message}: ${cause.message}` : error.message;
  return text.slice(0, 200);
}
