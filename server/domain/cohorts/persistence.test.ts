import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '../../store/contract.js';
import { openLevelStore } from '../../store/level.js';
import { buildTenancyFixture, ids, thrown, type TenancyFixture } from '../../../test/support/tenancy.js';
import { Tenancy } from '../tenancy/tenancy.js';
import { CohortRegistry } from './registry.js';

const views = { and: [{ or: [{ event: 'Pageview' }] }] };
const entered = (code: number) => ({ and: [{ or: [{ has_entered: { segment: code } }] }] });

let dir: string;
let store: Store;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'audience-control-'));
  store = await openLevelStore(dir);
});
afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

async function reopen(): Promise<{ tenancy: Tenancy; cohorts: CohortRegistry }> {
  await store.close();
  store = await openLevelStore(dir);
  const tenancy = await Tenancy.open(store);
  return { tenancy, cohorts: await CohortRegistry.open(store, tenancy) };
}

async function populate(f: TenancyFixture, cohorts: CohortRegistry) {
  const base = { query: views, ast: views, references: [], now: f.now, newId: ids.newId };
  const a = await cohorts.create({ ...base, workspaceId: f.ws.C1.id, name: 'A', description: 'first', tags: ['x'] });
  const b = await cohorts.create({ ...base, workspaceId: f.ws.G.id, name: 'B', query: entered(a.code), ast: entered(a.code), references: [a.code] });
  const gone = await cohorts.create({ ...base, workspaceId: f.ws.R.id, name: 'gone' });
  const offline = await cohorts.create({ ...base, workspaceId: f.ws.B.id, name: 'other org', segment_type: 'offline' });
  await cohorts.update(a.id, { state: 'Disabled', description: null }, new Date('2026-11-21T00:00:00.000Z'));
  await cohorts.delete(gone.id);
  cohorts.adjustAudienceSize(f.orgA.organization_id, b.code, 7);
  await store.batch(cohorts.audienceSizeOps());
  await f.tenancy.revokeKey(f.keys.privateC1.id);
  return { a, b, offline };
}

describe('control plane survives a restart (LevelDB)', () => {
  it('reads back organizations, workspaces, keys, cohorts, codes, references, plan versions and sizes', async () => {
    const f = await buildTenancyFixture(store);
    const cohorts = await CohortRegistry.open(store, f.tenancy);
    const { a, b, offline } = await populate(f, cohorts);
    const orgA = f.orgA.organization_id;
    const before = {
      workspaces: f.tenancy.listWorkspaces(f.as(f.orgA.private_key)),
      keys: f.tenancy.listKeys(f.as(f.orgA.private_key)),
      cohorts: cohorts.listVisible(f.as(f.keys.adminC1.key), true),
      plan: cohorts.planVersion(orgA),
    };

    const again = await reopen();
    expect(again.tenancy.isInitialised()).toBe(true);
    expect(again.tenancy.getOrganization(orgA)?.name).toBe('Org A');
    const admin = again.tenancy.authenticate(f.orgA.private_key);
    expect(again.tenancy.listWorkspaces(admin)).toEqual(before.workspaces);
    expect(again.tenancy.listKeys(admin)).toEqual(before.keys);
    expect(again.tenancy.ancestorsOf(f.ws.G.id)).toEqual([f.ws.C1.id, f.ws.R.id]);
    expect(again.tenancy.authenticate(f.keys.adminC1.key).access).toBe('descendants');
    expect(thrown(() => again.tenancy.authenticate(f.keys.privateC1.key))).toMatchObject({ status: 401, code: 2000 });

    const adminC1 = again.tenancy.authenticate(f.keys.adminC1.key);
    expect(again.cohorts.listVisible(adminC1, true)).toEqual(before.cohorts);
    expect(again.cohorts.get(a.id)).toMatchObject({ state: 'Disabled', last_updated_at: '2026-11-21T00:00:00.000Z' });
    expect(again.cohorts.get(a.id)).not.toHaveProperty('description');
    expect(again.cohorts.get(b.id)).toEqual(b);
    expect(again.cohorts.getByCode(f.orgB.organization_id, 1)).toEqual(offline);
    expect(again.cohorts.planVersion(orgA)).toBe(before.plan);
    expect(again.cohorts.audienceSize(b.id)).toBe(7);
    expect(again.cohorts.enabledRealTime(orgA).map((c) => c.code)).toEqual([b.code]);

    // D17: codes continue after the highest ever given (3 was deleted and is not reused); D18: the index survived.
    const next = await again.cohorts.create({ workspaceId: f.ws.C1.id, name: 'next', query: views, ast: views, references: [], now: f.now, newId: ids.newId });
    expect(next.code).toBe(4);
    await expect(again.cohorts.delete(a.id)).rejects.toMatchObject({ status: 409, code: 4000 });
    await expect(again.cohorts.update(b.id, { query: views, ast: views, references: [] }, f.now)).resolves.toBeDefined();
    await again.cohorts.delete(a.id);
    expect(again.cohorts.planVersion(orgA)).toBeGreaterThan(before.plan);
  });
});

describe('keys are stored only as hashes (D5)', () => {
  it('no store key or value, and no byte of the data directory, contains a created key', async () => {
    const f = await buildTenancyFixture(store);
    const cohorts = await CohortRegistry.open(store, f.tenancy);
    await populate(f, cohorts);
    const extra = await f.tenancy.createKey({ workspaceId: f.ws.G.id, type: 'private', name: 'extra', now: f.now, ...ids });
    const secrets = [
      f.orgA.private_key,
      f.orgA.public_key,
      f.orgB.private_key,
      f.orgB.public_key,
      ...Object.values(f.keys).map((k) => k.key),
      extra.key,
    ];
    expect(new Set(secrets).size).toBe(9);
    const variants = secrets.flatMap((s) => [s, s.toUpperCase(), s.replace(/-/g, '')]);

    let entries = 0;
    for await (const [storeKey, value] of store.iterate({})) {
      entries++;
      const text = `${storeKey}\n${JSON.stringify(value)}`;
      for (const secret of variants) expect(text.includes(secret)).toBe(false);
    }
    expect(entries).toBeGreaterThan(10);

    await store.close();
    let bytes = 0;
    for (const file of await readdir(dir)) {
      const content = (await readFile(join(dir, file))).toString('latin1');
      bytes += content.length;
      for (const secret of variants) expect(content.includes(secret)).toBe(false);
    }
    expect(bytes).toBeGreaterThan(0);
    store = await openLevelStore(dir);
    await expect(Tenancy.open(store).then((t) => t.authenticate(extra.key).keyId)).resolves.toBe(extra.id);
  });
});
