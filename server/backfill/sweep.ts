// The background sweep of an organization (D19, README.md): after a cohort is created, its query changed or it is
// enabled, every user with events is brought up to date with the plan by the pipeline's catch-ups, a batch of users
// at a time in key order; the cursor is stored after each batch, so a restart continues where it stopped.

import type { IngestPipeline } from '../ingest/index.js';
import type { Store } from '../store/contract.js';
import { sweepKey } from './keys.js';
import { countUsers, listUsers, scanUsers } from './users.js';
import { CATCH_UP_INLINE } from '../ingest/pipeline.js';

/** A sweep's progress as the cohort read model shows it. */
export interface BackfillProgress {
  readonly state: 'running' | 'done';
  readonly users_done: number;
  readonly users_total: number;
}

/** The stored sweep `bf!{org}`: every user up to `cursor` is caught up with plan version `target` or later. */
interface SweepRecord {
  readonly target: number;
  readonly cursor: string | null;
  readonly done: number;
  readonly total: number;
  readonly complete: boolean;
}

interface OrgSweep {
  record: SweepRecord | undefined;
  /** The target of the last complete sweep: cohorts of a generation up to it are exact (0 before any). */
  completed: number;
  running: Promise<void> | undefined;
  /** The plan changed while the sweep ran: check again when it ends. */
  again: boolean;
  /**
   * A sweep asked for (start) whose record is not saved yet: the plan's largest generation then, and the users the
   * last stored record counted (at least 1; the organization has users). Read until a record or completion covers it.
   */
  pending: { readonly target: number; readonly total: number } | undefined;
}

export class Sweeper {
  private readonly orgs = new Map<string, OrgSweep>();
  private stopped = false;

  constructor(
    private readonly store: Store,
    private readonly pipeline: IngestPipeline,
    private readonly log: (line: string) => void,
    /** Users handed to the pipeline at a time (their catch-ups share the lanes' background turns). */
    private readonly batch = 256,
    private readonly onSwept?: (org: string, usersDone: number) => void,
    /** Awaited before each sweep reads or writes anything (tests hold a sweep with it). */
    private readonly beforeSweep?: (org: string) => Promise<void>,
  ) {}

  /**
   * Makes sure the organization's users are (being) brought up to date with its current plan. Resolves once
   * `progressOf` shows the sweep (or it is known not to be needed): the caller answers the cohort after that, so the
   * answer and every read after it carry `backfill` until the sweep is done, even before its record is saved.
   */
  async start(org: string): Promise<void> {
    if (this.stopped) return;
    const sweep = this.sweepOf(org);
    const target = this.pipeline.planInfo(org).maxGen;
    if (sweep.running !== undefined) sweep.again = true;
    else {
      const running = this.loop(org, sweep).finally(() => {
        sweep.running = undefined;
      });
      running.catch(() => undefined); // logged by loop; whenSwept answers the failure to whoever waits
      sweep.running = running;
    }
    await this.markPending(org, sweep, target);
  }

  /** Resolves once no sweep of the organization runs (rejects when the last one failed). */
  async whenSwept(org: string): Promise<void> {
    const sweep = this.orgs.get(org);
    while (sweep?.running !== undefined) await sweep.running;
  }

  /**
   * Progress of the sweep that is making a cohort of generation `gen` exact; undefined when none is (or no users).
   * Before that sweep's record is saved, a pending sweep shows 0 users done of the last counted total.
   */
  progressOf(org: string, gen: number): BackfillProgress | undefined {
    const sweep = this.orgs.get(org);
    if (sweep === undefined || gen <= sweep.completed) return undefined;
    const record = sweep.record;
    const pending = sweep.pending !== undefined && sweep.pending.target > sweep.completed ? sweep.pending : undefined;
    const recordCovers = record !== undefined && !record.complete && (record.target >= gen || pending === undefined || gen > pending.target);
    if (recordCovers) {
      if (record.total === 0) return undefined;
      return { state: 'running', users_done: Math.min(record.done, record.total), users_total: record.total };
    }
    if (pending !== undefined && gen <= pending.target) return { state: 'running', users_done: 0, users_total: pending.total };
    return undefined;
  }

  /** The organization's sweep figures when none runs (what a recompute of a real-time cohort answers). */
  lastProgress(org: string): BackfillProgress {
    const record = this.orgs.get(org)?.record;
    const total = record?.total ?? 0;
    return { state: 'done', users_done: total, users_total: total };
  }

  /** Stops starting batches; `closed` resolves once the running ones end. */
  stop(): void {
    this.stopped = true;
  }

  async closed(): Promise<void> {
    await Promise.allSettled([...this.orgs.values()].map((sweep) => sweep.running));
  }

  private sweepOf(org: string): OrgSweep {
    let sweep = this.orgs.get(org);
    if (sweep === undefined) {
      sweep = { record: undefined, completed: 0, running: undefined, again: false, pending: undefined };
      this.orgs.set(org, sweep);
    }
    return sweep;
  }

  /**
   * Marks the sweep of plan generation `target` pending unless a complete sweep already covers it or the organization
   * has no user with events (then no cohort shows `backfill`, as when a sweep counts 0 users). One read of the
   * stored record and one seek in the events index: the caller's answer waits for them, not for the sweep's count.
   */
  private async markPending(org: string, sweep: OrgSweep, target: number): Promise<void> {
    const stored = sweep.record ?? (await this.store.get<SweepRecord>(sweepKey(org)));
    if (stored?.complete === true) sweep.completed = Math.max(sweep.completed, stored.target);
    if (target <= sweep.completed) return;
    if ((await listUsers(this.store, org, null, 1)).length === 0) return;
    // The sweep may have ended (or saved its record) during the reads: `completed` and the record then decide.
    if (target <= sweep.completed || (sweep.pending?.target ?? 0) >= target) return;
    sweep.pending = { target, total: Math.max(1, sweep.record?.total ?? stored?.total ?? 0) };
  }

  private async loop(org: string, sweep: OrgSweep): Promise<void> {
    try {
      do {
        sweep.again = false;
        await this.sweepOnce(org, sweep);
      } while (sweep.again && !this.stopped);
    } catch (error) {
      if (!this.stopped) this.log(`backfill: the sweep of organization ${org} failed: ${String(error)}`);
      throw error;
    }
  }

  private async sweepOnce(org: string, sweep: OrgSweep): Promise<void> {
    await this.beforeSweep?.(org);
    let record = sweep.record ?? (await this.store.get<SweepRecord>(sweepKey(org)));
    if (record?.complete === true) sweep.completed = Math.max(sweep.completed, record.target);
    sweep.record = record;
    if (record?.complete === true && record.target >= this.pipeline.planInfo(org).maxGen) return;
    // A new sweep counts the users while its first batch is caught up, and saves its record after that batch (until
    // then the read model shows it pending): counting reads the users' keys (Store.skipKeys), as long as listing them all.
    let counting: Promise<number> | undefined;
    if (record === undefined || record.complete || record.target < this.pipeline.planInfo(org).maxGen) {
      // Ticks that started before the plan changed finish first: every user they create or evaluate is then
      // either behind the new plan (and visited below) or evaluated under it.
      await this.pipeline.settled();
      counting = countUsers(this.store, org);
      counting.catch(() => undefined); // awaited below; a sweep that ends first drops it
      record = { target: this.pipeline.planInfo(org).version, cursor: null, done: 0, total: 0, complete: false };
    }
    // Two batches are in the pipeline at a time: the next one is handed over while the one before it is caught up,
    // and the one after it is listed meanwhile. Listing reads the users' events (users.ts `scanUsers`), so each batch
    // comes with its histories, which its catch-ups use unless an event of the user was stored since. The cursor
    // moves past a batch once it is done; batches finish in order (their groups commit in build order).
    // Histories up to the pipeline's default inline bound (a catch-up beyond the pipeline's own bound is parked
    // whatever was read, and one beyond this bound reads its history in its tick: either way the same events).
    const scan = (after: string | null) => scanUsers(this.store, org, after, this.batch, CATCH_UP_INLINE + 1);
    let listing = scan(record.cursor);
    let handed: { readonly users: readonly string[]; readonly done: Promise<void> } | undefined;
    for (;;) {
      listing.catch(() => undefined); // awaited below unless the sweep ends first
      if (this.stopped) return;
      if (this.pipeline.planInfo(org).maxGen > record.target) {
        sweep.again = true;
        return;
      }
      const { users, histories } = await listing;
      if (this.stopped) return;
      let next: typeof handed;
      if (users.length > 0) {
        listing = scan(users[users.length - 1] as string);
        next = { users, done: this.pipeline.catchUp(org, users, { histories }) };
        next.done.catch(() => undefined); // awaited in the next turn unless the sweep ends first
      }
      if (handed !== undefined) {
        await handed.done;
        const total: number = counting === undefined ? record.total : await counting;
        const done: number = record.done + handed.users.length;
        record = { ...record, cursor: handed.users[handed.users.length - 1] as string, done, total: Math.max(total, done) };
        counting = undefined;
        await this.save(org, sweep, record);
        this.onSwept?.(org, done);
      }
      handed = next;
      if (handed !== undefined) continue;
      const total: number = counting === undefined ? record.total : await counting;
      record = { ...record, complete: true, total: Math.max(total, record.done) };
      await this.save(org, sweep, record);
      sweep.completed = Math.max(sweep.completed, record.target);
      return;
    }
  }

  private async save(org: string, sweep: OrgSweep, record: SweepRecord): Promise<void> {
    await this.store.batch([{ type: 'put', key: sweepKey(org), value: record }]);
    sweep.record = record;
  }
}
