// Authorisation rules that depend on the principal alone (D6–D8). Rules that need the workspace tree
// (visibility D9, admin reach) are methods of Tenancy.

import { ServiceError, forbidden } from '../../errors.js';
import type { Principal } from './types.js';

/**
 * D6/D7: the operation needs a private key, and a private key only travels over a secure transport. The HTTP layer
 * computes `transportSecure` (HTTPS, a loopback peer, or a trusted proxy's `X-Forwarded-Proto: https`).
 */
export function requirePrivate(principal: Principal, transportSecure: boolean): void {
  if (principal.type !== 'private') throw forbidden('This operation needs a private key.');
  if (!transportSecure) {
    throw new ServiceError(2001, 'HTTPS is required: private keys are accepted over HTTPS only.', 'Send private keys over HTTPS.');
  }
}

/** D8: only a key with `descendants` access may ask for `include-child-workspaces=true`. */
export function requireIncludeChildren(principal: Principal): void {
  if (principal.access !== 'descendants') {
    throw forbidden('include-child-workspaces needs a key with descendants access.');
  }
}
