// A test fixture of two organizations with a small workspace tree and keys at every access level, shared by the
// tenancy and cohort tests.  Org A: root R -> C1 -> G, R -> C2.  Org B: root B.

import { randomUUID } from 'node:crypto';
import type { Store } from '../../server/store/contract.js';
import { Tenancy } from '../../server/domain/tenancy/tenancy.js';
import type { CreatedKey, InitializedOrganization, Principal, Workspace } from '../../server/domain/tenancy/types.js';

export interface TenancyFixture {
  readonly tenancy: Tenancy;
  readonly orgA: InitializedOrganization;
  readonly orgB: InitializedOrganization;
  readonly ws: { readonly R: Workspace; readonly C1: Workspace; readonly C2: Workspace; readonly G: Workspace; readonly B: Workspace };
  readonly keys: {
    /** public key of C1 */
    readonly publicC1: CreatedKey;
    /** private key of C1, `workspace` access */
    readonly privateC1: CreatedKey;
    /** private key of C1, `descendants` access */
    readonly adminC1: CreatedKey;
    /** private key of C2, `descendants` access */
    readonly adminC2: CreatedKey;
  };
  /** The principal of a raw key. */
  readonly as: (key: string) => Principal;
  readonly now: Date;
}

export const ids = { newId: () => randomUUID(), newKey: () => randomUUID() };

export async function buildTenancyFixture(store: Store): Promise<TenancyFixture> {
  const tenancy = await Tenancy.open(store);
  const now = new Date('2026-11-20T12:00:00.000Z');
  const orgA = await tenancy.initOrganization({ name: 'Org A', now, ...ids });
  const orgB = await tenancy.initOrganization({ name: 'Org B', now, ...ids });
  const C1 = await tenancy.createWorkspace({ name: 'C1', parentId: orgA.workspace_id, now, newId: ids.newId });
  const C2 = await tenancy.createWorkspace({ name: 'C2', parentId: orgA.workspace_id, now, newId: ids.newId });
  const G = await tenancy.createWorkspace({ name: 'G', parentId: C1.id, now, newId: ids.newId });
  const R = tenancy.getWorkspace(orgA.workspace_id) as Workspace;
  const B = tenancy.getWorkspace(orgB.workspace_id) as Workspace;
  const publicC1 = await tenancy.createKey({ workspaceId: C1.id, type: 'public', now, ...ids });
  const privateC1 = await tenancy.createKey({ workspaceId: C1.id, type: 'private', name: 'server', now, ...ids });
  const adminC1 = await tenancy.createKey({ workspaceId: C1.id, type: 'private', access: 'descendants', now, ...ids });
  const adminC2 = await tenancy.createKey({ workspaceId: C2.id, type: 'private', access: 'descendants', now, ...ids });
  return {
    tenancy,
    orgA,
    orgB,
    ws: { R, C1, C2, G, B },
    keys: { publicC1, privateC1, adminC1, adminC2 },
    as: (key) => tenancy.authenticate(key),
    now,
  };
}

/** The error `fn` throws (undefined when it returns), for `expect(thrown(...)).toMatchObject({ status, code })`. */
export function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return undefined;
}
