import { randomUUID } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { ServiceError } from '../../errors.js';
import { MemoryStore } from '../../store/memory.js';
import { buildTenancyFixture, ids, thrown, type TenancyFixture } from '../../../test/support/tenancy.js';
import { Tenancy } from './tenancy.js';

describe('organizations (operations.md init)', () => {
  it('init creates a root workspace, a descendants private key and a public key', async () => {
    const tenancy = await Tenancy.open(new MemoryStore());
    expect(tenancy.isInitialised()).toBe(false);
    const now = new Date('2026-01-02T03:04:05.678Z');
    const org = await tenancy.initOrganization({ name: 'Acme', now, ...ids });
    expect(tenancy.isInitialised()).toBe(true);
    expect(org.workspace_id).toBe(org.organization_id);
    expect(tenancy.getWorkspace(org.workspace_id)).toEqual({
      id: org.organization_id,
      name: 'Acme',
      parent_id: null,
      organization_id: org.organization_id,
      created_at: '2026-01-02T03:04:05.678Z',
    });
    expect(tenancy.getOrganization(org.organization_id)?.name).toBe('Acme');
    const admin = tenancy.authenticate(org.private_key);
    expect(admin).toMatchObject({ type: 'private', access: 'descendants', workspaceId: org.workspace_id, organizationId: org.organization_id });
    expect(tenancy.authenticate(org.public_key)).toMatchObject({ type: 'public', workspaceId: org.workspace_id });
    expect(org.private_key).not.toBe(org.public_key);
  });
});

describe('authentication (D5)', () => {
  let f: TenancyFixture;
  beforeEach(async () => {
    f = await buildTenancyFixture(new MemoryStore());
  });

  it('no key is 401 2004', () => {
    expect(thrown(() => f.tenancy.authenticate(undefined))).toMatchObject({ status: 401, code: 2004 });
    expect(thrown(() => f.tenancy.authenticate(''))).toMatchObject({ status: 401, code: 2004 });
  });

  it('a value that is not a UUID is 401 2005', () => {
    for (const bad of ['abc', `${randomUUID()}x`, randomUUID().replace(/-/g, ''), ' ' + randomUUID()]) {
      expect(thrown(() => f.tenancy.authenticate(bad))).toMatchObject({ status: 401, code: 2005 });
    }
  });

  it('a UUID that is no key is 401 2000 with cause "This key does not exist."', () => {
    const error = thrown(() => f.tenancy.authenticate(randomUUID()));
    expect(error).toBeInstanceOf(ServiceError);
    expect(error).toMatchObject({ status: 401, code: 2000, detail: 'This key does not exist.' });
  });

  it('a live key resolves to its principal, whatever the letter case', () => {
    const expected = {
      keyId: f.keys.privateC1.id,
      type: 'private',
      access: 'workspace',
      workspaceId: f.ws.C1.id,
      organizationId: f.orgA.organization_id,
    };
    expect(f.tenancy.authenticate(f.keys.privateC1.key)).toEqual(expected);
    expect(f.tenancy.authenticate(f.keys.privateC1.key.toUpperCase())).toEqual(expected);
  });

  it('a revoked key fails at once with 2000, other keys keep working', async () => {
    await f.tenancy.revokeKey(f.keys.privateC1.id);
    expect(thrown(() => f.tenancy.authenticate(f.keys.privateC1.key))).toMatchObject({ status: 401, code: 2000 });
    expect(f.tenancy.getKey(f.keys.privateC1.id)).toBeUndefined();
    expect(f.tenancy.authenticate(f.keys.adminC1.key).keyId).toBe(f.keys.adminC1.id);
  });

  it('a key that authenticated just before it was revoked (its hash remembered) fails at once too', async () => {
    const raw = f.keys.privateC1.key;
    expect(f.tenancy.authenticate(raw).keyId).toBe(f.keys.privateC1.id);
    expect(f.tenancy.authenticate(raw.toUpperCase()).keyId).toBe(f.keys.privateC1.id);
    expect(f.tenancy.authenticate(f.keys.adminC1.key).keyId).toBe(f.keys.adminC1.id);
    await f.tenancy.revokeKey(f.keys.privateC1.id);
    expect(thrown(() => f.tenancy.authenticate(raw))).toMatchObject({ status: 401, code: 2000 });
    expect(thrown(() => f.tenancy.authenticate(raw.toUpperCase()))).toMatchObject({ status: 401, code: 2000 });
    expect(f.tenancy.authenticate(f.keys.adminC1.key).keyId).toBe(f.keys.adminC1.id);
  });

  it('revoking an unknown key is 404 3000', async () => {
    await expect(f.tenancy.revokeKey(randomUUID())).rejects.toMatchObject({ status: 404, code: 3000 });
  });
});

describe('keys (D5, D8)', () => {
  let f: TenancyFixture;
  beforeEach(async () => {
    f = await buildTenancyFixture(new MemoryStore());
  });

  it('creating a key answers every field with the key once, defaulting to workspace access', async () => {
    const created = await f.tenancy.createKey({ workspaceId: f.ws.G.id, type: 'public', name: 'site', now: f.now, ...ids });
    expect(Object.keys(created)).toEqual(['id', 'key', 'type', 'name', 'workspace_id', 'access', 'created_at']);
    expect(created).toMatchObject({ type: 'public', name: 'site', workspace_id: f.ws.G.id, access: 'workspace', created_at: '2026-11-20T12:00:00.000Z' });
    expect(f.keys.publicC1.name).toBeNull();
    expect(f.tenancy.getKey(created.id)).not.toHaveProperty('key');
  });

  it('a key for an unknown workspace is 404 3000; a bad type or access is 400 1002', async () => {
    await expect(f.tenancy.createKey({ workspaceId: randomUUID(), type: 'public', now: f.now, ...ids })).rejects.toMatchObject({
      status: 404,
      code: 3000,
    });
    const badType = f.tenancy.createKey({ workspaceId: f.ws.C1.id, type: 'secret' as 'public', now: f.now, ...ids });
    await expect(badType).rejects.toMatchObject({ status: 400, code: 1002 });
    const badAccess = f.tenancy.createKey({ workspaceId: f.ws.C1.id, type: 'private', access: 'all' as 'workspace', now: f.now, ...ids });
    await expect(badAccess).rejects.toMatchObject({ status: 400, code: 1002 });
  });

  it('listKeys shows the keys of the workspaces the key administers, never a key value', async () => {
    const listedByAdmin = f.tenancy.listKeys(f.as(f.keys.adminC1.key));
    const gKey = await f.tenancy.createKey({ workspaceId: f.ws.G.id, type: 'private', now: f.now, ...ids });
    const afterG = f.tenancy.listKeys(f.as(f.keys.adminC1.key)).map((k) => k.id);
    expect(listedByAdmin.map((k) => k.id).sort()).toEqual(
      [f.keys.publicC1.id, f.keys.privateC1.id, f.keys.adminC1.id].sort(),
    );
    expect(afterG).toContain(gKey.id);
    expect(afterG).not.toContain(f.keys.adminC2.id);
    for (const info of listedByAdmin) expect(info).not.toHaveProperty('key');
    expect(f.tenancy.listKeys(f.as(f.keys.privateC1.key)).map((k) => k.id)).not.toContain(gKey.id);
    expect(f.tenancy.listKeys(f.as(f.orgA.private_key)).map((k) => k.id)).toContain(f.keys.adminC2.id);
  });
});

describe('workspaces (D9)', () => {
  let f: TenancyFixture;
  beforeEach(async () => {
    f = await buildTenancyFixture(new MemoryStore());
  });

  it('a workspace inherits the organization of its parent', () => {
    expect(f.ws.G).toMatchObject({ name: 'G', parent_id: f.ws.C1.id, organization_id: f.orgA.organization_id });
    expect(Object.keys(f.ws.G)).toEqual(['id', 'name', 'parent_id', 'organization_id', 'created_at']);
  });

  it('an unknown parent is 404 3000; a name outside 1..256 characters is 400 1002 (D14)', async () => {
    await expect(f.tenancy.createWorkspace({ name: 'x', parentId: randomUUID(), now: f.now, newId: ids.newId })).rejects.toMatchObject({
      status: 404,
      code: 3000,
    });
    for (const name of ['', 'x'.repeat(257)]) {
      await expect(f.tenancy.createWorkspace({ name, parentId: f.ws.R.id, now: f.now, newId: ids.newId })).rejects.toMatchObject({
        status: 400,
        code: 1002,
      });
    }
    const longest = await f.tenancy.createWorkspace({ name: 'é'.repeat(256), parentId: f.ws.R.id, now: f.now, newId: ids.newId });
    expect(longest.name).toHaveLength(256);
  });

  it('ancestors, descendants and the same-or-descendant relation follow the tree', () => {
    const { R, C1, C2, G, B } = f.ws;
    expect(f.tenancy.ancestorsOf(G.id)).toEqual([C1.id, R.id]);
    expect(f.tenancy.ancestorsOf(R.id)).toEqual([]);
    expect(f.tenancy.descendantsOf(R.id).sort()).toEqual([C1.id, C2.id, G.id].sort());
    expect(f.tenancy.descendantsOf(G.id)).toEqual([]);
    expect(f.tenancy.isSameOrDescendant(G.id, R.id)).toBe(true);
    expect(f.tenancy.isSameOrDescendant(G.id, G.id)).toBe(true);
    expect(f.tenancy.isSameOrDescendant(R.id, G.id)).toBe(false);
    expect(f.tenancy.isSameOrDescendant(G.id, C2.id)).toBe(false);
    expect(f.tenancy.isSameOrDescendant(B.id, R.id)).toBe(false);
  });

  it('listWorkspaces is the key\u2019s workspace, plus those below it with descendants access', () => {
    const { R, C1, C2, G } = f.ws;
    expect(f.tenancy.listWorkspaces(f.as(f.keys.adminC1.key)).map((w) => w.id).sort()).toEqual([C1.id, G.id].sort());
    expect(f.tenancy.listWorkspaces(f.as(f.keys.privateC1.key)).map((w) => w.id)).toEqual([C1.id]);
    expect(f.tenancy.listWorkspaces(f.as(f.orgA.private_key)).map((w) => w.id).sort()).toEqual([R.id, C1.id, C2.id, G.id].sort());
    expect(f.tenancy.listWorkspaces(f.as(f.orgB.private_key)).map((w) => w.id)).toEqual([f.ws.B.id]);
  });
});
