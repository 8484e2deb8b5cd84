// D36: time passes even when a user is silent. Every committed user state has its next deadline in the durable index
// `dl!{partition}!{time}!{org}!{user}` (written in the same batch as the state change, tick/commit-log.ts). This
// scheduler wakes at the earliest known deadline, scans every partition's due entries (bounded), and hands each to
// the pipeline, which re-evaluates the user at that instant in its lane (engine `evaluateAt`, now = the deadline), and
// in the same batch deletes the entry and indexes the next deadline. Nothing here is lost on a crash: an entry stays
// until the batch that evaluated it commits; after a restart the scan finds everything overdue.

import type { Store } from '../../store/contract.js';
import { fromKeyPart, fromSeqPart, key, seqPart } from '../../store/layout.js';
import { fromTimePart, timePart } from '../../domain/events/keys.js';
import { reactionsKeys } from '../../domain/reactions/contract.js';

/** setTimeout's largest delay; later deadlines re-arm on waking. */
const MAX_DELAY_MS = 2 ** 31 - 1;
/** After a failed evaluation (pipeline overloaded, store failing) the entry is tried again after this long. */
const RETRY_MS = 1000;
const LAG_SAMPLES = 4096;

export interface DeadlineSchedulerOptions {
  readonly store: Store;
  readonly partitions: number;
  /** Whether this node acts for the partition (a cluster node: the ones it owns, issue 15); default every one. */
  readonly owns?: (partition: number) => boolean;
  readonly now: () => number;
  /** Re-evaluates the user at `at` in its lane; resolves once the result (and the entry's removal) is durable. */
  evaluate(org: string, user: string, at: number, dueKey: string): Promise<void>;
  readonly log: (line: string) => void;
  /** Re-evaluations handed out and not yet committed (default 4,096): the scan waits past this. */
  readonly maxInFlight?: number;
  /** Each committed re-evaluation's lag from its deadline, ms (metrics). */
  readonly onEvaluated?: (lagMs: number) => void;
}

export interface DeadlineStats {
  readonly inFlight: number;
  readonly evaluated: number;
  readonly failed: number;
  /** Lag from each deadline to the commit of its re-evaluation, ms: recent samples (at most 4,096). */
  readonly lagsMs: readonly number[];
}

export class DeadlineScheduler {
  private readonly inFlight = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private wakeAt = Number.POSITIVE_INFINITY;
  private scanning: Promise<void> | undefined;
  private again = false;
  /** The last scan stopped at the in-flight bound: scan again as soon as one finishes. */
  private blocked = false;
  private stopped = false;
  private evaluated = 0;
  private failed = 0;
  private readonly lags: number[] = [];
  private lagAt = 0;
  private readonly maxInFlight: number;

  constructor(private readonly options: DeadlineSchedulerOptions) {
    this.maxInFlight = Math.max(1, options.maxInFlight ?? 4096);
  }

  /** Scans once now (overdue entries from before a restart), then keeps waking at the earliest deadline. */
  start(): void {
    this.arm(this.options.now());
  }

  /** The partitions this node owns changed: scan now (a partition taken over may hold overdue deadlines). */
  rescan(): void {
    this.arm(this.options.now());
  }

  /** Deadlines a committed batch indexed: wake earlier when one comes before the armed time. */
  noteDeadlines(times: readonly number[]): void {
    let earliest = Number.POSITIVE_INFINITY;
    for (const t of times) if (t < earliest) earliest = t;
    if (earliest < this.wakeAt) this.arm(earliest);
  }

  stats(): DeadlineStats {
    return { inFlight: this.inFlight.size, evaluated: this.evaluated, failed: this.failed, lagsMs: [...this.lags] };
  }

  /** Stops waking; re-evaluations already handed out finish or fail with the pipeline. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    await this.scanning;
  }

  private arm(at: number): void {
    if (this.stopped) return;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.wakeAt = at;
    const delay = Math.min(MAX_DELAY_MS, Math.max(0, at - this.options.now()));
    this.timer = setTimeout(() => this.wake(), delay);
    this.timer.unref();
  }

  private wake(): void {
    this.timer = undefined;
    this.wakeAt = Number.POSITIVE_INFINITY;
    if (this.scanning !== undefined) {
      this.again = true;
      return;
    }
    this.scanning = this.scan()
      .catch((error: unknown) => {
        this.options.log(`deadlines: scanning the index failed: ${String(error)}`);
        this.arm(this.options.now() + RETRY_MS);
      })
      .finally(() => {
        this.scanning = undefined;
        if (this.again && !this.stopped) {
          this.again = false;
          this.wake();
        }
      });
  }

  /** Hands out every due entry (up to the in-flight bound), then arms the timer at the earliest entry still ahead. */
  private async scan(): Promise<void> {
    const { store, partitions } = this.options;
    const now = this.options.now();
    let full = false;
    let next = Number.POSITIVE_INFINITY;
    for (let p = 0; p < partitions && !this.stopped; p++) {
      if (this.options.owns !== undefined && !this.options.owns(p)) continue;
      const prefix = reactionsKeys.deadlinePrefix(p);
      const dueEnd = key('dl', seqPart(p), timePart(now + 1));
      for await (const [entryKey] of store.iterate({ gte: prefix, lt: dueEnd })) {
        if (this.inFlight.has(entryKey)) continue;
        if (this.inFlight.size >= this.maxInFlight) {
          full = true;
          break;
        }
        this.handOut(entryKey);
      }
      for await (const [entryKey] of store.iterate({ gte: dueEnd, lt: prefix.slice(0, -1) + '"', limit: 1 })) {
        const at = parseDeadlineKey(entryKey)?.at ?? Number.POSITIVE_INFINITY;
        if (at < next) next = at;
      }
    }
    // A full scan resumes when a hand-out finishes; otherwise at the earliest deadline ahead.
    this.blocked = full;
    if (!full && next < this.wakeAt) this.arm(next);
  }

  private handOut(entryKey: string): void {
    const parsed = parseDeadlineKey(entryKey);
    if (parsed === undefined) {
      this.options.log(`deadlines: ignoring a malformed index key ${JSON.stringify(entryKey)}`);
      return;
    }
    this.inFlight.add(entryKey);
    this.options
      .evaluate(parsed.org, parsed.user, parsed.at, entryKey)
      .then(() => {
        this.evaluated++;
        const lag = this.options.now() - parsed.at;
        this.noteLag(lag);
        this.options.onEvaluated?.(lag);
      })
      .catch((error: unknown) => {
        this.failed++;
        if (!this.stopped) this.options.log(`deadlines: re-evaluating a user at its deadline failed (retried): ${String(error)}`);
        this.arm(Math.min(this.wakeAt, this.options.now() + RETRY_MS));
      })
      .finally(() => {
        this.inFlight.delete(entryKey);
        if (this.blocked) {
          this.blocked = false;
          this.arm(this.options.now());
        }
      });
  }

  private noteLag(ms: number): void {
    if (this.lags.length < LAG_SAMPLES) this.lags.push(ms);
    else this.lags[this.lagAt] = ms;
    this.lagAt = (this.lagAt + 1) % LAG_SAMPLES;
  }
}

/** `dl!{partition}!{time}!{org}!{user}` → its parts (reactionsKeys.deadline). */
export function parseDeadlineKey(entryKey: string): { partition: number; at: number; org: string; user: string } | undefined {
  const parts = entryKey.split('!');
  if (parts.length !== 5 || parts[0] !== 'dl') return undefined;
  const at = fromTimePart(parts[2] as string);
  if (!Number.isFinite(at)) return undefined;
  return { partition: fromSeqPart(parts[1] as string), at, org: parts[3] as string, user: fromKeyPart(parts[4] as string) };
}
