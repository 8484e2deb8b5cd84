// `GET /openapi.json` (operations.md, second round): the OpenAPI 3.1 document of the routes this server serves,
// built on the first request (every route is registered by then) and kept. No key, like /healthz.

import type { HttpServer } from '../http/index.js';
import { buildOpenApiDocument } from '../openapi/document.js';

export function registerOpenApiRoute(http: HttpServer, version: string): void {
  let text: string | undefined;
  http.route(
    'GET',
    '/openapi.json',
    'plain',
    () => {
      text ??= JSON.stringify(buildOpenApiDocument(http.routes(), { version }));
      return { status: 200, text, contentType: 'application/json' };
    },
    { body: 'none', cors: 'public' },
  );
}
