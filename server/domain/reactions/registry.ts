// The reactions registry (D37): every reaction of every organization in memory, written through to the store
// (`r!{org}!{id}`), with the lookups the ingest tick (which reactions a transition fires), the delivery loop (where
// and with which secret to send) and the routes (D9 visibility, as cohorts) need.

import { randomBytes as cryptoRandomBytes } from 'node:crypto';
import { forbidden, notFound } from '../../errors.js';
import type { BatchOp, Store } from '../../store/contract.js';
import { prefixEnd } from '../../store/contract.js';
import { SerialQueue } from '../tenancy/serial.js';
import type { Tenancy } from '../tenancy/tenancy.js';
import type { Principal } from '../tenancy/types.js';
import type { Cohort } from '../cohorts/index.js';
import { reactionsKeys, type FiringReaction, type Reaction, type ReactionLookup, type ReactionState, type ReactionTrigger } from './contract.js';

export interface CreateReactionInput {
  readonly workspaceId: string;
  readonly name: string;
  readonly cohort: Cohort;
  readonly trigger: ReactionTrigger;
  readonly url: string;
  readonly now: Date;
  readonly newId: () => string;
}

export interface ReactionPatch {
  readonly name?: string;
  readonly url?: string;
  readonly state?: ReactionState;
}

/** What the delivery loop needs of a reaction. */
export interface DeliveryTarget {
  readonly url: string;
  readonly secret: string;
  readonly state: ReactionState;
}

/** Outbox entries are deleted with their reaction in batches of this many keys. */
const DELETE_BATCH = 1000;

export class ReactionRegistry implements ReactionLookup {
  private readonly byId = new Map<string, Reaction>();
  /** org -> cohort code -> enabled reactions on it (what the tick asks, per transition). */
  private readonly firingIndex = new Map<string, Map<number, FiringReaction[]>>();
  private readonly everyTime = new Map<string, number>();
  private readonly queue = new SerialQueue();
  private readonly listeners: ((reaction: Reaction, removed: boolean) => void)[] = [];

  private constructor(
    private readonly store: Store,
    private readonly tenancy: Tenancy,
    private readonly cohortName: (org: string, code: number) => string | undefined,
    /** Where signing secrets come from (a cluster node applying a replicated request: the request's own bytes). */
    private readonly randomBytes: (size: number) => Buffer,
  ) {}

  static async open(
    store: Store,
    tenancy: Tenancy,
    cohortName: (org: string, code: number) => string | undefined,
    randomBytes: (size: number) => Buffer = cryptoRandomBytes,
  ): Promise<ReactionRegistry> {
    const registry = new ReactionRegistry(store, tenancy, cohortName, randomBytes);
    const prefix = reactionsKeys.allReactionsPrefix();
    for await (const [, reaction] of store.iterate<Reaction>({ gte: prefix, lt: prefixEnd(prefix) })) registry.byId.set(reaction.id, Object.freeze(reaction));
    registry.reindex();
    return registry;
  }

  // ---- the tick, the delivery loop

  firing(org: string, code: number): readonly FiringReaction[] {
    return this.firingIndex.get(org)?.get(code) ?? [];
  }

  hasEveryTime(org: string): boolean {
    return (this.everyTime.get(org) ?? 0) > 0;
  }

  target(id: string): DeliveryTarget | undefined {
    const reaction = this.byId.get(id);
    return reaction === undefined ? undefined : { url: reaction.action.url, secret: reaction.secret, state: reaction.state };
  }

  ids(): string[] {
    return [...this.byId.keys()];
  }

  /** Called after every create, change and delete (the delivery loop and the stream follow them). */
  onChange(listener: (reaction: Reaction, removed: boolean) => void): void {
    this.listeners.push(listener);
  }

  /** Reactions (any state) on cohort `code` of `org`: a cohort they name cannot be deleted (routes/cohorts.ts). */
  onCohort(org: string, code: number): Reaction[] {
    return [...this.byId.values()].filter((r) => r.organization_id === org && r.cohort_code === code);
  }

  // ---- the routes (D9 as cohorts)

  /** Own workspace and its ancestors', plus descendants' with `includeChildren` (checked by the caller); by creation. */
  listVisible(principal: Principal, includeChildren: boolean): Reaction[] {
    const own = principal.workspaceId;
    return [...this.byId.values()]
      .filter(
        (r) =>
          r.organization_id === principal.organizationId &&
          (this.tenancy.isSameOrDescendant(own, r.workspace_id) || (includeChildren && this.tenancy.isSameOrDescendant(r.workspace_id, own))),
      )
      .sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id < b.id ? -1 : 1));
  }

  getVisible(principal: Principal, id: string): Reaction {
    const reaction = this.byId.get(id);
    if (reaction === undefined || !this.tenancy.canSeeWorkspace(principal, reaction.workspace_id)) throw notFound('reaction');
    return reaction;
  }

  getWritable(principal: Principal, id: string): Reaction {
    const reaction = this.getVisible(principal, id);
    if (!this.tenancy.canWriteWorkspace(principal, reaction.workspace_id)) throw forbidden('Reactions of a parent workspace are read-only for this key.');
    return reaction;
  }

  async create(input: CreateReactionInput): Promise<Reaction> {
    return this.queue.run(async () => {
      const workspace = this.tenancy.getWorkspace(input.workspaceId);
      if (workspace === undefined) throw notFound('workspace');
      const at = input.now.toISOString();
      const reaction: Reaction = Object.freeze({
        id: input.newId(),
        name: input.name,
        cohort_id: input.cohort.id,
        cohort_code: input.cohort.code,
        trigger: input.trigger,
        action: Object.freeze({ type: 'webhook' as const, url: input.url }),
        state: 'Enabled' as const,
        workspace_id: workspace.id,
        created_at: at,
        last_updated_at: at,
        secret: this.randomBytes(32).toString('hex'),
        organization_id: workspace.organization_id,
      });
      await this.store.batch([{ type: 'put', key: reactionsKeys.reaction(reaction.organization_id, reaction.id), value: reaction }]);
      this.byId.set(reaction.id, reaction);
      this.changed(reaction, false);
      return reaction;
    });
  }

  async update(id: string, patch: ReactionPatch, now: Date): Promise<Reaction> {
    return this.queue.run(async () => {
      const current = this.byId.get(id);
      if (current === undefined) throw notFound('reaction');
      const next: Reaction = Object.freeze({
        ...current,
        ...(patch.name !== undefined ? { name: patch.name } : {}),
        ...(patch.url !== undefined ? { action: Object.freeze({ type: 'webhook' as const, url: patch.url }) } : {}),
        ...(patch.state !== undefined ? { state: patch.state } : {}),
        last_updated_at: now.toISOString(),
      });
      await this.store.batch([{ type: 'put', key: reactionsKeys.reaction(next.organization_id, next.id), value: next }]);
      this.byId.set(id, next);
      this.changed(next, false);
      return next;
    });
  }

  /** Removes the reaction, then its outbox (deliveries and queue) in bounded batches. */
  async delete(id: string): Promise<void> {
    await this.queue.run(async () => {
      const current = this.byId.get(id);
      if (current === undefined) throw notFound('reaction');
      await this.store.batch([{ type: 'del', key: reactionsKeys.reaction(current.organization_id, id) }]);
      this.byId.delete(id);
      this.changed(current, true);
    });
    for (const prefix of [reactionsKeys.pendingPrefix(id), reactionsKeys.deliveryPrefix(id)]) await this.deleteRange(prefix);
  }

  private async deleteRange(prefix: string): Promise<void> {
    for (;;) {
      const ops: BatchOp[] = [];
      for await (const [key] of this.store.iterate({ gte: prefix, lt: prefixEnd(prefix), limit: DELETE_BATCH })) ops.push({ type: 'del', key });
      if (ops.length === 0) return;
      await this.store.batch(ops);
    }
  }

  private changed(reaction: Reaction, removed: boolean): void {
    this.reindex();
    for (const listener of this.listeners) listener(reaction, removed);
  }

  /** Rebuilds the tick's index (reactions are few and change rarely). */
  private reindex(): void {
    this.firingIndex.clear();
    this.everyTime.clear();
    for (const r of this.byId.values()) {
      if (r.state !== 'Enabled') continue;
      const org = r.organization_id;
      let byCode = this.firingIndex.get(org);
      if (byCode === undefined) this.firingIndex.set(org, (byCode = new Map()));
      const list = byCode.get(r.cohort_code) ?? [];
      const cohortName = this.cohortName;
      const code = r.cohort_code;
      // The cohort's name as it is when a delivery is written (a rename shows in the next ones).
      list.push({ id: r.id, trigger: r.trigger, cohort: { id: r.cohort_id, code, get name() { return cohortName(org, code) ?? ''; } } });
      byCode.set(r.cohort_code, list);
      if (r.trigger === 'every_time') this.everyTime.set(org, (this.everyTime.get(org) ?? 0) + 1);
    }
  }
}
