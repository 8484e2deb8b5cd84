// Reads behind the dashboard (issue 16), in the cohort area (private key, D9 visibility, cohort envelope):
// - `GET /cohorts-api/v2/cohorts/{id}/series`: the cohort's last day by minute (server/domain/cohorts/series.ts).
// - `GET /cohorts-api/v2/cohorts/{id}/explain?user_id=`: whether each clause of its query holds for the user now,
//   from the user's whole history (server/domain/cohorts/explain.ts), beside the live membership.
// - `GET /cohorts-api/v2/users/{userId}/cohorts`: the visible cohorts the user is in now (live memberships).
// An unknown user is 404 3000 on explain and on the user's cohorts (as for its aliases, D28).

import type { HttpServer, RequestContext } from '../http/index.js';
import type { Services } from '../services.js';
import { authenticatePrivate } from './auth.js';
import { badParameter, notFound } from '../errors.js';
import { isUuid } from '../domain/tenancy/index.js';
import { cohortIdOf, liveSize } from './cohorts.js';
import { explainQuery } from '../domain/cohorts/explain.js';
import { hasEvents, replayUserEvents, toEngineEvent } from '../domain/events/index.js';
import type { Query } from '../../engine/index.js';

export type InsightsDeps = Pick<Services, 'tenancy' | 'cohorts' | 'identity' | 'imports' | 'pipeline' | 'backfill' | 'series' | 'store' | 'clock'>;

/** A user's history replayed for one explanation at most this long; a longer one is refused (400 1000). */
const MAX_EXPLAIN_EVENTS = 200_000;

export function registerCohortInsightsRoutes(http: HttpServer, services: InsightsDeps): void {
  const { tenancy, cohorts, identity, imports, pipeline, series, store, clock } = services;

  const knownUser = async (org: string, raw: string | null | undefined, where: string): Promise<string> => {
    if (raw === null || raw === undefined || raw === '') throw badParameter(`The ${where} user_id is required.`, 'user_id: missing');
    if (!isUuid(raw)) throw notFound('user');
    const user = raw.toLowerCase();
    // A user known only by events (tracked with a user_id never created) exists too.
    if (!(await identity.userExists(org, user)) && !(await hasEvents(store, org, user))) throw notFound('user');
    return user;
  };

  http.route('GET', '/cohorts-api/v2/cohorts/:cohortId/series', 'cohorts', (ctx) => {
    const principal = authenticatePrivate(tenancy, ctx);
    const cohort = cohorts.getVisible(principal, cohortIdOf(ctx));
    const size = liveSize(cohort, services) ?? 0;
    const now = clock.now().getTime();
    return { status: 200, body: { id: cohort.id, code: cohort.code, size, minutes: series.read(cohort.organization_id, cohort.code, now, size) } };
  });

  http.route('GET', '/cohorts-api/v2/cohorts/:cohortId/explain', 'cohorts', async (ctx: RequestContext) => {
    const principal = authenticatePrivate(tenancy, ctx);
    const cohort = cohorts.getVisible(principal, cohortIdOf(ctx));
    const org = cohort.organization_id;
    const user = await knownUser(org, ctx.query.get('user_id'), 'query parameter');
    const events = [];
    for await (const stored of replayUserEvents(store, org, user)) {
      if (events.length >= MAX_EXPLAIN_EVENTS) throw badParameter(`The user has more than ${MAX_EXPLAIN_EVENTS} events; explain replays at most that many.`, 'user_id: history too long');
      events.push(toEngineEvent(stored));
    }
    const inactive = cohorts.inactiveCodes(org);
    const live = cohorts.enabledRealTime(org).map((c) => ({ code: c.code, query: c.ast as Query }));
    const explanation = explainQuery({
      query: cohort.query,
      ast: cohort.ast as Query,
      cohorts: live,
      inactive,
      events,
      context: await imports.contextFor(org, user),
      now: clock.now().getTime(),
    });
    const memberships = await pipeline.membershipsOf(org, user);
    return {
      status: 200,
      body: {
        user_id: user,
        cohort: { id: cohort.id, code: cohort.code, name: cohort.name },
        live_member: memberships.includes(cohort.code),
        ...explanation,
      },
    };
  });

  http.route('GET', '/cohorts-api/v2/users/:userId/cohorts', 'cohorts', async (ctx) => {
    const principal = authenticatePrivate(tenancy, ctx);
    const user = await knownUser(principal.organizationId, ctx.params['userId'], 'path\'s');
    const codes = new Set(await pipeline.membershipsOf(principal.organizationId, user));
    const visible = cohorts.listVisible(principal, principal.access === 'descendants').filter((c) => codes.has(c.code));
    return { status: 200, body: visible.map((c) => ({ id: c.id, code: c.code, name: c.name, segment_type: c.segment_type })) };
  });
}
