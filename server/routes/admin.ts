// The admin API of operations.md: workspaces and keys, for a private key with `descendants` access over the target
// workspace. Errors use the cohort envelope (area 'admin', D10).

import type { HttpServer, RequestContext } from '../http/index.js';
import type { Principal, Tenancy } from '../domain/tenancy/index.js';
import type { Clock } from '../services.js';
import { authenticatePrivate } from './auth.js';
import { badBody, notFound } from '../errors.js';
import { optionalEnum, optionalString, requireBodyObject, requireString } from './body.js';

export interface AdminDeps {
  readonly tenancy: Tenancy;
  /** The service's clock and ids (a cluster node applies a replicated request with the request's own). */
  readonly clock: Clock;
  readonly newId: () => string;
}

export function registerAdminRoutes(http: HttpServer, { tenancy, clock, newId }: AdminDeps): void {
  const admin = (ctx: RequestContext): Principal => {
    const principal = authenticatePrivate(tenancy, ctx);
    tenancy.requireAdmin(principal);
    return principal;
  };

  http.route('POST', '/admin/v1/workspaces', 'admin', async (ctx) => {
    const principal = admin(ctx);
    const body = requireBodyObject(ctx.body);
    const name = requireString(body, 'name');
    const parentId = requireString(body, 'parent_id');
    tenancy.requireAdminOver(principal, parentId);
    const workspace = await tenancy.createWorkspace({ name, parentId, now: clock.now(), newId });
    return { status: 201, body: workspace };
  }, { body: 'required' });

  http.route('GET', '/admin/v1/workspaces', 'admin', (ctx) => ({ status: 200, body: tenancy.listWorkspaces(admin(ctx)) }));

  http.route('POST', '/admin/v1/keys', 'admin', async (ctx) => {
    const principal = admin(ctx);
    const body = requireBodyObject(ctx.body);
    const workspaceId = requireString(body, 'workspace_id');
    const type = optionalEnum(body, 'type', ['public', 'private'] as const);
    if (type === undefined) throw badBody('type: missing; expected "public" or "private"');
    const access = optionalEnum(body, 'access', ['workspace', 'descendants'] as const);
    const name = optionalString(body, 'name');
    tenancy.requireAdminOver(principal, workspaceId);
    const created = await tenancy.createKey({
      workspaceId,
      type,
      name,
      access,
      now: clock.now(),
      newId,
      newKey: newId,
    });
    return { status: 201, body: created };
  }, { body: 'required' });

  http.route('GET', '/admin/v1/keys', 'admin', (ctx) => ({ status: 200, body: tenancy.listKeys(admin(ctx)) }));

  http.route('DELETE', '/admin/v1/keys/:keyId', 'admin', async (ctx) => {
    const principal = admin(ctx);
    const key = tenancy.getKey(ctx.params['keyId'] ?? '');
    if (key === undefined) throw notFound('key');
    tenancy.requireAdminOver(principal, key.workspace_id);
    await tenancy.revokeKey(key.id);
    return { status: 200, body: key };
  });
}
