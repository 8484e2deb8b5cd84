// The cohort registry: every cohort of every organization in memory, written through to the store, with per-org
// codes (D17), the reference index (D18), the plan version the engine compiles by, and live audience sizes (D19).

import { ServiceError, forbidden, notFound, stillReferenced } from '../../errors.js';
import type { BatchOp, Store } from '../../store/contract.js';
import { prefixEnd } from '../../store/contract.js';
import { fromSeqPart, key, scanPrefix, seqPart } from '../../store/layout.js';
import { requireIncludeChildren } from '../tenancy/authorize.js';
import { checkName } from '../tenancy/names.js';
import { SerialQueue } from '../tenancy/serial.js';
import type { Tenancy } from '../tenancy/tenancy.js';
import type { Principal } from '../tenancy/types.js';
import { checkDescription, checkReferences, checkSegmentType, checkState, checkTags } from './fields.js';
import { assertReferencesValid } from './references.js';
import type { Cohort, CohortPatch, CreateCohortInput } from './types.js';

/** What the registry keeps per organization. */
interface OrgCohorts {
  readonly byCode: Map<number, Cohort>;
  /** code -> codes of the cohorts whose queries name it (the `cr!` index). */
  readonly referrers: Map<number, Set<number>>;
  readonly sizes: Map<number, number>;
  readonly dirtySizes: Set<number>;
  nextCode: number;
  planVersion: number;
}

const keys = {
  cohort: (org: string, id: string) => key('c', org, id),
  code: (org: string, code: number) => key('cc', org, seqPart(code)),
  nextCode: (org: string) => key('cn', org),
  reference: (org: string, code: number, referrer: number) => key('cr', org, seqPart(code), seqPart(referrer)),
  planVersion: (org: string) => key('cv', org),
  size: (org: string, code: number) => key('cs', org, seqPart(code)),
};

/** A cohort's generation; records from before generations count as generation 1. */
export function generationOf(cohort: Cohort): number {
  return cohort.generation ?? 1;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

async function* scan<T>(store: Store, prefix: string): AsyncIterable<readonly [string, T]> {
  yield* store.iterate<T>({ gte: prefix, lt: prefixEnd(prefix) });
}

export class CohortRegistry {
  private readonly byId = new Map<string, Cohort>();
  private readonly orgs = new Map<string, OrgCohorts>();
  private readonly queue = new SerialQueue();

  private constructor(
    private readonly store: Store,
    private readonly tenancy: Tenancy,
  ) {}

  /** Loads every cohort, code counter, plan version and audience size of the store. */
  static async open(store: Store, tenancy: Tenancy): Promise<CohortRegistry> {
    const registry = new CohortRegistry(store, tenancy);
    for await (const [, stored] of scan<Cohort>(store, scanPrefix('c'))) {
      registry.remember(
        Object.freeze({
          ...stored,
          tags: Object.freeze([...stored.tags]),
          query: deepFreeze(stored.query),
          references: Object.freeze([...stored.references]),
        }),
      );
    }
    for await (const [storeKey, next] of scan<number>(store, scanPrefix('cn'))) {
      registry.org(storeKey.slice(scanPrefix('cn').length)).nextCode = next;
    }
    for await (const [storeKey, version] of scan<number>(store, scanPrefix('cv'))) {
      registry.org(storeKey.slice(scanPrefix('cv').length)).planVersion = version;
    }
    for await (const [storeKey, size] of scan<number>(store, scanPrefix('cs'))) {
      const [org, code] = storeKey.slice(scanPrefix('cs').length).split('!');
      if (org !== undefined && code !== undefined) registry.org(org).sizes.set(fromSeqPart(code), size);
    }
    return registry;
  }

  // ---- reads

  get(id: string): Cohort | undefined {
    return this.byId.get(id);
  }

  getByCode(organizationId: string, code: number): Cohort | undefined {
    return this.orgs.get(organizationId)?.byCode.get(code);
  }

  /**
   * D9 list: cohorts of the key's workspace and its ancestors, plus (with `includeChildren`, which needs
   * `descendants` access: 403 2001 otherwise, D8) those below it; sorted by code.
   */
  listVisible(principal: Principal, includeChildren: boolean): Cohort[] {
    if (includeChildren) requireIncludeChildren(principal);
    const org = this.orgs.get(principal.organizationId);
    if (org === undefined) return [];
    const own = principal.workspaceId;
    return [...org.byCode.values()]
      .filter(
        (cohort) =>
          this.tenancy.isSameOrDescendant(own, cohort.workspace_id) ||
          (includeChildren && this.tenancy.isSameOrDescendant(cohort.workspace_id, own)),
      )
      .sort((a, b) => a.code - b.code);
  }

  /** D9: the cohort if the key may see it (own, ancestors', descendants' with `descendants` access); else 404 3000. */
  getVisible(principal: Principal, id: string): Cohort {
    const cohort = this.byId.get(id);
    if (cohort === undefined || !this.tenancy.canSeeWorkspace(principal, cohort.workspace_id)) throw notFound('cohort');
    return cohort;
  }

  /** D9/D16: the cohort if the key may change it; 404 3000 when hidden, 403 2001 for ancestors' and lookalikes. */
  getWritable(principal: Principal, id: string): Cohort {
    const cohort = this.getVisible(principal, id);
    if (!this.tenancy.canWriteWorkspace(principal, cohort.workspace_id)) {
      throw forbidden('Cohorts of a parent workspace are read-only for this key.');
    }
    if (cohort.lookalike) throw forbidden('Lookalike cohorts cannot be changed through the Cohorts API.');
    return cohort;
  }

  /** Enabled real-time cohorts of the organization by code: what the engine plan is compiled from. */
  enabledRealTime(organizationId: string): Cohort[] {
    const org = this.orgs.get(organizationId);
    if (org === undefined) return [];
    return [...org.byCode.values()]
      .filter((cohort) => cohort.state === 'Enabled' && cohort.segment_type === 'real_time')
      .sort((a, b) => a.code - b.code);
  }

  /**
   * Generations of the organization's enabled real-time cohorts by code (backfill: the plan version at which each
   * one's evaluation over history last started).
   */
  generationsOf(organizationId: string): Map<number, number> {
    return new Map(this.enabledRealTime(organizationId).map((cohort) => [cohort.code, generationOf(cohort)]));
  }

  /**
   * Codes of the organization's cohorts that exist but are not evaluated per event (disabled or offline): a real-time
   * query may name one, and its transition clause then never sees an entry or exit (E21, D19).
   */
  inactiveCodes(organizationId: string): number[] {
    return this.allOf(organizationId)
      .filter((cohort) => !(cohort.state === 'Enabled' && cohort.segment_type === 'real_time'))
      .map((cohort) => cohort.code);
  }

  /** Every cohort of the organization by code (any kind and state): offline plans include what they name. */
  allOf(organizationId: string): Cohort[] {
    const org = this.orgs.get(organizationId);
    return org === undefined ? [] : [...org.byCode.values()].sort((a, b) => a.code - b.code);
  }

  /** Organizations with at least one cohort. */
  organizations(): string[] {
    return [...this.orgs.entries()].filter(([, org]) => org.byCode.size > 0).map(([id]) => id);
  }

  /** Increases (persistently) on every create, query change, state change and delete; 0 before any. */
  planVersion(organizationId: string): number {
    return this.orgs.get(organizationId)?.planVersion ?? 0;
  }

  // ---- writes

  /** D14/D17/D18: a new cohort, `Enabled`, with the organization's next code. */
  async create(input: CreateCohortInput): Promise<Cohort> {
    const name = checkName('name', input.name);
    const description = input.description === undefined || input.description === null ? undefined : checkDescription(input.description);
    const tags = checkTags(input.tags ?? []);
    const segmentType = checkSegmentType(input.segment_type ?? 'real_time');
    const references = checkReferences(input.references);
    const query = deepFreeze(structuredClone(input.query));
    return this.queue.run(async () => {
      const workspace = this.tenancy.getWorkspace(input.workspaceId);
      if (workspace === undefined) throw notFound('workspace');
      const organizationId = workspace.organization_id;
      const org = this.org(organizationId);
      this.assertReferences(org, workspace.id, undefined, references, query);
      const createdAt = input.now.toISOString();
      const cohort: Cohort = Object.freeze({
        id: input.newId(),
        code: org.nextCode,
        name,
        ...(description !== undefined ? { description } : {}),
        tags,
        state: 'Enabled',
        workspace_id: workspace.id,
        segment_type: segmentType,
        query,
        created_at: createdAt,
        last_updated_at: createdAt,
        lookalike: input.lookalike === true,
        organization_id: organizationId,
        ast: input.ast,
        references,
        generation: org.planVersion + 1,
      });
      if (this.byId.has(cohort.id)) throw new ServiceError(5000, 'A generated cohort id collides with an existing one.');
      await this.store.batch(
        [
          { type: 'put', key: keys.cohort(organizationId, cohort.id), value: cohort },
          { type: 'put', key: keys.code(organizationId, cohort.code), value: cohort.id },
          { type: 'put', key: keys.nextCode(organizationId), value: cohort.code + 1 },
          { type: 'put', key: keys.planVersion(organizationId), value: org.planVersion + 1 },
          ...references.map((code) => ({ type: 'put' as const, key: keys.reference(organizationId, code, cohort.code), value: true })),
        ],
        { sync: true },
      );
      org.nextCode = cohort.code + 1;
      org.planVersion += 1;
      this.remember(cohort);
      return cohort;
    });
  }

  /**
   * D16: changes the given fields and `last_updated_at`. A new query needs its `ast` and `references` (D18 checks).
   * Lookalike cohorts are 403 2001. Authorisation (getWritable) is the caller's.
   */
  async update(id: string, patch: CohortPatch, now: Date): Promise<Cohort> {
    const name = patch.name === undefined ? undefined : checkName('name', patch.name);
    const description =
      patch.description === undefined || patch.description === null ? patch.description : checkDescription(patch.description);
    const tags = patch.tags === undefined ? undefined : checkTags(patch.tags);
    const state = patch.state === undefined ? undefined : checkState(patch.state);
    const givenQueryParts = [patch.query, patch.ast, patch.references].filter((part) => part !== undefined).length;
    if (givenQueryParts !== 0 && givenQueryParts !== 3) {
      throw new ServiceError(5000, 'A query update needs the query, its AST and its references together.');
    }
    const newQuery = givenQueryParts === 3 ? deepFreeze(structuredClone(patch.query)) : undefined;
    const newReferences = givenQueryParts === 3 ? checkReferences(patch.references) : undefined;
    return this.queue.run(async () => {
      const current = this.byId.get(id);
      if (current === undefined) throw notFound('cohort');
      if (current.lookalike) throw forbidden('Lookalike cohorts cannot be changed through the Cohorts API.');
      const org = this.org(current.organization_id);
      if (newReferences !== undefined) this.assertReferences(org, current.workspace_id, current.code, newReferences, newQuery);

      // D19: a new query, or being enabled again, starts the cohort's evaluation over history afresh.
      const restarts = newQuery !== undefined || (state === 'Enabled' && current.state !== 'Enabled');
      const generation = restarts ? org.planVersion + 1 : current.generation;
      const { description: _dropped, ...withoutDescription } = current;
      const base = description === null ? withoutDescription : current;
      const updated: Cohort = Object.freeze({
        ...base,
        ...(name !== undefined ? { name } : {}),
        ...(typeof description === 'string' ? { description } : {}),
        ...(tags !== undefined ? { tags } : {}),
        ...(state !== undefined ? { state } : {}),
        ...(newQuery !== undefined ? { query: newQuery, ast: patch.ast, references: newReferences } : {}),
        ...(generation !== undefined ? { generation } : {}),
        last_updated_at: now.toISOString(),
      });

      const bumps = newQuery !== undefined || (state !== undefined && state !== current.state);
      const ops: BatchOp[] = [{ type: 'put', key: keys.cohort(updated.organization_id, id), value: updated }];
      if (bumps) ops.push({ type: 'put', key: keys.planVersion(updated.organization_id), value: org.planVersion + 1 });
      if (newReferences !== undefined) {
        for (const code of current.references) {
          if (!newReferences.includes(code)) ops.push({ type: 'del', key: keys.reference(updated.organization_id, code, current.code) });
        }
        for (const code of newReferences) {
          ops.push({ type: 'put', key: keys.reference(updated.organization_id, code, current.code), value: true });
        }
      }
      await this.store.batch(ops, { sync: true });
      if (bumps) org.planVersion += 1;
      this.forget(current);
      this.remember(updated);
      return updated;
    });
  }

  /**
   * D16/D18: removes a cohort; 409 4000 while another cohort's query names it, 403 2001 for lookalikes. With a
   * `principal`, the 409 cause names only the referencing cohorts that key can see (D41); the others are counted.
   */
  async delete(id: string, principal?: Principal): Promise<void> {
    return this.queue.run(async () => {
      const cohort = this.byId.get(id);
      if (cohort === undefined) throw notFound('cohort');
      if (cohort.lookalike) throw forbidden('Lookalike cohorts cannot be deleted through the Cohorts API.');
      const org = this.org(cohort.organization_id);
      const referrers = [...(org.referrers.get(cohort.code) ?? [])].sort((a, b) => a - b);
      if (referrers.length > 0) throw stillReferenced(this.referrersCause(org, cohort.code, referrers, principal));
      const orgId = cohort.organization_id;
      await this.store.batch(
        [
          { type: 'del', key: keys.cohort(orgId, id) },
          { type: 'del', key: keys.code(orgId, cohort.code) },
          { type: 'del', key: keys.size(orgId, cohort.code) },
          { type: 'put', key: keys.planVersion(orgId), value: org.planVersion + 1 },
          ...cohort.references.map((code) => ({ type: 'del' as const, key: keys.reference(orgId, code, cohort.code) })),
        ],
        { sync: true },
      );
      org.planVersion += 1;
      org.sizes.delete(cohort.code);
      org.dirtySizes.delete(cohort.code);
      this.forget(cohort);
    });
  }

  // ---- live audience sizes (D19)

  /** The current number of members of a cohort (0 when unknown). */
  audienceSize(id: string): number {
    const cohort = this.byId.get(id);
    if (cohort === undefined) return 0;
    return this.orgs.get(cohort.organization_id)?.sizes.get(cohort.code) ?? 0;
  }

  /** Adds `delta` (entries minus exits) to a cohort's size in memory; ignored for a code that no longer exists. */
  adjustAudienceSize(organizationId: string, code: number, delta: number): void {
    const org = this.orgs.get(organizationId);
    if (org === undefined || !org.byCode.has(code) || delta === 0) return;
    org.sizes.set(code, (org.sizes.get(code) ?? 0) + delta);
    org.dirtySizes.add(code);
  }

  /** Sets a cohort's size in memory (after a re-evaluation over history, D19). */
  setAudienceSize(organizationId: string, code: number, size: number): void {
    const org = this.orgs.get(organizationId);
    if (org === undefined || !org.byCode.has(code)) return;
    org.sizes.set(code, size);
    org.dirtySizes.add(code);
  }

  /**
   * Puts of every size changed since the last call, with its current value; the marks are cleared. The caller adds
   * them to its next group-committed batch (issue batches in order: the last written value wins).
   */
  audienceSizeOps(): BatchOp[] {
    const ops: BatchOp[] = [];
    for (const [organizationId, org] of this.orgs) {
      for (const code of org.dirtySizes) {
        ops.push({ type: 'put', key: keys.size(organizationId, code), value: org.sizes.get(code) ?? 0 });
      }
      org.dirtySizes.clear();
    }
    return ops;
  }

  // ---- internals

  private org(organizationId: string): OrgCohorts {
    let org = this.orgs.get(organizationId);
    if (org === undefined) {
      org = { byCode: new Map(), referrers: new Map(), sizes: new Map(), dirtySizes: new Set(), nextCode: 1, planVersion: 0 };
      this.orgs.set(organizationId, org);
    }
    return org;
  }

  private referenceGraph(org: OrgCohorts, include: (cohort: Cohort) => boolean = () => true): Map<number, readonly number[]> {
    return new Map([...org.byCode].filter(([, cohort]) => include(cohort)).map(([code, cohort]) => [code, cohort.references]));
  }

  /**
   * D18/D41: the query of a cohort of `workspaceId` may name only cohorts that workspace can see (its own and its
   * ancestors'); any other code is refused exactly as an unknown one (same 400 1002 and message). Cycles are then
   * looked for over the whole organization.
   */
  private assertReferences(
    org: OrgCohorts,
    workspaceId: string,
    code: number | undefined,
    references: readonly number[],
    query: unknown,
  ): void {
    const visible = (cohort: Cohort): boolean => this.tenancy.isSameOrDescendant(workspaceId, cohort.workspace_id);
    assertReferencesValid(this.referenceGraph(org, visible), code, references, query);
    assertReferencesValid(this.referenceGraph(org), code, references, query);
  }

  /** D18/D41: the 409 cause; with a principal, only the referrers it can see are named. */
  private referrersCause(org: OrgCohorts, code: number, referrers: readonly number[], principal: Principal | undefined): string {
    const named =
      principal === undefined
        ? referrers
        : referrers.filter((referrer) => {
            const cohort = org.byCode.get(referrer);
            return cohort !== undefined && this.tenancy.canSeeWorkspace(principal, cohort.workspace_id);
          });
    const hidden = referrers.length - named.length;
    // Codes with their names, so a person (the dashboard shows the cause) knows them: `2 "Came back"`.
    const list = named.map((referrer) => `${referrer} ${JSON.stringify(org.byCode.get(referrer)?.name ?? '')}`).join(', ');
    if (hidden === 0) return `cohort ${code} is named by the queries of cohorts ${list}`;
    const others = `${hidden} cohort${hidden === 1 ? '' : 's'} this key cannot see`;
    if (named.length === 0) return `cohort ${code} is named by the queries of ${others}`;
    return `cohort ${code} is named by the queries of cohorts ${list} and of ${others}`;
  }

  private remember(cohort: Cohort): void {
    const org = this.org(cohort.organization_id);
    this.byId.set(cohort.id, cohort);
    org.byCode.set(cohort.code, cohort);
    if (org.nextCode <= cohort.code) org.nextCode = cohort.code + 1;
    for (const code of cohort.references) {
      let set = org.referrers.get(code);
      if (set === undefined) org.referrers.set(code, (set = new Set()));
      set.add(cohort.code);
    }
  }

  private forget(cohort: Cohort): void {
    const org = this.org(cohort.organization_id);
    this.byId.delete(cohort.id);
    org.byCode.delete(cohort.code);
    for (const code of cohort.references) org.referrers.get(code)?.delete(cohort.code);
  }
}
