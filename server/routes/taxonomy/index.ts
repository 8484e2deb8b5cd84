// The taxonomy and imports API (`/audience-api/v1`, D25–D27): imports, their segments, members and rows, for a
// private key over a secure transport (D6, D7); errors in the taxonomy envelope (D13).
//
// Choices where the spec and decisions are silent:
// - `POST /imports` answers 200 (not 201), like every segment success (D26). Imports carry no `organization_id` on
//   the wire. `GET /imports` lists the imports of every workspace the key sees (D9), by code.
// - An import is visible when its workspace is (own, ancestors, descendants with `descendants` access); a hidden,
//   unknown or other organization's import is 404 3000. Writes (segments, batches, members, rows) need a writable
//   workspace: an ancestor's import is 403 2001 (D9).
// - Top-level `null` fields of bodies (and of batch operations and rows) count as absent, except a segment's
//   `description` and `cpm`, where null clears the value.
// - `GET .../segments` takes `pagination_token` and `page_size` (1..1000, default 100; otherwise 400 1000).
// - Batch `PATCH .../segments` answers 200 `{results: [...]}`, the domain's per-item results in order.
// - Members and rows: `{user_id}` must be a UUID (1002) and is used as given (no user record is written); a known
//   alias resolves to its user; an unknown alias binds a new user (so a later track with it finds the data), except
//   in `remove` only, where nothing is bound. Affected users are re-evaluated before the 200 answer (D27).

import type { HttpServer } from '../../http/index.js';
import type { TaxonomyDeps } from './access.js';
import { registerImportRoutes } from './imports.js';
import { registerLoadingRoutes } from './loading.js';
import { registerSegmentRoutes } from './segments.js';

export type { TaxonomyDeps } from './access.js';

export function registerTaxonomyRoutes(http: HttpServer, deps: TaxonomyDeps): void {
  registerImportRoutes(http, deps);
  registerSegmentRoutes(http, deps);
  registerLoadingRoutes(http, deps);
}
