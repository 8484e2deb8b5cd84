import { beforeEach, describe, expect, it } from 'vitest';
import { MemoryStore } from '../../store/memory.js';
import { requireIncludeChildren, requirePrivate } from './authorize.js';
import { buildTenancyFixture, thrown, type TenancyFixture } from '../../../test/support/tenancy.js';

let f: TenancyFixture;
beforeEach(async () => {
  f = await buildTenancyFixture(new MemoryStore());
});

describe('key type and transport (D6, D7)', () => {
  it('a public key where a private one is needed is 403 2001', () => {
    expect(thrown(() => requirePrivate(f.as(f.keys.publicC1.key), true))).toMatchObject({ status: 403, code: 2001 });
  });

  it('a private key over an insecure transport is 403 2001 saying HTTPS is required', () => {
    const error = thrown(() => requirePrivate(f.as(f.keys.privateC1.key), false));
    expect(error).toMatchObject({ status: 403, code: 2001 });
    expect((error as Error).message).toMatch(/HTTPS/);
  });

  it('a private key over a secure transport passes', () => {
    expect(thrown(() => requirePrivate(f.as(f.keys.privateC1.key), true))).toBeUndefined();
  });
});

describe('include-child-workspaces (D8)', () => {
  it('needs descendants access: 403 2001 otherwise', () => {
    expect(thrown(() => requireIncludeChildren(f.as(f.keys.privateC1.key)))).toMatchObject({ status: 403, code: 2001 });
    expect(thrown(() => requireIncludeChildren(f.as(f.keys.publicC1.key)))).toMatchObject({ status: 403, code: 2001 });
    expect(thrown(() => requireIncludeChildren(f.as(f.keys.adminC1.key)))).toBeUndefined();
  });
});

describe('what a key sees and writes (D8, D9)', () => {
  // Keys of C1; the tree is R -> C1 -> G, R -> C2, and organization B apart.
  const cases = [
    // workspace, seen by workspace access, written by it, seen by descendants access, written by it
    ['C1 (own)', 'C1', true, true, true, true],
    ['R (ancestor)', 'R', true, false, true, false],
    ['G (descendant)', 'G', false, false, true, true],
    ['C2 (sibling)', 'C2', false, false, false, false],
    ['B (other organization)', 'B', false, false, false, false],
  ] as const;

  for (const [label, ws, seenW, writtenW, seenD, writtenD] of cases) {
    it(`${label}: visible ${seenW}/${seenD}, writable ${writtenW}/${writtenD} (workspace/descendants access)`, () => {
      const id = f.ws[ws].id;
      const workspaceKey = f.as(f.keys.privateC1.key);
      const descendantsKey = f.as(f.keys.adminC1.key);
      expect(f.tenancy.canSeeWorkspace(workspaceKey, id)).toBe(seenW);
      expect(f.tenancy.canWriteWorkspace(workspaceKey, id)).toBe(writtenW);
      expect(f.tenancy.canSeeWorkspace(descendantsKey, id)).toBe(seenD);
      expect(f.tenancy.canWriteWorkspace(descendantsKey, id)).toBe(writtenD);
    });
  }

  it('a hidden workspace is 404 3000, never 403; a visible read-only one is 403 2001', () => {
    const workspaceKey = f.as(f.keys.privateC1.key);
    const descendantsKey = f.as(f.keys.adminC1.key);
    expect(thrown(() => f.tenancy.requireWritableWorkspace(workspaceKey, f.ws.G.id))).toMatchObject({ status: 404, code: 3000 });
    expect(thrown(() => f.tenancy.requireWritableWorkspace(descendantsKey, f.ws.C2.id))).toMatchObject({ status: 404, code: 3000 });
    expect(thrown(() => f.tenancy.requireVisibleWorkspace(descendantsKey, f.ws.B.id))).toMatchObject({ status: 404, code: 3000 });
    expect(thrown(() => f.tenancy.requireWritableWorkspace(descendantsKey, f.ws.R.id))).toMatchObject({ status: 403, code: 2001 });
    expect(f.tenancy.requireWritableWorkspace(descendantsKey, f.ws.G.id).id).toBe(f.ws.G.id);
    expect(f.tenancy.requireVisibleWorkspace(workspaceKey, f.ws.R.id).id).toBe(f.ws.R.id);
  });

  it('the root key of another organization sees nothing of this one', () => {
    const other = f.as(f.orgB.private_key);
    for (const ws of [f.ws.R, f.ws.C1, f.ws.C2, f.ws.G]) {
      expect(f.tenancy.canSeeWorkspace(other, ws.id)).toBe(false);
      expect(f.tenancy.canWriteWorkspace(other, ws.id)).toBe(false);
    }
  });
});

describe('admin API reach (operations.md)', () => {
  it('a private descendants key administers its workspace and those below it', () => {
    const admin = f.as(f.keys.adminC1.key);
    expect(thrown(() => f.tenancy.requireAdmin(admin))).toBeUndefined();
    expect(f.tenancy.requireAdminOver(admin, f.ws.C1.id).id).toBe(f.ws.C1.id);
    expect(f.tenancy.requireAdminOver(admin, f.ws.G.id).id).toBe(f.ws.G.id);
  });

  it('a workspace-access or public key is 403 2001', () => {
    expect(thrown(() => f.tenancy.requireAdmin(f.as(f.keys.privateC1.key)))).toMatchObject({ status: 403, code: 2001 });
    expect(thrown(() => f.tenancy.requireAdmin(f.as(f.keys.publicC1.key)))).toMatchObject({ status: 403, code: 2001 });
    expect(thrown(() => f.tenancy.requireAdminOver(f.as(f.keys.privateC1.key), f.ws.C1.id))).toMatchObject({ status: 403, code: 2001 });
  });

  it('an ancestor workspace is 403 2001; a sibling or another organization\u2019s is 404 3000', () => {
    const admin = f.as(f.keys.adminC1.key);
    expect(thrown(() => f.tenancy.requireAdminOver(admin, f.ws.R.id))).toMatchObject({ status: 403, code: 2001 });
    expect(thrown(() => f.tenancy.requireAdminOver(admin, f.ws.C2.id))).toMatchObject({ status: 404, code: 3000 });
    expect(thrown(() => f.tenancy.requireAdminOver(admin, f.ws.B.id))).toMatchObject({ status: 404, code: 3000 });
  });
});
