// Loading imported data (D27): members of a segment and rows of a connections import. References are resolved to
// users through identity, then the affected users are re-evaluated before the answer.

import type { HttpServer } from '../../http/index.js';
import { isUuid } from '../../domain/identity/index.js';
import type { ResolveUser } from '../../domain/imports/index.js';
import { badBody } from '../../errors.js';
import { requireBodyObject } from '../body.js';
import { authenticatePrivate, dropNulls, param, writableImport, type TaxonomyDeps } from './access.js';

export function registerLoadingRoutes(http: HttpServer, deps: TaxonomyDeps): void {
  http.route('POST', '/audience-api/v1/imports/:importId/segments/code/:segmentCode/members', 'taxonomy', async (ctx) => {
    const principal = authenticatePrivate(deps, ctx);
    const org = principal.organizationId;
    const record = await writableImport(deps, principal, param(ctx, 'importId'));
    const body = dropNulls(requireBodyObject(ctx.body));
    const resolve = resolverFor(deps, org, removeOnlyAliases(body));
    const result = await deps.imports.loadMembers(org, record.id, param(ctx, 'segmentCode'), body, resolve);
    await reevaluate(deps, org, result.affectedUsers);
    return { status: 200, body: { added: result.added, removed: result.removed } };
  }, { body: 'required' });

  http.route('POST', '/audience-api/v1/imports/:importId/rows', 'taxonomy', async (ctx) => {
    const principal = authenticatePrivate(deps, ctx);
    const org = principal.organizationId;
    const record = await writableImport(deps, principal, param(ctx, 'importId'));
    const rows = Array.isArray(ctx.body) ? ctx.body.map((row: unknown) => dropNulls(row)) : ctx.body;
    const result = await deps.imports.loadRows(org, record.id, rows, resolverFor(deps, org, new Set()));
    await reevaluate(deps, org, result.affectedUsers);
    return { status: 200, body: { loaded: result.loaded } };
  }, { body: 'required' });
}

/** D27: loading members or rows re-evaluates the users whose imported data changed. */
async function reevaluate(deps: TaxonomyDeps, org: string, users: readonly string[]): Promise<void> {
  if (users.length > 0) await deps.pipeline.reevaluate(org, users);
}

/**
 * `{user_id}` as given (a UUID); a known alias: its user; an unknown alias: a new user bound to it, so that a later
 * track with that alias finds the data. An alias that is only removed is looked up, never bound: an unknown one
 * gets its stable stateless id (D22), which holds no membership, so nothing is written for it. Every reference is
 * checked before anything is bound, and the bindings are committed in the same batch as the load (D41: a refused
 * or failed request binds nothing).
 */
export function resolverFor(deps: Pick<TaxonomyDeps, 'identity'>, org: string, lookupOnly: ReadonlySet<string>): ResolveUser {
  return async (refs, write) => {
    refs.forEach((ref) => {
      if ('user_id' in ref && !isUuid(ref.user_id)) throw badBody('user_id: expected a UUID');
    });
    const aliases = refs.flatMap((ref) => ('alias' in ref ? [ref.alias] : []));
    const isLookupOnly = (index: number): boolean => {
      const alias = aliases[index] as { tag: string; id: string };
      return lookupOnly.has(aliasKey(alias.tag, alias.id));
    };
    return deps.identity.resolveForLoad(org, aliases, isLookupOnly, (aliasUsers, bindings) => {
      let next = 0;
      return write(refs.map((ref) => ('user_id' in ref ? ref.user_id : (aliasUsers[next++] as string))), bindings);
    });
  };
}

/** Aliases named in `remove` and not in `add` of a members body (the domain validates the body itself). */
function removeOnlyAliases(body: unknown): Set<string> {
  const aliasesIn = (list: unknown): string[] => {
    if (!Array.isArray(list)) return [];
    return list.flatMap((item: unknown) => {
      const alias = typeof item === 'object' && item !== null ? (item as { alias?: unknown }).alias : undefined;
      if (typeof alias !== 'object' || alias === null) return [];
      const { tag, id } = alias as { tag?: unknown; id?: unknown };
      return typeof tag === 'string' && typeof id === 'string' ? [aliasKey(tag, id)] : [];
    });
  };
  const fields = body as { add?: unknown; remove?: unknown };
  const added = new Set(aliasesIn(fields.add));
  return new Set(aliasesIn(fields.remove).filter((key) => !added.has(key)));
}

function aliasKey(tag: string, id: string): string {
  return JSON.stringify([tag, id]);
}
