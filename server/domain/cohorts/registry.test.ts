import { randomUUID } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { MemoryStore } from '../../store/memory.js';
import { prefixEnd } from '../../store/contract.js';
import { buildTenancyFixture, ids, thrown, type TenancyFixture } from '../../../test/support/tenancy.js';
import { CohortRegistry } from './registry.js';
import type { Cohort, CreateCohortInput } from './types.js';
import { toCohortSummary, toCohortWire } from './wire.js';

// The registry treats the AST as opaque; these tests hand it the query itself and the codes its transition clauses
// name, which is what the validator's `references` are.
function referencesOf(query: unknown): number[] {
  const found = new Set<number>();
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(walk);
    if (typeof value !== 'object' || value === null) return;
    for (const [name, child] of Object.entries(value)) {
      if (['has_entered', 'has_not_entered', 'has_exited', 'has_not_exited'].includes(name)) {
        const segment = (child as { segment?: unknown }).segment;
        if (typeof segment === 'number') found.add(segment);
      }
      walk(child);
    }
  };
  walk(query);
  return [...found].sort((a, b) => a - b);
}

const views = { and: [{ or: [{ event: 'Pageview' }] }] };
const entered = (code: number) => ({ and: [{ or: [{ event: 'Pageview' }] }, { or: [{ has_entered: { segment: code } }] }] });

let f: TenancyFixture;
let store: MemoryStore;
let cohorts: CohortRegistry;

function create(overrides: Partial<CreateCohortInput> & { query?: unknown } = {}): Promise<Cohort> {
  const query = overrides.query ?? views;
  return cohorts.create({
    workspaceId: f.ws.C1.id,
    name: 'Readers',
    query,
    ast: query,
    references: referencesOf(query),
    now: f.now,
    newId: ids.newId,
    ...overrides,
  });
}

beforeEach(async () => {
  store = new MemoryStore();
  f = await buildTenancyFixture(store);
  cohorts = await CohortRegistry.open(store, f.tenancy);
});

describe('create (D14, D17)', () => {
  it('answers the full record, Enabled, real_time by default, with the query as sent', async () => {
    const cohort = await create({ description: 'people who read', tags: ['a', 'b'] });
    expect(cohort).toMatchObject({
      code: 1,
      name: 'Readers',
      description: 'people who read',
      tags: ['a', 'b'],
      state: 'Enabled',
      workspace_id: f.ws.C1.id,
      segment_type: 'real_time',
      query: views,
      created_at: '2026-11-20T12:00:00.000Z',
      last_updated_at: '2026-11-20T12:00:00.000Z',
      lookalike: false,
      organization_id: f.orgA.organization_id,
    });
    expect(cohorts.get(cohort.id)).toBe(cohort);
    expect(cohorts.getByCode(f.orgA.organization_id, 1)).toBe(cohort);
  });

  it('codes run from 1 in creation order per organization and are never reused (D17)', async () => {
    const a = await create();
    const b = await create({ workspaceId: f.ws.G.id });
    const other = await create({ workspaceId: f.ws.B.id });
    await cohorts.delete(b.id);
    const c = await create({ workspaceId: f.ws.R.id });
    expect([a.code, b.code, c.code]).toEqual([1, 2, 3]);
    expect(other.code).toBe(1);
    expect(cohorts.getByCode(f.orgB.organization_id, 1)?.id).toBe(other.id);
  });

  it('concurrent creates get distinct codes', async () => {
    const made = await Promise.all(Array.from({ length: 20 }, () => create()));
    expect(made.map((c) => c.code).sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
  });

  it('refuses impossible records: names outside 1..256, non-string tags, unknown segment type (400 1002)', async () => {
    for (const bad of [
      { name: '' },
      { name: 'n'.repeat(257) },
      { tags: ['ok', 3 as unknown as string] },
      { segment_type: 'batch' as 'offline' },
      { description: 5 as unknown as string },
    ]) {
      await expect(create(bad)).rejects.toMatchObject({ status: 400, code: 1002 });
    }
    expect(cohorts.listVisible(f.as(f.keys.adminC1.key), true)).toEqual([]);
  });

  it('an unknown workspace is 404 3000', async () => {
    await expect(create({ workspaceId: randomUUID() })).rejects.toMatchObject({ status: 404, code: 3000 });
  });

  it('returned records are frozen, so callers cannot change the registry by accident', async () => {
    const cohort = await create({ tags: ['t'] });
    expect(Object.isFrozen(cohort)).toBe(true);
    expect(Object.isFrozen(cohort.tags)).toBe(true);
    expect(Object.isFrozen(cohort.query)).toBe(true);
  });
});

describe('references (D18)', () => {
  it('a transition clause naming an unknown code is 400 1002 with the clause path', async () => {
    await create();
    await expect(create({ query: entered(7) })).rejects.toMatchObject({
      status: 400,
      code: 1002,
      detail: expect.stringMatching(/^query\.and\[1\]\.or\[0\]\.has_entered\.segment: /),
    });
  });

  it('a code of another organization is unknown here', async () => {
    const theirs = await create({ workspaceId: f.ws.B.id, query: views });
    await create();
    await create();
    await expect(create({ query: entered(theirs.code + 5) })).rejects.toMatchObject({ status: 400, code: 1002 });
    const ok = await create({ query: entered(2) });
    expect(ok.references).toEqual([2]);
  });

  it('a cycle of transition clauses is 400 1002, the direct self-reference included', async () => {
    const a = await create();
    const b = await create({ query: entered(a.code) });
    const selfLoop = cohorts.update(a.id, { query: entered(a.code), ast: entered(a.code), references: [a.code] }, f.now);
    await expect(selfLoop).rejects.toMatchObject({ status: 400, code: 1002 });
    const cycle = cohorts.update(a.id, { query: entered(b.code), ast: entered(b.code), references: [b.code] }, f.now);
    await expect(cycle).rejects.toMatchObject({ status: 400, code: 1002, detail: expect.stringMatching(/^query\.and\[1\]/) });
    expect(cohorts.get(a.id)?.query).toEqual(views);
  });

  it('a longer cycle is found too, and a chain without one is accepted', async () => {
    const a = await create();
    const b = await create({ query: entered(a.code) });
    const c = await create({ query: entered(b.code) });
    const closing = cohorts.update(a.id, { query: entered(c.code), ast: entered(c.code), references: [c.code] }, f.now);
    await expect(closing).rejects.toMatchObject({ status: 400, code: 1002 });
    const d = await create();
    const chained = await cohorts.update(a.id, { query: entered(d.code), ast: entered(d.code), references: [d.code] }, f.now);
    expect(chained.references).toEqual([d.code]);
  });

  it('deleting a cohort another query names is 409 4000 listing the referencing codes and names', async () => {
    const a = await create();
    const b = await create({ query: entered(a.code) });
    const c = await create({ query: entered(a.code) });
    await expect(cohorts.delete(a.id)).rejects.toMatchObject({
      status: 409,
      code: 4000,
      detail: expect.stringContaining(`${b.code} "Readers", ${c.code} "Readers"`),
    });
    expect(cohorts.get(a.id)).toBeDefined();
  });

  it('once the referencing queries change or go, the cohort can be deleted', async () => {
    const a = await create();
    const b = await create({ query: entered(a.code) });
    const c = await create({ query: entered(a.code) });
    await cohorts.update(b.id, { query: views, ast: views, references: [] }, f.now);
    await cohorts.delete(c.id);
    await cohorts.delete(a.id);
    expect(cohorts.get(a.id)).toBeUndefined();
    expect(cohorts.getByCode(f.orgA.organization_id, a.code)).toBeUndefined();
  });
});

describe('update (D16)', () => {
  it('changes only the given fields and last_updated_at; description null deletes it', async () => {
    const cohort = await create({ description: 'd', tags: ['x'] });
    const later = new Date('2026-11-21T00:00:00.000Z');
    const renamed = await cohorts.update(cohort.id, { name: 'Renamed' }, later);
    expect(renamed).toMatchObject({ name: 'Renamed', description: 'd', tags: ['x'], query: views, code: cohort.code });
    expect(renamed.created_at).toBe(cohort.created_at);
    expect(renamed.last_updated_at).toBe('2026-11-21T00:00:00.000Z');
    const cleared = await cohorts.update(cohort.id, { description: null, tags: [] }, later);
    expect(cleared).not.toHaveProperty('description');
    expect(cleared.tags).toEqual([]);
    expect(cleared.name).toBe('Renamed');
    const described = await cohorts.update(cohort.id, { description: 'again' }, later);
    expect(described.description).toBe('again');
    expect(cohorts.get(cohort.id)).toBe(described);
  });

  it('changes the query together with its AST and references; a partial query change is refused (500)', async () => {
    const a = await create();
    const b = await create();
    const updated = await cohorts.update(b.id, { query: entered(a.code), ast: entered(a.code), references: [a.code] }, f.now);
    expect(updated.query).toEqual(entered(a.code));
    expect(updated.ast).toEqual(entered(a.code));
    await expect(cohorts.update(b.id, { query: views }, f.now)).rejects.toMatchObject({ status: 500, code: 5000 });
  });

  it('sets state Enabled/Disabled and refuses other values (400 1002)', async () => {
    const cohort = await create();
    expect((await cohorts.update(cohort.id, { state: 'Disabled' }, f.now)).state).toBe('Disabled');
    await expect(cohorts.update(cohort.id, { state: 'Paused' as 'Enabled' }, f.now)).rejects.toMatchObject({ status: 400, code: 1002 });
    await expect(cohorts.update(cohort.id, { name: '' }, f.now)).rejects.toMatchObject({ status: 400, code: 1002 });
  });

  it('an unknown cohort is 404 3000 for update and delete', async () => {
    await expect(cohorts.update(randomUUID(), { name: 'x' }, f.now)).rejects.toMatchObject({ status: 404, code: 3000 });
    await expect(cohorts.delete(randomUUID())).rejects.toMatchObject({ status: 404, code: 3000 });
  });

  it('lookalike cohorts cannot be updated or deleted: 403 2001 (D16)', async () => {
    const lookalike = await create({ lookalike: true });
    await expect(cohorts.update(lookalike.id, { name: 'x' }, f.now)).rejects.toMatchObject({ status: 403, code: 2001 });
    await expect(cohorts.delete(lookalike.id)).rejects.toMatchObject({ status: 403, code: 2001 });
    expect(thrown(() => cohorts.getWritable(f.as(f.keys.adminC1.key), lookalike.id))).toMatchObject({ status: 403, code: 2001 });
    expect(cohorts.get(lookalike.id)?.name).toBe('Readers');
  });
});

describe('visibility (D8, D9)', () => {
  let inR: Cohort, inC1: Cohort, inG: Cohort, inC2: Cohort, inB: Cohort;
  beforeEach(async () => {
    inR = await create({ workspaceId: f.ws.R.id, name: 'root' });
    inC1 = await create({ workspaceId: f.ws.C1.id, name: 'own' });
    inG = await create({ workspaceId: f.ws.G.id, name: 'child' });
    inC2 = await create({ workspaceId: f.ws.C2.id, name: 'sibling' });
    inB = await create({ workspaceId: f.ws.B.id, name: 'other org' });
  });

  it('the default list is own and ancestors\u2019 cohorts, by code', () => {
    expect(cohorts.listVisible(f.as(f.keys.privateC1.key), false).map((c) => c.id)).toEqual([inR.id, inC1.id]);
    expect(cohorts.listVisible(f.as(f.keys.adminC1.key), false).map((c) => c.id)).toEqual([inR.id, inC1.id]);
  });

  it('include-child-workspaces adds the descendants\u2019 with descendants access, and is 403 2001 without', () => {
    expect(cohorts.listVisible(f.as(f.keys.adminC1.key), true).map((c) => c.id)).toEqual([inR.id, inC1.id, inG.id]);
    expect(thrown(() => cohorts.listVisible(f.as(f.keys.privateC1.key), true))).toMatchObject({ status: 403, code: 2001 });
    expect(cohorts.listVisible(f.as(f.orgB.private_key), true).map((c) => c.id)).toEqual([inB.id]);
  });

  it('reading one: own, ancestor and (descendants access) descendant cohorts; others are 404 3000', () => {
    const workspaceKey = f.as(f.keys.privateC1.key);
    const descendantsKey = f.as(f.keys.adminC1.key);
    expect(cohorts.getVisible(workspaceKey, inR.id).id).toBe(inR.id);
    expect(cohorts.getVisible(workspaceKey, inC1.id).id).toBe(inC1.id);
    expect(thrown(() => cohorts.getVisible(workspaceKey, inG.id))).toMatchObject({ status: 404, code: 3000 });
    expect(cohorts.getVisible(descendantsKey, inG.id).id).toBe(inG.id);
    for (const hidden of [inC2, inB]) {
      expect(thrown(() => cohorts.getVisible(descendantsKey, hidden.id))).toMatchObject({ status: 404, code: 3000 });
    }
    expect(thrown(() => cohorts.getVisible(descendantsKey, randomUUID()))).toMatchObject({ status: 404, code: 3000 });
  });

  it('writing: ancestors\u2019 cohorts are 403 2001, hidden ones 404 3000', () => {
    const workspaceKey = f.as(f.keys.privateC1.key);
    const descendantsKey = f.as(f.keys.adminC1.key);
    expect(thrown(() => cohorts.getWritable(workspaceKey, inR.id))).toMatchObject({ status: 403, code: 2001 });
    expect(thrown(() => cohorts.getWritable(descendantsKey, inR.id))).toMatchObject({ status: 403, code: 2001 });
    expect(cohorts.getWritable(workspaceKey, inC1.id).id).toBe(inC1.id);
    expect(thrown(() => cohorts.getWritable(workspaceKey, inG.id))).toMatchObject({ status: 404, code: 3000 });
    expect(cohorts.getWritable(descendantsKey, inG.id).id).toBe(inG.id);
    expect(thrown(() => cohorts.getWritable(descendantsKey, inB.id))).toMatchObject({ status: 404, code: 3000 });
    expect(thrown(() => cohorts.getWritable(f.as(f.keys.adminC2.key), inC1.id))).toMatchObject({ status: 404, code: 3000 });
  });
});

describe('engine plan inputs', () => {
  it('enabledRealTime lists the enabled real-time cohorts of one organization by code', async () => {
    const a = await create();
    await create({ segment_type: 'offline' });
    const c = await create();
    const d = await create();
    await create({ workspaceId: f.ws.B.id });
    await cohorts.update(c.id, { state: 'Disabled' }, f.now);
    expect(cohorts.enabledRealTime(f.orgA.organization_id).map((x) => x.code)).toEqual([a.code, d.code]);
  });

  it('the plan version rises on create, query change, state change and delete, not on name, tags or description', async () => {
    const org = f.orgA.organization_id;
    expect(cohorts.planVersion(org)).toBe(0);
    const a = await create();
    const afterCreate = cohorts.planVersion(org);
    expect(afterCreate).toBeGreaterThan(0);
    await cohorts.update(a.id, { name: 'n', tags: ['t'], description: 'd' }, f.now);
    expect(cohorts.planVersion(org)).toBe(afterCreate);
    await cohorts.update(a.id, { query: { and: [{ or: [{ event: 'Click' }] }] }, ast: {}, references: [] }, f.now);
    const afterQuery = cohorts.planVersion(org);
    expect(afterQuery).toBeGreaterThan(afterCreate);
    await cohorts.update(a.id, { state: 'Enabled' }, f.now);
    expect(cohorts.planVersion(org)).toBe(afterQuery);
    await cohorts.update(a.id, { state: 'Disabled' }, f.now);
    const afterState = cohorts.planVersion(org);
    expect(afterState).toBeGreaterThan(afterQuery);
    await cohorts.delete(a.id);
    expect(cohorts.planVersion(org)).toBeGreaterThan(afterState);
    expect(cohorts.planVersion(f.orgB.organization_id)).toBe(0);
  });
});

describe('live audience sizes (D19)', () => {
  it('adjusts in memory and hands the changed counters out once as batch operations', async () => {
    const a = await create();
    const b = await create();
    const org = f.orgA.organization_id;
    cohorts.adjustAudienceSize(org, a.code, 3);
    cohorts.adjustAudienceSize(org, a.code, -1);
    cohorts.setAudienceSize(org, b.code, 10);
    cohorts.adjustAudienceSize(org, 99, 5);
    expect(cohorts.audienceSize(a.id)).toBe(2);
    expect(cohorts.audienceSize(b.id)).toBe(10);
    const ops = cohorts.audienceSizeOps();
    expect(ops).toHaveLength(2);
    expect(cohorts.audienceSizeOps()).toEqual([]);
    await store.batch(ops);
    const reopened = await CohortRegistry.open(store, f.tenancy);
    expect(reopened.audienceSize(a.id)).toBe(2);
    expect(reopened.audienceSize(b.id)).toBe(10);
  });

  it('deleting a cohort removes its counter', async () => {
    const a = await create();
    cohorts.adjustAudienceSize(f.orgA.organization_id, a.code, 4);
    await store.batch(cohorts.audienceSizeOps());
    await cohorts.delete(a.id);
    expect(cohorts.audienceSize(a.id)).toBe(0);
    const left = [];
    for await (const entry of store.iterate({ gte: 'cs!', lt: prefixEnd('cs!') })) left.push(entry);
    expect(left).toEqual([]);
  });
});

describe('wire forms', () => {
  it('the summary has no query and no internal fields; the full form adds query', async () => {
    const cohort = await create({ description: 'd' });
    const summary = toCohortSummary(cohort, 4);
    expect(Object.keys(summary)).toEqual([
      'id',
      'code',
      'name',
      'description',
      'tags',
      'state',
      'workspace_id',
      'segment_type',
      'live_audience_size',
      'created_at',
      'last_updated_at',
    ]);
    const full = toCohortWire(cohort);
    expect(full.query).toEqual(views);
    expect(full).not.toHaveProperty('live_audience_size');
    expect(full).not.toHaveProperty('ast');
    expect(full).not.toHaveProperty('organization_id');
    expect(full).not.toHaveProperty('lookalike');
  });
});
