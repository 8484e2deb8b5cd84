// The identity routes of `/v2.0` (spec "Identity", D5–D7, D9, D28): create a user, identify, list and add aliases.
// Errors use the identity envelope (area 'identity', D10).
//
// Choices where the spec and decisions are silent:
// - `POST /v2.0/users` never reads a body: any body (none, empty, `{}`) is ignored (spec: "No body"; D1).
// - A private key on the public routes (users, identify, events) follows D7 as everywhere: over a non-secure
//   transport it is 403 2001 (a public key is accepted on any transport).
// - A `user_id` path parameter that is not a UUID names no user that can exist: 404 3000 on both alias routes
//   (`GET` as for any unknown user, D28; `POST` before the body is looked at).
// - `POST /v2.0/users/{user_id}/aliases` for a user never seen records the user (as identify does) and binds the
//   alias to it; re-adding an alias the user already has answers 200 and changes nothing.

import type { HttpServer, RequestContext } from '../http/index.js';
import { authenticateClient, authenticatePrivate } from './auth.js';
import { isUuid, validateAliasBody, validateIdentifyBody } from '../domain/identity/index.js';
import { notFound } from '../errors.js';
import type { Services } from '../services.js';

export type IdentityRouteDeps = Pick<Services, 'tenancy' | 'identity'>;

/** The `user_id` path parameter; a value that is not a UUID is a user that cannot exist (404 3000). */
function userIdParam(ctx: RequestContext): string {
  const userId = ctx.params['user_id'] ?? '';
  if (!isUuid(userId)) throw notFound('user');
  return userId;
}

export function registerIdentityRoutes(http: HttpServer, { tenancy, identity }: IdentityRouteDeps): void {
  http.route('POST', '/v2.0/users', 'identity', async (ctx) => {
    const principal = authenticateClient(tenancy, ctx);
    const id = await identity.createUser(principal.organizationId);
    return { status: 200, body: { id } };
  }, { body: 'none', cors: 'public' });

  http.route('POST', '/v2.0/identify', 'identity', async (ctx) => {
    const principal = authenticateClient(tenancy, ctx);
    const body = validateIdentifyBody(ctx.body);
    const userId = await identity.identify(principal.organizationId, body.user_id, body.aliases);
    return { status: 200, body: { user_id: userId } };
  }, { body: 'required', cors: 'public' });

  http.route('GET', '/v2.0/users/:user_id/aliases', 'identity', async (ctx) => {
    const principal = authenticatePrivate(tenancy, ctx);
    const aliases = await identity.listAliases(principal.organizationId, userIdParam(ctx));
    return { status: 200, body: aliases };
  });

  http.route('POST', '/v2.0/users/:user_id/aliases', 'identity', async (ctx) => {
    const principal = authenticatePrivate(tenancy, ctx);
    const userId = userIdParam(ctx);
    const alias = validateAliasBody(ctx.body);
    const view = await identity.addAlias(principal.organizationId, userId, alias);
    return { status: 200, body: view };
  }, { body: 'required' });
}

/**
 * `GET /v2.0/aliases/{tag}/{id}` (the dashboard's user lookup, issue 16): the user an alias points to, as
 * `{id, tag, platform_id}`; an alias never bound is 404 3000. Private key. Not on the legacy address (D47 lists its
 * routes), so it is registered apart from registerIdentityRoutes.
 */
export function registerAliasLookupRoute(http: HttpServer, { tenancy, identity }: IdentityRouteDeps): void {
  http.route('GET', '/v2.0/aliases/:tag/:id', 'identity', async (ctx) => {
    const principal = authenticatePrivate(tenancy, ctx);
    const tag = ctx.params['tag'] ?? '';
    const id = ctx.params['id'] ?? '';
    const user = await identity.findAliasUser(principal.organizationId, { tag, id });
    if (user === undefined) throw notFound('alias');
    return { status: 200, body: { id, tag, platform_id: user } };
  });
}
