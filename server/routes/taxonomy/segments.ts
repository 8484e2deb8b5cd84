// The imported-segment routes (D26): create, read, list (paged), update and delete by id or by code, and batches.
// Reads need a visible import, writes a writable one (D9); every success is 200.

import type { HttpServer, RequestContext } from '../../http/index.js';
import type { SegmentRecord } from '../../domain/imports/index.js';
import { badParameter } from '../../errors.js';
import { requireBodyObject } from '../body.js';
import { authenticatePrivate, dropNulls, param, readableImport, writableImport, type TaxonomyDeps } from './access.js';

const BASE = '/audience-api/v1/imports/:importId/segments';
/** A segment's fields where `null` means "clear it" rather than "absent". */
const NULLABLE = ['description', 'cpm'] as const;

/** D26: the create response carries the spec's camelCase `importId`/`updatedAt` and the snake_case names too. */
export function toCreatedSegmentWire(segment: SegmentRecord): SegmentRecord & { importId: string; updatedAt: string } {
  return { ...segment, importId: segment.import_id, updatedAt: segment.updated_at };
}

export function registerSegmentRoutes(http: HttpServer, deps: TaxonomyDeps): void {
  const { imports } = deps;

  /** Authenticates, checks the import's visibility (or writability) and answers the org and import id. */
  const reach = async (ctx: RequestContext, write: boolean): Promise<{ org: string; importId: string }> => {
    const principal = authenticatePrivate(deps, ctx);
    const importId = param(ctx, 'importId');
    const record = write ? await writableImport(deps, principal, importId) : await readableImport(deps, principal, importId);
    return { org: principal.organizationId, importId: record.id };
  };
  const segmentBody = (ctx: RequestContext): unknown => dropNulls(requireBodyObject(ctx.body), NULLABLE);

  http.route('POST', BASE, 'taxonomy', async (ctx) => {
    const { org, importId } = await reach(ctx, true);
    const created = await imports.createSegment(org, importId, segmentBody(ctx));
    return { status: 200, body: toCreatedSegmentWire(created) };
  }, { body: 'required' });

  http.route('GET', BASE, 'taxonomy', async (ctx) => {
    const { org, importId } = await reach(ctx, false);
    const page = await imports.listSegments(org, importId, {
      paginationToken: optionalQuery(ctx, 'pagination_token'),
      pageSize: pageSizeOf(ctx),
    });
    return { status: 200, body: page };
  });

  // D26 batch: `{operations: [...]}` up to 5000; answers `{results}` with the domain's per-item results in order.
  http.route('PATCH', BASE, 'taxonomy', async (ctx) => {
    const { org, importId } = await reach(ctx, true);
    const body = requireBodyObject(ctx.body);
    const operations = Array.isArray(body.operations)
      ? body.operations.map((operation: unknown) => dropNulls(operation, NULLABLE))
      : body.operations;
    return { status: 200, body: { results: await imports.batch(org, importId, operations) } };
  }, { body: 'required' });

  http.route('GET', `${BASE}/:segmentId`, 'taxonomy', async (ctx) => {
    const { org, importId } = await reach(ctx, false);
    return { status: 200, body: await imports.getSegment(org, importId, param(ctx, 'segmentId')) };
  });

  http.route('PATCH', `${BASE}/:segmentId`, 'taxonomy', async (ctx) => {
    const { org, importId } = await reach(ctx, true);
    return { status: 200, body: await imports.updateSegment(org, importId, param(ctx, 'segmentId'), segmentBody(ctx)) };
  }, { body: 'required' });

  http.route('DELETE', `${BASE}/:segmentId`, 'taxonomy', async (ctx) => {
    const { org, importId } = await reach(ctx, true);
    return { status: 200, body: await imports.deleteSegment(org, importId, param(ctx, 'segmentId')) };
  });

  http.route('GET', `${BASE}/code/:segmentCode`, 'taxonomy', async (ctx) => {
    const { org, importId } = await reach(ctx, false);
    return { status: 200, body: await imports.getSegmentByCode(org, importId, param(ctx, 'segmentCode')) };
  });

  http.route('PATCH', `${BASE}/code/:segmentCode`, 'taxonomy', async (ctx) => {
    const { org, importId } = await reach(ctx, true);
    return { status: 200, body: await imports.updateSegmentByCode(org, importId, param(ctx, 'segmentCode'), segmentBody(ctx)) };
  }, { body: 'required' });

  http.route('DELETE', `${BASE}/code/:segmentCode`, 'taxonomy', async (ctx) => {
    const { org, importId } = await reach(ctx, true);
    return { status: 200, body: await imports.deleteSegmentByCode(org, importId, param(ctx, 'segmentCode')) };
  });
}

/** An optional query parameter; an empty value counts as absent. */
function optionalQuery(ctx: RequestContext, name: string): string | undefined {
  const value = ctx.query.get(name);
  return value === null || value === '' ? undefined : value;
}

/** `page_size` (1..1000, default 100): not an integer is 400 1000 (the domain checks the range). */
function pageSizeOf(ctx: RequestContext): number | undefined {
  const raw = optionalQuery(ctx, 'page_size');
  if (raw === undefined) return undefined;
  if (!/^\d{1,7}$/.test(raw)) throw badParameter('The page size is invalid.', 'page_size: expected an integer from 1 to 1000');
  return Number(raw);
}
