// Who is calling a route: the key's principal under the key-type and transport rules (D5–D7). Authorisation over
// resources (workspaces, cohorts, imports) stays with each area; this is only the gate every route passes first.

import { requirePrivate, type Principal, type Tenancy } from '../domain/tenancy/index.js';
import type { RequestContext } from '../http/index.js';

/**
 * For the routes public keys may call (D6: users, identify, events, segmentation): any live key, but a private key
 * only over a secure transport (D7: HTTPS, a loopback peer, or a trusted proxy's `X-Forwarded-Proto: https`).
 */
export function authenticateClient(tenancy: Tenancy, ctx: RequestContext): Principal {
  const principal = tenancy.authenticate(ctx.apiKey);
  if (principal.type === 'private') requirePrivate(principal, ctx.transportSecure);
  return principal;
}

/** For private-key routes (D6: aliases, cohorts, taxonomy, admin): a private key over a secure transport (D7). */
export function authenticatePrivate(tenancy: Tenancy, ctx: RequestContext): Principal {
  const principal = tenancy.authenticate(ctx.apiKey);
  requirePrivate(principal, ctx.transportSecure);
  return principal;
}
