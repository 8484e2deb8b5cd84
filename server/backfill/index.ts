// Cohort changes applied to history (D19, D20; README.md): the background sweeps that make live audience sizes
// exact after a cohort is created, changed or enabled, the offline cohorts' computations and their schedule, and
// the progress the cohort read model shows.

import { generationOf, type Cohort, type CohortRegistry } from '../domain/cohorts/index.js';
import type { IngestPipeline } from '../ingest/index.js';
import type { Store } from '../store/contract.js';
import { OfflineCohorts, type OfflineResult, type OfflineScope } from './offline.js';
import { Sweeper, type BackfillProgress } from './sweep.js';

export type { BackfillProgress } from './sweep.js';
export type { OfflineResult, OfflineScope } from './offline.js';
export { countUsers, listUsers } from './users.js';

export interface BackfillOptions {
  readonly store: Store;
  readonly pipeline: IngestPipeline;
  readonly cohorts: CohortRegistry;
  readonly now?: () => Date;
  readonly log?: ((line: string) => void) | undefined;
  /** Minutes between scheduled computations of every offline cohort (D20); 0 or absent: never. */
  readonly offlineEveryMinutes?: number;
  /** A cluster node's share of offline computations (offline.ts); absent: every stored user. */
  readonly offlineScope?: OfflineScope | undefined;
  /** Users per sweep batch (default 256). */
  readonly sweepBatch?: number | undefined;
  /** Called after each batch of a sweep is durable, with the users done so far. */
  readonly onSwept?: ((org: string, usersDone: number) => void) | undefined;
  /** Awaited before a sweep reads or writes anything (tests: hold a sweep before its record is saved). */
  readonly beforeSweep?: ((org: string) => Promise<void>) | undefined;
}

export class Backfill {
  private readonly sweeper: Sweeper;
  private readonly offline: OfflineCohorts;
  private readonly timer: NodeJS.Timeout | undefined;
  private schedule: Promise<void> | undefined;

  private constructor(private readonly options: BackfillOptions) {
    const log = options.log ?? (() => undefined);
    this.sweeper = new Sweeper(options.store, options.pipeline, log, options.sweepBatch ?? 256, options.onSwept, options.beforeSweep);
    this.offline = new OfflineCohorts(options.store, options.pipeline, options.cohorts, options.now ?? (() => new Date()), log, 128, options.offlineScope);
    const minutes = options.offlineEveryMinutes ?? 0;
    if (minutes > 0) {
      this.timer = setInterval(() => {
        this.schedule ??= this.offline.recomputeAll().finally(() => {
          this.schedule = undefined;
        });
      }, minutes * 60_000);
      this.timer.unref();
    }
  }

  /** Opens the backfill over open services and resumes (or starts) the sweep of every organization that needs one. */
  static async open(options: BackfillOptions): Promise<Backfill> {
    const backfill = new Backfill(options);
    for (const org of options.cohorts.organizations()) {
      await backfill.sweeper.start(org);
      for (const cohort of options.cohorts.allOf(org)) if (cohort.segment_type === 'offline') await backfill.offline.resultOf(cohort);
    }
    return backfill;
  }

  /**
   * The organization's cohorts changed (after the pipeline was told): sweep if a cohort's generation is new. Resolves
   * once `progressOf` shows that sweep (before its record is saved): answer the cohort after awaiting it.
   */
  planChanged(org: string): Promise<void> {
    return this.sweeper.start(org);
  }

  /** Resolves once the organization's sweep (if any) has ended; rejects with its failure. */
  whenSwept(org: string): Promise<void> {
    return this.sweeper.whenSwept(org);
  }

  /** Resolves once the cohort's offline computation (if any) has ended. */
  whenComputed(cohort: Cohort): Promise<void> {
    return this.offline.whenComputed(cohort);
  }

  /** The running backfill or computation of the cohort, for its read model; undefined when none runs. */
  progressOf(cohort: Cohort): BackfillProgress | undefined {
    if (cohort.segment_type === 'offline') return this.offline.progressOf(cohort);
    if (cohort.state !== 'Enabled') return undefined;
    const gen = this.options.pipeline.planInfo(cohort.organization_id).gens.get(cohort.code) ?? generationOf(cohort);
    return this.sweeper.progressOf(cohort.organization_id, gen);
  }

  /** D20: the last computed result of an offline cohort. */
  offlineResultOf(cohort: Cohort): OfflineResult | undefined {
    return this.offline.knownResultOf(cohort);
  }

  /**
   * D20: starts computing an offline cohort over history (unless running) and answers its progress; a real-time
   * cohort is evaluated per event and swept on change, so it answers its sweep's progress.
   */
  recompute(cohort: Cohort): BackfillProgress {
    if (cohort.segment_type === 'offline') return this.offline.recompute(cohort);
    return this.progressOf(cohort) ?? this.sweeper.lastProgress(cohort.organization_id);
  }

  /** Stops starting work (call before the pipeline closes); `closed` waits for running work to end. */
  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.sweeper.stop();
    this.offline.stop();
  }

  async closed(): Promise<void> {
    await Promise.all([this.sweeper.closed(), this.offline.closed(), this.schedule]);
  }
}
