// The OpenAPI 3.1 document `GET /openapi.json` serves (operations.md, second round): the operations of
// paths-data.ts and paths-admin.ts for exactly the routes an instance serves (a server with `--metrics off` does not
// list /metrics). Every served route must have an operation, and every operation must name a route of the router:
// test/e2e/openapi.test.ts holds both, validates the document and checks real answers against its schemas.

import type { ServedRoute } from '../http/index.js';
import { expandOperation, openApiPath, type OperationSpec } from './operation.js';
import { ADMIN_OPERATIONS } from './paths-admin.js';
import { DATA_OPERATIONS } from './paths-data.js';
import { SCHEMAS } from './schemas.js';

/** Every documented operation by `METHOD pattern`, the router's own pattern. */
export const OPERATIONS: Readonly<Record<string, OperationSpec>> = { ...DATA_OPERATIONS, ...ADMIN_OPERATIONS };

const TAGS = [
  { name: 'Identity', description: 'Users and their aliases (spec: Identity; D28).' },
  { name: 'Events', description: 'Track and read events (spec: Events; D29–D31, D39).' },
  { name: 'Segmentation', description: 'Stateless and stateful segmentation calls (D21–D24, D42).' },
  { name: 'Cohorts', description: 'Cohorts and their queries (spec: Cohorts; D14–D20).' },
  { name: 'Reactions', description: 'Webhooks on entries and exits, their deliveries, and the live stream (D37, D38).' },
  { name: 'Taxonomy', description: 'Imports, imported segments, their members and connections rows (D25–D27, D45).' },
  { name: 'Admin', description: 'Workspaces, keys and backups (operations.md).' },
  { name: 'Operations', description: 'Health, error pages, metrics and this document.' },
];

export interface DocumentOptions {
  readonly version: string;
  /** Base URL of the server, for `servers`; omitted: relative to where the document was fetched. */
  readonly serverUrl?: string;
}

export function buildOpenApiDocument(served: readonly ServedRoute[], options: DocumentOptions): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of served) {
    const id = `${route.method} ${route.pattern}`;
    const spec = OPERATIONS[id];
    if (spec === undefined) throw new Error(`OpenAPI: the served route ${id} has no documented operation (server/openapi)`);
    const { path } = openApiPath(route.pattern);
    (paths[path] ??= {})[route.method.toLowerCase()] = expandOperation(route.method, route.pattern, spec);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'audience',
      version: options.version,
      summary: 'Open, self-hostable real-time audience data platform',
      description:
        'Identity, event history and cohorts evaluated on every event. Keys go in the X-API-Key header or the k query parameter (D5); ' +
        'each operation says which kind it needs (`x-audience-key`: none, public or private). Every response carries X-Request-Id. ' +
        'Errors use the envelope of their area: CohortError, IdentityError (and UnknownUserError) or TaxonomyError. ' +
        'The repository\'s docs/API.md is this document as prose.',
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    servers: [{ url: options.serverUrl ?? '/' }],
    security: [{ ApiKeyHeader: [] }, { ApiKeyQuery: [] }],
    tags: TAGS,
    paths,
    components: {
      securitySchemes: {
        ApiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'A key (UUID v4), public or private (D5–D7)' },
        ApiKeyQuery: { type: 'apiKey', in: 'query', name: 'k', description: 'The same key as a query parameter; the header wins when both are sent' },
      },
      schemas: SCHEMAS,
    },
  };
}
