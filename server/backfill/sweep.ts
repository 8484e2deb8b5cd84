// The background sweep of an organization (D19, README.md): after a cohort is created, its query changed or it is
// enabled, every user with events is brought up to date with the plan by the pipeline's catch-ups, a batch of users
// at a time in key order; the cursor is stored after each batch, so a restart continues where it stopped.

import type { IngestPipeline } from '../ingest/index.js';
import type { Store } from '../store/contract.js';
import { sweepKey } from './keys.js';
import { countUsers, listUsers } from './users.js';

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
  ) {}

  /** Makes sure the organization's users are (being) brought up to date with its current plan. */
  start(org: string): void {
    if (this.stopped) return;
    const sweep = this.sweepOf(org);
    if (sweep.running !== undefined) {
      sweep.again = true;
      return;
    }
    const running = this.loop(org, sweep).finally(() => {
      sweep.running = undefined;
    });
    running.catch(() => undefined); // logged by loop; whenSwept answers the failure to whoever waits
    sweep.running = running;
  }

  /** Resolves once no sweep of the organization runs (rejects when the last one failed). */
  async whenSwept(org: string): Promise<void> {
    const sweep = this.orgs.get(org);
    while (sweep?.running !== undefined) await sweep.running;
  }

  /** Progress of the sweep that is making a cohort of generation `gen` exact; undefined when none is (or no users). */
  progressOf(org: string, gen: number): BackfillProgress | undefined {
    const sweep = this.orgs.get(org);
    const record = sweep?.record;
    if (sweep === undefined || record === undefined || record.complete || gen <= sweep.completed || record.total === 0) return undefined;
    return { state: 'running', users_done: Math.min(record.done, record.total), users_total: record.total };
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
      sweep = { record: undefined, completed: 0, running: undefined, again: false };
      this.orgs.set(org, sweep);
    }
    return sweep;
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
    let record = sweep.record ?? (await this.store.get<SweepRecord>(sweepKey(org)));
    if (record?.complete === true) sweep.completed = Math.max(sweep.completed, record.target);
    sweep.record = record;
    if (record?.complete === true && record.target >= this.pipeline.planInfo(org).maxGen) return;
    if (record === undefined || record.complete || record.target < this.pipeline.planInfo(org).maxGen) {
      // Ticks that started before the plan changed finish first: every user they create or evaluate is then
      // either behind the new plan (and visited below) or evaluated under it.
      await this.pipeline.settled();
      const target = this.pipeline.planInfo(org).version;
      const total = await countUsers(this.store, org);
      record = { target, cursor: null, done: 0, total, complete: false };
      await this.save(org, sweep, record);
    }
    for (;;) {
      if (this.stopped) return;
      if (this.pipeline.planInfo(org).maxGen > record.target) {
        sweep.again = true;
        return;
      }
      const users = await listUsers(this.store, org, record.cursor, this.batch);
      if (users.length === 0) {
        record = { ...record, complete: true, total: Math.max(record.total, record.done) };
        await this.save(org, sweep, record);
        sweep.completed = Math.max(sweep.completed, record.target);
        return;
      }
      if (this.stopped) return;
      await this.pipeline.catchUp(org, users);
      const done: number = record.done + users.length;
      record = { ...record, cursor: users[users.length - 1] as string, done, total: Math.max(record.total, done) };
      await this.save(org, sweep, record);
      this.onSwept?.(org, done);
    }
  }

  private async save(org: string, sweep: OrgSweep, record: SweepRecord): Promise<void> {
    await this.store.batch([{ type: 'put', key: sweepKey(org), value: record }]);
    sweep.record = record;
  }
}
