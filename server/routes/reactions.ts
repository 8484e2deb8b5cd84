// The Reactions API (D37): webhooks fired by a cohort's entries (on_entry), exits (on_exit) or members' page loads
// (every_time), under /reactions-api/v1/reactions, for a private key over a secure transport; visibility and 404s
// as cohorts (D9), errors in the cohort envelope (D10). Also each reaction's deliveries and the retry of a failed one.
//
// Choices where D37 is silent:
// - Order of checks as the cohort routes: key (401/403) → the reaction's visibility and write access (404 3000,
//   403 2001) → the body (400 1002/1003) → the target workspace and the cohort.
// - `cohort_id` must name a real-time cohort the reaction's workspace can see (own or an ancestor's); anything else,
//   hidden or offline, is 400 1002 naming `cohort_id` (an offline cohort has no live entries or exits). A reaction
//   keeps its cohort: PATCH changes `name`, `action` and `state` only (other fields are ignored, D1).
// - `action.url`: an absolute http(s) URL of at most 2,048 characters, without user name or password.
// - A cohort that reactions name cannot be deleted (409 4000 from the cohort routes), as with referencing cohorts.
// - Deliveries list: newest first, `status` (pending|failed|delivered, else 400 1000), `limit` 1..1000 (default
//   100). Retry: a `failed` delivery only (409 4000 otherwise); it is pending again at once with a new 24-hour
//   horizon, under the same id.

import type { HttpServer, RequestContext } from '../http/index.js';
import type { Services } from '../services.js';
import { checkName, isUuid, type Principal } from '../domain/tenancy/index.js';
import { authenticatePrivate } from './auth.js';
import { ServiceError, badBody, badParameter, notFound } from '../errors.js';
import { optionalEnum, optionalString, requireBodyObject, requireName, type BodyObject } from './body.js';
import { deliverySeqOf, reactionsKeys, type Delivery, type Reaction, type ReactionTrigger } from '../domain/reactions/contract.js';
import type { ReactionPatch } from '../domain/reactions/registry.js';
import { prefixEnd } from '../store/contract.js';

export type ReactionsDeps = Pick<Services, 'tenancy' | 'cohorts' | 'reactions' | 'deliveries' | 'store' | 'clock' | 'newId'>;

const COLLECTION = '/reactions-api/v1/reactions';
const ONE = `${COLLECTION}/:reactionId`;
const TRIGGERS = ['on_entry', 'on_exit', 'every_time'] as const;
const URL_MAX = 2048;

/** The reaction as answered: without its secret (shown once, at creation) and its organization. */
export function toReactionWire(reaction: Reaction): Record<string, unknown> {
  const { secret: _secret, organization_id: _org, cohort_code, ...wire } = reaction;
  return { ...wire, cohort_code };
}

function toDeliveryWire(d: Delivery): Record<string, unknown> {
  const iso = (ms: number | null | undefined): string | null => (ms === null || ms === undefined ? null : new Date(ms).toISOString());
  return {
    id: d.body.id,
    status: d.status,
    attempts: d.attempts,
    last_status: d.last_status,
    last_error: d.last_error,
    created_at: iso(d.created_at),
    last_attempt_at: iso(d.last_attempt_at),
    next_attempt_at: d.status === 'pending' ? iso(d.next_at) : null,
    trigger: d.body.trigger,
    cohort: d.body.cohort,
    user_id: d.body.user_id,
    time: d.body.time,
    event_id: d.body.event_id,
  };
}

/** D37 `action`: `{type: "webhook", url}`. */
function readAction(value: unknown): string {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw badBody('action: expected an object {type, url}');
  const action = value as BodyObject;
  if (action['type'] !== 'webhook') throw badBody('action.type: expected "webhook"');
  const url = action['url'];
  if (typeof url !== 'string') throw badBody('action.url: expected a string');
  if (url.length > URL_MAX) throw badBody(`action.url: at most ${URL_MAX} characters`);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw badBody('action.url: expected an absolute URL');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw badBody('action.url: expected an http or https URL');
  if (parsed.username !== '' || parsed.password !== '') throw badBody('action.url: must not carry a user name or password');
  return url;
}

export function registerReactionsRoutes(http: HttpServer, services: ReactionsDeps): void {
  const { tenancy, cohorts, reactions, deliveries, store, clock, newId } = services;
  const authorise = (ctx: RequestContext): Principal => authenticatePrivate(tenancy, ctx);
  const reactionIdOf = (ctx: RequestContext): string => {
    const raw = ctx.params['reactionId'] ?? '';
    if (!isUuid(raw)) throw notFound('reaction');
    return raw.toLowerCase();
  };

  http.route('GET', COLLECTION, 'cohorts', (ctx) => {
    const principal = authorise(ctx);
    return { status: 200, body: reactions.listVisible(principal, false).map(toReactionWire) };
  });

  http.route(
    'POST',
    COLLECTION,
    'cohorts',
    async (ctx) => {
      const principal = authorise(ctx);
      const body = requireBodyObject(ctx.body);
      const name = requireName(body);
      const cohortId = optionalString(body, 'cohort_id');
      if (cohortId === undefined) throw badBody('cohort_id: missing');
      const trigger: ReactionTrigger | undefined = optionalEnum(body, 'trigger', TRIGGERS);
      if (trigger === undefined) throw badBody('trigger: missing');
      if (body['action'] === undefined || body['action'] === null) throw badBody('action: missing');
      const url = readAction(body['action']);
      const workspaceId = optionalString(body, 'workspace_id') ?? principal.workspaceId;
      tenancy.requireWritableWorkspace(principal, workspaceId);
      const cohort = isUuid(cohortId) ? cohorts.get(cohortId.toLowerCase()) : undefined;
      if (cohort === undefined || !tenancy.isSameOrDescendant(workspaceId, cohort.workspace_id)) {
        throw badBody(`cohort_id: no cohort ${cohortId} that this workspace can see`);
      }
      if (cohort.segment_type !== 'real_time') throw badBody('cohort_id: an offline cohort has no live entries or exits');
      const reaction = await reactions.create({ workspaceId, name, cohort, trigger, url, now: clock.now(), newId });
      return { status: 201, body: { ...toReactionWire(reaction), secret: reaction.secret } };
    },
    { body: 'optional' },
  );

  http.route('GET', ONE, 'cohorts', (ctx) => {
    const principal = authorise(ctx);
    return { status: 200, body: toReactionWire(reactions.getVisible(principal, reactionIdOf(ctx))) };
  });

  http.route(
    'PATCH',
    ONE,
    'cohorts',
    async (ctx) => {
      const principal = authorise(ctx);
      const current = reactions.getWritable(principal, reactionIdOf(ctx));
      const body = requireBodyObject(ctx.body);
      const patch: { -readonly [K in keyof ReactionPatch]: ReactionPatch[K] } = {};
      if (body['name'] !== undefined && body['name'] !== null) patch.name = checkName('name', body['name']);
      if (body['action'] !== undefined && body['action'] !== null) patch.url = readAction(body['action']);
      const state = optionalEnum(body, 'state', ['Enabled', 'Disabled'] as const);
      if (state !== undefined) patch.state = state;
      const updated = await reactions.update(current.id, patch, clock.now());
      return { status: 200, body: toReactionWire(updated) };
    },
    { body: 'optional' },
  );

  http.route('DELETE', ONE, 'cohorts', async (ctx) => {
    const principal = authorise(ctx);
    const reaction = reactions.getWritable(principal, reactionIdOf(ctx));
    await reactions.delete(reaction.id);
    return { status: 200 };
  });

  http.route('GET', `${ONE}/deliveries`, 'cohorts', async (ctx) => {
    const principal = authorise(ctx);
    const reaction = reactions.getVisible(principal, reactionIdOf(ctx));
    const statusParam = ctx.query.get('status');
    if (statusParam !== null && !['pending', 'failed', 'delivered'].includes(statusParam)) {
      throw badParameter('The query parameter status must be pending, failed or delivered.', 'status: expected pending, failed or delivered');
    }
    const limitParam = ctx.query.get('limit');
    const limit = limitParam === null ? 100 : Number(limitParam);
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw badParameter('The query parameter limit must be an integer from 1 to 1000.', 'limit: expected 1..1000');
    const prefix = reactionsKeys.deliveryPrefix(reaction.id);
    const out: Record<string, unknown>[] = [];
    for await (const [, delivery] of store.iterate<Delivery>({ gte: prefix, lt: prefixEnd(prefix), reverse: true })) {
      if (statusParam !== null && delivery.status !== statusParam) continue;
      out.push(toDeliveryWire(delivery));
      if (out.length >= limit) break;
    }
    return { status: 200, body: out };
  });

  http.route(
    'POST',
    `${ONE}/deliveries/:deliveryId/retry`,
    'cohorts',
    async (ctx) => {
      const principal = authorise(ctx);
      const reaction = reactions.getWritable(principal, reactionIdOf(ctx));
      const seq = deliverySeqOf(ctx.params['deliveryId'] ?? '');
      if (seq === undefined) throw notFound('delivery');
      const key = reactionsKeys.delivery(reaction.id, seq);
      const delivery = await store.get<Delivery>(key);
      if (delivery === undefined) throw notFound('delivery');
      if (delivery.status !== 'failed') throw new ServiceError(4000, 'Only a failed delivery can be retried.', `delivery ${delivery.body.id} is ${delivery.status}`);
      const now = clock.now().getTime();
      const retried: Delivery = { ...delivery, status: 'pending', next_at: now, retried_at: now };
      await store.batch([
        { type: 'put', key, value: retried },
        { type: 'put', key: reactionsKeys.pending(reaction.id, seq), value: delivery.body.user_id },
      ]);
      deliveries.notify([reaction.id]);
      return { status: 200, body: toDeliveryWire(retried) };
    },
    { body: 'none' },
  );
}
