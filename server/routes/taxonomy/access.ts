// Who may reach which import on the taxonomy routes (D6, D7, D9), the import's wire form, and the null-tolerant
// body normalisation those routes share.

import type { RequestContext } from '../../http/index.js';
import type { Principal } from '../../domain/tenancy/index.js';
import { authenticatePrivate as authenticatePrivateKey } from '../auth.js';
import type { ImportRecord } from '../../domain/imports/index.js';
import { notFound } from '../../errors.js';
import type { Services } from '../../services.js';

export type TaxonomyDeps = Pick<Services, 'tenancy' | 'imports' | 'identity' | 'pipeline'>;

/** The import as sent to clients (D25): the record without its internal `organization_id`. */
export interface ImportWire {
  readonly id: string;
  readonly name: string;
  readonly code: string;
  readonly relation: ImportRecord['relation'];
  readonly kind: ImportRecord['kind'];
  readonly identifiers: readonly string[];
  readonly schema?: ImportRecord['schema'];
  readonly workspace_id: string;
  readonly created_at: string;
  /** D45, as Permutive clients expect. */
  readonly description: string | null;
  readonly updated_at: string;
  readonly source: { readonly id: string; readonly type: 'api'; readonly state: { readonly status: 'ready' } };
}

export function toImportWire(record: ImportRecord): ImportWire {
  return {
    id: record.id,
    name: record.name,
    code: record.code,
    relation: record.relation,
    kind: record.kind,
    identifiers: record.identifiers,
    ...(record.schema === undefined ? {} : { schema: record.schema }),
    workspace_id: record.workspace_id,
    created_at: record.created_at,
    description: record.description ?? null,
    // An import's own fields never change after creation (its segments and members are resources of their own).
    updated_at: record.created_at,
    // D45: imports are loaded through this API, so their source is the API, always ready to take segments.
    source: { id: record.id, type: 'api', state: { status: 'ready' } },
  };
}

/** D6/D7: every taxonomy route needs a private key over a secure transport. */
export function authenticatePrivate(deps: TaxonomyDeps, ctx: RequestContext): Principal {
  return authenticatePrivateKey(deps.tenancy, ctx);
}

/** D9: the import if its workspace is visible to the key; unknown, another organization's or hidden: 404 3000. */
export async function readableImport(deps: TaxonomyDeps, principal: Principal, importId: string): Promise<ImportRecord> {
  const record = await deps.imports.getImport(principal.organizationId, importId);
  if (!deps.tenancy.canSeeWorkspace(principal, record.workspace_id)) throw notFound('import');
  return record;
}

/** D9: as readableImport, and the workspace must be writable for the key (an ancestor's import: 403 2001). */
export async function writableImport(deps: TaxonomyDeps, principal: Principal, importId: string): Promise<ImportRecord> {
  const record = await readableImport(deps, principal, importId);
  deps.tenancy.requireWritableWorkspace(principal, record.workspace_id);
  return record;
}

/**
 * Client habit: `null` for an absent optional field. Top-level nulls are dropped before the domain validates, except
 * for the fields listed in `meaningful` (a segment's `description` and `cpm`: null there clears the value).
 */
export function dropNulls(value: unknown, meaningful: readonly string[] = []): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const kept: Record<string, unknown> = {};
  for (const [field, item] of Object.entries(value)) {
    if (item !== null || meaningful.includes(field)) kept[field] = item;
  }
  return kept;
}

/** A path parameter (the router always sets the pattern's parameters). */
export function param(ctx: RequestContext, name: string): string {
  return ctx.params[name] ?? '';
}
