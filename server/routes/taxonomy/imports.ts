// The import routes (D25): create, list and read the imports of the workspaces a private key may see (D9).

import type { HttpServer } from '../../http/index.js';
import { requireBodyObject, optionalString } from '../body.js';
import { authenticatePrivate, dropNulls, param, readableImport, toImportWire, type TaxonomyDeps } from './access.js';

export function registerImportRoutes(http: HttpServer, deps: TaxonomyDeps): void {
  // D25 create: 200 like every other taxonomy success (D26), not 201; `workspace_id` defaults to the key's.
  http.route('POST', '/audience-api/v1/imports', 'taxonomy', async (ctx) => {
    const principal = authenticatePrivate(deps, ctx);
    const body = requireBodyObject(dropNulls(ctx.body));
    const workspaceId = optionalString(body, 'workspace_id') ?? principal.workspaceId;
    deps.tenancy.requireWritableWorkspace(principal, workspaceId);
    const created = await deps.imports.createImport(principal.organizationId, workspaceId, body);
    return { status: 200, body: toImportWire(created) };
  }, { body: 'required' });

  // Every import of a workspace the key sees (own, ancestors, descendants with `descendants` access), by code.
  http.route('GET', '/audience-api/v1/imports', 'taxonomy', async (ctx) => {
    const principal = authenticatePrivate(deps, ctx);
    const all = await deps.imports.listImports(principal.organizationId);
    const visible = all.filter((record) => deps.tenancy.canSeeWorkspace(principal, record.workspace_id));
    return { status: 200, body: visible.map(toImportWire) };
  });

  http.route('GET', '/audience-api/v1/imports/:importId', 'taxonomy', async (ctx) => {
    const principal = authenticatePrivate(deps, ctx);
    return { status: 200, body: toImportWire(await readableImport(deps, principal, param(ctx, 'importId'))) };
  });
}
