// One documented operation, written once in a short form and expanded into OpenAPI 3.1: its key (none, public or
// private, D6), its area's error envelope (D10, D12, D13), the error statuses that apply to it, path parameters
// from the route pattern, and the X-Request-Id header every response carries (D4, D44).

import type { Area } from '../http/index.js';
import { ref } from './schemas.js';

type Schema = Record<string, unknown>;
export type KeyKind = 'none' | 'public' | 'private';

export interface Param {
  readonly name: string;
  readonly description: string;
  readonly schema: Schema;
  readonly required?: boolean;
}

export interface OperationSpec {
  readonly area: Area;
  readonly tag: string;
  readonly summary: string;
  readonly description?: string;
  readonly key: KeyKind;
  /** Path parameters by name (each `:name` of the pattern must be here). */
  readonly path?: Readonly<Record<string, string>>;
  readonly query?: readonly Param[];
  readonly body?: { readonly schema: Schema; readonly required: boolean; readonly description?: string };
  readonly ok: { readonly status: number; readonly description: string; readonly schema?: Schema; readonly contentType?: string; readonly headers?: Record<string, Schema> };
  /** Other success statuses with the same body as `ok`. */
  readonly alsoOk?: readonly { readonly status: number; readonly description: string }[];
  /** Error statuses beyond the ones every keyed route has (401, 403, 500) and the ones its inputs imply (400, 404, 413). */
  readonly errors?: readonly number[];
  /** Envelopes a status may have besides the area's own (the events read's flat 3002, D12). */
  readonly alsoErrors?: Readonly<Record<number, string>>;
  /** Extra fields (`x-websocket`, ...). */
  readonly extensions?: Readonly<Record<string, unknown>>;
}

const REASONS: Record<number, string> = {
  400: 'Bad request: a parameter or the body is not as expected (codes 1000, 1002, 1003, 1007)',
  401: 'No key, not a key, or no such key (codes 2004, 2005, 2000)',
  403: 'The key may not do this (code 2001: public key, plain HTTP with a private key, or out of reach)',
  404: 'No such resource the key can see (code 3000)',
  409: 'Already exists, or still referenced (code 4000)',
  413: 'The body is larger than the server accepts (code 1002, D2)',
  500: 'Unexpected error, logged with the request id (code 5000)',
};

const ENVELOPE: Record<Area, string> = {
  cohorts: 'CohortError',
  segmentation: 'CohortError',
  admin: 'CohortError',
  plain: 'CohortError',
  identity: 'IdentityError',
  taxonomy: 'TaxonomyError',
};

const REQUEST_ID_HEADER = { description: 'The request id (a client\'s X-Request-Id when it sent a UUID, D44)', schema: { type: 'string', format: 'uuid' } };

const KEY_TEXT: Record<KeyKind, string> = {
  none: 'No key.',
  public: 'A public or private key (D6).',
  private: 'A private key, over HTTPS or from loopback (D6, D7).',
};

function json(schema: Schema | undefined, contentType = 'application/json'): Record<string, unknown> {
  return schema === undefined ? {} : { content: { [contentType]: { schema } } };
}

/** The path parameters of an Express-style pattern (`/a/:id` → ['id']) and its OpenAPI form (`/a/{id}`). */
export function openApiPath(pattern: string): { path: string; params: string[] } {
  const params: string[] = [];
  const path = pattern.replace(/:([A-Za-z0-9_]+)/g, (_, name: string) => {
    params.push(name);
    return `{${name}}`;
  });
  return { path, params };
}

export function expandOperation(method: string, pattern: string, spec: OperationSpec): Record<string, unknown> {
  const { params } = openApiPath(pattern);
  const parameters: Record<string, unknown>[] = params.map((name) => {
    const description = spec.path?.[name];
    if (description === undefined) throw new Error(`OpenAPI: ${method} ${pattern} does not describe its path parameter ${name}`);
    return { name, in: 'path', required: true, description, schema: { type: 'string' } };
  });
  for (const param of spec.query ?? []) {
    parameters.push({ name: param.name, in: 'query', required: param.required ?? false, description: param.description, schema: param.schema });
  }
  const statuses = new Set<number>(spec.errors ?? []);
  if (spec.key !== 'none') [401, 403, 500].forEach((s) => statuses.add(s));
  if (spec.body !== undefined || (spec.query ?? []).length > 0) statuses.add(400);
  if (spec.body !== undefined) statuses.add(413);
  if (params.length > 0 && spec.key !== 'none') statuses.add(404);

  const responses: Record<string, unknown> = {
    [String(spec.ok.status)]: {
      description: spec.ok.description,
      headers: { 'X-Request-Id': REQUEST_ID_HEADER, ...spec.ok.headers },
      ...json(spec.ok.schema, spec.ok.contentType),
    },
  };
  for (const other of spec.alsoOk ?? []) {
    responses[String(other.status)] = { description: other.description, headers: { 'X-Request-Id': REQUEST_ID_HEADER }, ...json(spec.ok.schema, spec.ok.contentType) };
  }
  for (const status of [...statuses].sort()) {
    const other = spec.alsoErrors?.[status];
    responses[String(status)] = {
      description: REASONS[status] ?? `HTTP ${status}`,
      headers: { 'X-Request-Id': REQUEST_ID_HEADER },
      ...json(other === undefined ? ref(ENVELOPE[spec.area]) : { oneOf: [ref(ENVELOPE[spec.area]), ref(other)] }),
    };
  }
  return {
    operationId: operationId(method, pattern),
    tags: [spec.tag],
    summary: spec.summary,
    description: [spec.description, KEY_TEXT[spec.key]].filter((line) => line !== undefined).join('\n\n'),
    ...(spec.key === 'none' ? { security: [] } : {}),
    'x-audience-key': spec.key,
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(spec.body === undefined
      ? {}
      : { requestBody: { required: spec.body.required, ...(spec.body.description === undefined ? {} : { description: spec.body.description }), ...json(spec.body.schema) } }),
    responses,
    ...(spec.extensions ?? {}),
  };
}

/** `GET /cohorts-api/v2/cohorts/:cohortId` → `getCohortsApiV2CohortsByCohortId`: unique per route, stable. */
function operationId(method: string, pattern: string): string {
  const words = pattern
    .split('/')
    .filter((segment) => segment !== '')
    .map((segment) => (segment.startsWith(':') ? `by_${segment.slice(1)}` : segment))
    .join('_')
    .split(/[^A-Za-z0-9]+/)
    .filter((word) => word !== '');
  return method.toLowerCase() + words.map((word) => word[0]?.toUpperCase() + word.slice(1)).join('');
}
