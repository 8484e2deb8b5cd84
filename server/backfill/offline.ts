// Offline cohorts (D20): not evaluated per event; computed over every user's stored history on demand (the
// recompute route) and on a schedule, off the lanes. The members are stored (`om!`), and the result (`oc!`): the
// size is the last computed one.

import { randomUUID } from 'node:crypto';
import type { CohortDefinition } from '../../engine/api.js';
import type { Cohort, CohortRegistry } from '../domain/cohorts/index.js';
import type { IngestPipeline } from '../ingest/index.js';
import type { BatchOp, Store } from '../store/contract.js';
import { prefixEnd } from '../store/contract.js';
import { offlineMemberKey, offlineMembersPrefix, offlineResultKey } from './keys.js';
import type { BackfillProgress } from './sweep.js';
import { countUsers, listUsers } from './users.js';

/** The stored result of an offline cohort's last computation. */
export interface OfflineResult {
  readonly size: number;
  readonly users: number;
  readonly computed_at: string;
}

/**
 * A cluster node's share of a computation (issue 15): it computes the users of the partitions it owns and publishes
 * their counts per partition; the cohort's size is the sum of the partitions' last published counts.
 */
export interface OfflineScope {
  /** The partition of `user` when this node computes it now; undefined when another node does. */
  partitionOf(org: string, user: string): number | undefined;
  /** The partitions this node computes now (each gets a count, 0 included). */
  partitions(): readonly number[];
  /** A computation ended: members and users visited per partition. */
  computed(cohort: Cohort, counts: ReadonlyMap<number, { readonly size: number; readonly users: number }>, computedAt: Date): Promise<void>;
}

interface Running {
  done: number;
  total: number;
  readonly promise: Promise<void>;
}

let planVersions = 0;

export class OfflineCohorts {
  private readonly results = new Map<string, OfflineResult>();
  private readonly running = new Map<string, Running>();
  private stopped = false;

  constructor(
    private readonly store: Store,
    private readonly pipeline: IngestPipeline,
    private readonly cohorts: CohortRegistry,
    private readonly now: () => Date,
    private readonly log: (line: string) => void,
    private readonly batch = 128,
    private readonly scope?: OfflineScope,
  ) {}

  /** The last computed result (undefined before the first computation ends). */
  async resultOf(cohort: Cohort): Promise<OfflineResult | undefined> {
    const id = idOf(cohort);
    const known = this.results.get(id);
    if (known !== undefined) return known;
    const stored = await this.store.get<OfflineResult>(offlineResultKey(cohort.organization_id, cohort.code));
    if (stored !== undefined) this.results.set(id, stored);
    return stored;
  }

  /** The result in memory (read once through resultOf or computed by this process). */
  knownResultOf(cohort: Cohort): OfflineResult | undefined {
    return this.results.get(idOf(cohort));
  }

  progressOf(cohort: Cohort): BackfillProgress | undefined {
    const running = this.running.get(idOf(cohort));
    return running === undefined ? undefined : { state: 'running', users_done: Math.min(running.done, running.total), users_total: running.total };
  }

  /** Starts a computation unless one runs; answers its progress. */
  recompute(cohort: Cohort): BackfillProgress {
    const id = idOf(cohort);
    if (!this.running.has(id) && !this.stopped) {
      const running: Running = { done: 0, total: 0, promise: Promise.resolve() };
      const promise = this.compute(cohort, running).finally(() => this.running.delete(id));
      promise.catch((error: unknown) => {
        if (!this.stopped) this.log(`backfill: computing offline cohort ${cohort.code} failed: ${String(error)}`);
      });
      this.running.set(id, Object.assign(running, { promise }));
    }
    return this.progressOf(cohort) ?? { state: 'running', users_done: 0, users_total: 0 };
  }

  /** Resolves once the cohort's running computation (if any) ends; rejects with its failure. */
  async whenComputed(cohort: Cohort): Promise<void> {
    await this.running.get(idOf(cohort))?.promise;
  }

  /** The schedule's turn: every enabled offline cohort of every organization, one after another. */
  async recomputeAll(): Promise<void> {
    for (const org of this.cohorts.organizations()) {
      for (const cohort of this.cohorts.allOf(org)) {
        if (this.stopped) return;
        if (cohort.segment_type !== 'offline' || cohort.state !== 'Enabled') continue;
        this.recompute(cohort);
        await this.whenComputed(cohort).catch(() => undefined);
      }
    }
  }

  stop(): void {
    this.stopped = true;
  }

  async closed(): Promise<void> {
    await Promise.allSettled([...this.running.values()].map((running) => running.promise));
  }

  private async compute(cohort: Cohort, running: Running): Promise<void> {
    const org = cohort.organization_id;
    const plan = { key: `${org}\u0000offline\u0000${cohort.code}`, version: ++planVersions, cohorts: definitionsFor(this.cohorts.allOf(org), cohort.code) };
    const run = randomUUID();
    running.total = await countUsers(this.store, org);
    const scope = this.scope;
    const counts = new Map((scope?.partitions() ?? []).map((partition) => [partition, { size: 0, users: 0 }]));
    let size = 0;
    let visited = 0;
    let after: string | null = null;
    for (;;) {
      const listed = await listUsers(this.store, org, after, this.batch);
      if (listed.length === 0) break;
      const users = scope === undefined ? listed : listed.filter((user) => scope.partitionOf(org, user) !== undefined);
      const replayed = users.length === 0 ? [] : await this.pipeline.replayHistories(plan, org, users, () => this.stopped);
      const ops: BatchOp[] = [];
      for (const user of replayed) {
        const key = offlineMemberKey(org, cohort.code, user.user);
        const member = user.memberships.includes(cohort.code);
        const partition = scope?.partitionOf(org, user.user);
        if (partition !== undefined) {
          const count = counts.get(partition) ?? { size: 0, users: 0 };
          counts.set(partition, { size: count.size + (member ? 1 : 0), users: count.users + 1 });
        }
        if (member) {
          size += 1;
          ops.push({ type: 'put', key, value: run });
        } else {
          ops.push({ type: 'del', key });
        }
      }
      await this.store.batch(ops);
      after = listed[listed.length - 1] as string;
      visited += users.length;
      running.done += listed.length;
      running.total = Math.max(running.total, running.done);
    }
    // Members of an earlier computation not seen in this one (no events any more) leave.
    const prefix = offlineMembersPrefix(org, cohort.code);
    const stale: BatchOp[] = [];
    for await (const [key, value] of this.store.iterate<string>({ gte: prefix, lt: prefixEnd(prefix) })) if (value !== run) stale.push({ type: 'del', key });
    const computedAt = this.now();
    const result: OfflineResult = { size, users: visited, computed_at: computedAt.toISOString() };
    await this.store.batch([...stale, { type: 'put', key: offlineResultKey(org, cohort.code), value: result }], { sync: true });
    this.results.set(idOf(cohort), result);
    await scope?.computed(cohort, counts, computedAt);
  }
}

/** The offline cohort and every cohort its transition clauses reach (evaluated with it, D35), as definitions. */
function definitionsFor(all: readonly Cohort[], code: number): CohortDefinition[] {
  const byCode = new Map(all.map((cohort) => [cohort.code, cohort]));
  const wanted = new Set<number>();
  const visit = (current: number): void => {
    if (wanted.has(current)) return;
    const cohort = byCode.get(current);
    if (cohort === undefined) return;
    wanted.add(current);
    for (const ref of cohort.references) visit(ref);
  };
  visit(code);
  return [...wanted].sort((a, b) => a - b).map((c) => ({ code: c, query: (byCode.get(c) as Cohort).ast as CohortDefinition['query'] }));
}

function idOf(cohort: Cohort): string {
  return `${cohort.organization_id}\u0000${cohort.code}`;
}
