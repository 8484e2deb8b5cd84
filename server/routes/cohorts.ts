// The Cohorts API (spec "Cohorts", D8, D9, D14–D19): list, create, read, update and delete cohorts under
// /cohorts-api/v2/cohorts, for a private key over a secure transport (D6, D7). Errors use the cohort envelope (D10).
//
// Choices where the spec and the decisions are silent:
// - Order of checks: authentication (401) → private key and transport (403) → query parameter (400 1000) →
//   the cohort's visibility and write access (404 3000, 403 2001) → the body's structure (400 1002/1003) →
//   the target workspace of a create (404 3000, 403 2001) → the query's references (400 1002) → 409 on delete.
//   POST and PATCH read their body in 'optional' mode so that a missing body (400 1003) is reported after the
//   key checks; a body that is not JSON is still a 400 1002 from the HTTP layer before them.
// - `include-child-workspaces` accepts `true` / `false` in any letter case; any other value (empty included) is
//   400 1000. Only its first occurrence counts.
// - `null` counts as absent for every optional field (PermutiveAPI-style clients send nulls), except `description`
//   in PATCH, where null deletes it (D16). In a create, null `name` / `query` count as missing.
// - PATCH ignores `segment_type` and `workspace_id` (a cohort's kind and owner never change) and every other
//   unknown field (D1: clients echo `id`, `code`, `created_at`, ...). A PATCH without any known field still bumps
//   `last_updated_at` and answers the cohort.
// - `live_audience_size` is the live count of a real-time cohort (D19; 0 when `Disabled`). An offline cohort (D20)
//   carries its last computed size once a computation has ended, and no `live_audience_size` before that.
// - A `cohortId` that is not a UUID is 404 3000 (D9); UUIDs match case-insensitively (ids are lower-case).
// - D41: a query's transition clauses and `provider`s may name only cohorts and imports the cohort's workspace can
//   see (own and ancestors'); anything else is the 400 1002 of an unknown code. A 409 on delete names only the
//   referencing cohorts the key can see, and counts the others.
// - D19 backfill: after a create, a query change or a state change the pipeline and the backfill are told; the
//   sweep evaluates the cohort over every user's history (server/backfill/README.md). GET one, and the create and
//   PATCH answers, add `backfill: {state: 'running', users_done, users_total}` while a sweep (or an offline
//   computation) for the cohort runs or is about to and there are users to visit: the answer is sent only once the
//   backfill shows the sweep, so a new cohort never looks finished with size 0 before its sweep has counted. Until
//   the sweep has counted the users, `users_done` is 0 and `users_total` the last count (at least 1). It is absent
//   once done and when the organization has no users (list answers never carry it).
// - POST {id}/recompute (D20): private key, the cohort visible to the key. An offline cohort starts a computation
//   over history unless one runs and answers 202 with the full cohort plus `backfill` (state 'running'); a
//   real-time cohort answers its sweep: 202 while running, else 200 with `backfill.state` 'done'. A `Disabled`
//   cohort has no members and is not computed: 409 code 4000.

import type { HttpServer, RequestContext } from '../http/index.js';
import type { Services } from '../services.js';
import { isUuid, type Principal } from '../domain/tenancy/index.js';
import { authenticatePrivate } from './auth.js';
import {
  assertProvidersUsable,
  toCohortSummary,
  toCohortWire,
  type Cohort,
  type CohortPatch,
  type CohortState,
} from '../domain/cohorts/index.js';
import { formatProblem, validateQuery } from '../../engine/index.js';
import { ServiceError, badBody, badParameter, notFound, stillReferenced } from '../errors.js';
import { optionalEnum, optionalString, requireBodyObject, requireName, type BodyObject } from './body.js';

export type CohortsDeps = Pick<Services, 'tenancy' | 'cohorts' | 'imports' | 'pipeline' | 'backfill' | 'reactions' | 'clock' | 'newId'>;

const COLLECTION = '/cohorts-api/v2/cohorts';
const ONE = `${COLLECTION}/:cohortId`;
const INCLUDE_CHILDREN = 'include-child-workspaces';

/** A query validated for the registry: the raw JSON, its AST and the cohort codes it names (D18). */
interface ValidatedQuery {
  readonly query: unknown;
  readonly ast: unknown;
  readonly references: readonly number[];
}

/** D18: the query's first problem as a 400 1002 whose cause is its JSON path and message. */
function readQuery(value: unknown): ValidatedQuery {
  const result = validateQuery(value, 'query');
  if (!result.ok) {
    const first = result.problems[0];
    throw badBody(first === undefined ? 'query: invalid query' : formatProblem(first));
  }
  return { query: value, ast: result.query, references: result.references };
}

/** `tags`: an array of strings; null or absent is undefined. */
function optionalTags(body: BodyObject): string[] | undefined {
  const value = body['tags'];
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) throw badBody('tags: expected an array of strings');
  value.forEach((tag, index) => {
    if (typeof tag !== 'string') throw badBody(`tags[${index}]: expected a string`);
  });
  return value as string[];
}

/** D8: `include-child-workspaces` is a boolean; anything else is 400 1000. */
function readIncludeChildren(query: URLSearchParams): boolean {
  const value = query.get(INCLUDE_CHILDREN);
  if (value === null) return false;
  const lower = value.toLowerCase();
  if (lower === 'true') return true;
  if (lower === 'false') return false;
  throw badParameter(`The query parameter ${INCLUDE_CHILDREN} must be true or false.`, `${INCLUDE_CHILDREN}: expected true or false`);
}

/** The path's cohort id, lower-cased; a non-UUID names nothing (404 3000, D9). */
export function cohortIdOf(ctx: RequestContext): string {
  const raw = ctx.params['cohortId'] ?? '';
  if (!isUuid(raw)) throw notFound('cohort');
  return raw.toLowerCase();
}

/** D19: live size of an enabled real-time cohort; a disabled one has no members; offline ones are not live. */
export function liveSize(cohort: Cohort, { pipeline, backfill }: Pick<Services, 'pipeline' | 'backfill'>): number | undefined {
  if (cohort.segment_type !== 'real_time') return cohort.state === 'Enabled' ? backfill.offlineResultOf(cohort)?.size : undefined;
  if (cohort.state !== 'Enabled') return 0;
  return pipeline.audienceSize(cohort.organization_id, cohort.code);
}

export function registerCohortsRoutes(http: HttpServer, services: CohortsDeps): void {
  const { tenancy, cohorts, imports, pipeline, backfill, reactions, clock, newId } = services;

  /**
   * D41: every `provider` must be an import the cohort's workspace can see (its own or an ancestor's); an unknown
   * import and a hidden one are the same 400 1002. Imports never move or go away, so the check stays true.
   */
  const assertProviders = async (workspaceId: string, query: ValidatedQuery): Promise<void> => {
    const organizationId = tenancy.getWorkspace(workspaceId)?.organization_id;
    await assertProvidersUsable(query.ast, query.query, async (provider) => {
      if (organizationId === undefined) return false;
      const imported = await imports.getImportByCode(organizationId, provider).catch((error: unknown) => {
        if (error instanceof ServiceError && error.code === 3000) return undefined;
        throw error;
      });
      return imported !== undefined && tenancy.isSameOrDescendant(workspaceId, imported.workspace_id);
    });
  };

  /**
   * D19: the pipeline first (it evaluates under the new plan), then the backfill (it sweeps for the new plan). Resolves
   * once the backfill shows the sweep, so an answer built after it carries `backfill` from the start.
   */
  const planChanged = async (org: string): Promise<void> => {
    pipeline.planChanged(org);
    await backfill.planChanged(org);
  };

  /** D5–D7: every cohort operation needs a private key over a secure transport. */
  const authorise = (ctx: RequestContext): Principal => authenticatePrivate(tenancy, ctx);


  const liveSizeOf = (cohort: Cohort): number | undefined => liveSize(cohort, services);

  const full = (cohort: Cohort) => toCohortWire(cohort, liveSizeOf(cohort));

  /** The full cohort plus `backfill` while a sweep (or offline computation) is making it exact (D19). */
  const withProgress = (cohort: Cohort) => {
    const progress = backfill.progressOf(cohort);
    return progress === undefined ? full(cohort) : { ...full(cohort), backfill: progress };
  };

  // D8, D9: own workspace + ancestors (+ descendants with the flag and `descendants` access).
  http.route('GET', COLLECTION, 'cohorts', (ctx) => {
    const principal = authorise(ctx);
    const includeChildren = readIncludeChildren(ctx.query);
    const listed = cohorts.listVisible(principal, includeChildren);
    // Like one cohort's answer, a summary carries `backfill` while its size is still being made exact (D19).
    const summaryOf = (cohort: Cohort) => {
      const summary = toCohortSummary(cohort, liveSizeOf(cohort));
      const progress = backfill.progressOf(cohort);
      return progress === undefined ? summary : { ...summary, backfill: progress };
    };
    return { status: 200, body: listed.map(summaryOf) };
  });

  // D14: create → 201 with the full cohort.
  http.route(
    'POST',
    COLLECTION,
    'cohorts',
    async (ctx) => {
      const principal = authorise(ctx);
      const body = requireBodyObject(ctx.body);
      const name = requireName(body);
      if (body['query'] === undefined || body['query'] === null) throw badBody('query: missing');
      const query = readQuery(body['query']);
      const description = optionalString(body, 'description');
      const tags = optionalTags(body);
      const segmentType = optionalEnum(body, 'segment_type', ['real_time', 'offline'] as const);
      const workspaceId = optionalString(body, 'workspace_id') ?? principal.workspaceId;
      tenancy.requireWritableWorkspace(principal, workspaceId);
      await assertProviders(workspaceId, query);
      const cohort = await cohorts.create({
        workspaceId,
        name,
        description,
        tags,
        segment_type: segmentType,
        query: query.query,
        ast: query.ast,
        references: query.references,
        now: clock.now(),
        newId,
      });
      await planChanged(cohort.organization_id);
      return { status: 201, body: withProgress(cohort) };
    },
    { body: 'optional' },
  );

  // D15: one cohort with its query and live size; hidden, unknown or non-UUID ids are 404 3000 (D9).
  http.route('GET', ONE, 'cohorts', (ctx) => {
    const principal = authorise(ctx);
    const cohort = cohorts.getVisible(principal, cohortIdOf(ctx));
    return { status: 200, body: withProgress(cohort) };
  });

  // D20: compute an offline cohort over history now (a real-time one answers its sweep's progress).
  http.route('POST', `${ONE}/recompute`, 'cohorts', (ctx) => {
    const principal = authorise(ctx);
    const cohort = cohorts.getVisible(principal, cohortIdOf(ctx));
    if (cohort.state !== 'Enabled') {
      throw new ServiceError(4000, 'A disabled cohort has no members and is not computed.', `cohort ${cohort.code} is Disabled`);
    }
    const progress = backfill.recompute(cohort);
    return { status: progress.state === 'running' ? 202 : 200, body: { ...full(cohort), backfill: progress } };
  }, { body: 'none' });

  // D16: partial update; absent (or null) fields stay, `description: null` deletes it.
  http.route(
    'PATCH',
    ONE,
    'cohorts',
    async (ctx) => {
      const principal = authorise(ctx);
      const current = cohorts.getWritable(principal, cohortIdOf(ctx));
      const body = requireBodyObject(ctx.body);
      const patch: { -readonly [K in keyof CohortPatch]: CohortPatch[K] } = {};
      const name = optionalString(body, 'name');
      if (name !== undefined) patch.name = name;
      if (body['description'] === null) patch.description = null;
      else {
        const description = optionalString(body, 'description');
        if (description !== undefined) patch.description = description;
      }
      if (body['query'] !== undefined && body['query'] !== null) {
        const query = readQuery(body['query']);
        await assertProviders(current.workspace_id, query);
        patch.query = query.query;
        patch.ast = query.ast;
        patch.references = query.references;
      }
      const tags = optionalTags(body);
      if (tags !== undefined) patch.tags = tags;
      const state: CohortState | undefined = optionalEnum(body, 'state', ['Enabled', 'Disabled'] as const);
      if (state !== undefined) patch.state = state;
      const updated = await cohorts.update(current.id, patch, clock.now());
      if (patch.query !== undefined || (state !== undefined && state !== current.state)) {
        await planChanged(updated.organization_id);
      }
      return { status: 200, body: withProgress(updated) };
    },
    { body: 'optional' },
  );

  // D16: 200 with an empty body; D18: 409 4000 while another cohort's query names it.
  http.route('DELETE', ONE, 'cohorts', async (ctx) => {
    const principal = authorise(ctx);
    const cohort = cohorts.getWritable(principal, cohortIdOf(ctx));
    // D37: reactions keep their cohort; a cohort they name is deleted after them (like a referenced cohort, D18).
    const naming = reactions.onCohort(cohort.organization_id, cohort.code);
    if (naming.length > 0) throw stillReferenced(`reactions ${naming.map((r) => r.id).join(', ')} use this cohort`);
    await cohorts.delete(cohort.id, principal);
    await planChanged(cohort.organization_id);
    return { status: 200 };
  });
}
