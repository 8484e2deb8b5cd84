// The documented operations of the taxonomy and imports routes (D25–D27), the admin API (operations.md) and the
// plain routes (health, error pages, metrics, this document). Keyed like paths-data.ts.

import type { OperationSpec } from './operation.js';
import { ref } from './schemas.js';

const uuid = { type: 'string', format: 'uuid' };
const arrayOf = (name: string) => ({ type: 'array', items: ref(name) });
const IMPORT = { importId: 'the import\'s id (UUID)' };
const BY_ID = { ...IMPORT, segmentId: 'the segment\'s id (UUID)' };
const BY_CODE = { ...IMPORT, segmentCode: 'the segment\'s code' };

const newSegment = {
  allOf: [ref('SegmentFields'), { type: 'object', properties: { code: { type: 'string', description: 'unique within the import; never changes' } }, required: ['name', 'code'] }],
};

function segmentOps(pattern: string, path: Record<string, string>): Record<string, OperationSpec> {
  const how = pattern.includes('/code/') ? 'by its code' : 'by its id';
  return {
    [`GET ${pattern}`]: { area: 'taxonomy', tag: 'Taxonomy', key: 'private', summary: `Read a segment ${how}`, path, ok: { status: 200, description: 'The segment', schema: ref('Segment') } },
    [`PATCH ${pattern}`]: {
      area: 'taxonomy', tag: 'Taxonomy', key: 'private',
      summary: `Update a segment ${how}`,
      description: 'Absent fields stay; null clears `description` and `cpm`; `code` never changes (D26).',
      path,
      body: { required: true, schema: ref('SegmentFields') },
      ok: { status: 200, description: 'The updated segment', schema: ref('Segment') },
    },
    [`DELETE ${pattern}`]: { area: 'taxonomy', tag: 'Taxonomy', key: 'private', summary: `Delete a segment ${how}`, path, ok: { status: 200, description: 'The deleted segment', schema: ref('Segment') } },
  };
}

export const ADMIN_OPERATIONS: Record<string, OperationSpec> = {
  'POST /audience-api/v1/imports': {
    area: 'taxonomy', tag: 'Taxonomy', key: 'private',
    summary: 'Create an import',
    description: 'A source of 2nd or 3rd party segments, or of connections rows with a schema (D25).',
    body: {
      required: true,
      schema: {
        type: 'object',
        properties: {
          name: { type: 'string' },
          code: { type: 'string', description: 'unique in the organization; the `provider` queries name' },
          relation: { type: 'string', enum: ['2nd', '3rd'] },
          kind: { type: 'string', enum: ['segments', 'connections'] },
          identifiers: { type: 'array', items: { type: 'string' } },
          schema: { type: 'object', additionalProperties: { type: 'string', enum: ['string', 'number', 'boolean', 'date', 'list'] } },
          description: { type: ['string', 'null'] },
        },
        required: ['name', 'code', 'relation', 'kind'],
      },
    },
    ok: { status: 200, description: 'The import', schema: ref('Import') },
    errors: [409],
  },
  'GET /audience-api/v1/imports': {
    area: 'taxonomy', tag: 'Taxonomy', key: 'private',
    summary: 'List imports',
    ok: { status: 200, description: 'The imports of every workspace the key sees', schema: arrayOf('Import') },
  },
  'GET /audience-api/v1/imports/:importId': {
    area: 'taxonomy', tag: 'Taxonomy', key: 'private',
    summary: 'Read an import',
    path: IMPORT,
    ok: { status: 200, description: 'The import', schema: ref('Import') },
  },
  'POST /audience-api/v1/imports/:importId/segments': {
    area: 'taxonomy', tag: 'Taxonomy', key: 'private',
    summary: 'Create a segment of an import',
    path: IMPORT,
    body: { required: true, schema: newSegment },
    ok: { status: 200, description: 'The segment, with the spec\'s camelCase names too (D26)', schema: ref('SegmentCreated') },
    errors: [409],
  },
  'GET /audience-api/v1/imports/:importId/segments': {
    area: 'taxonomy', tag: 'Taxonomy', key: 'private',
    summary: 'List an import\'s segments (paged)',
    path: IMPORT,
    query: [
      { name: 'pagination_token', description: 'from the previous page\'s pagination.next_token', schema: { type: 'string' } },
      { name: 'page_size', description: '1..1000, default 100', schema: { type: 'integer', minimum: 1, maximum: 1000, default: 100 } },
    ],
    ok: {
      status: 200,
      description: 'One page',
      schema: {
        type: 'object',
        properties: {
          elements: arrayOf('Segment'),
          pagination: { type: 'object', properties: { next_token: { type: 'string' }, total_count: { type: 'integer' } }, required: ['total_count'] },
        },
        required: ['elements', 'pagination'],
      },
    },
  },
  'PATCH /audience-api/v1/imports/:importId/segments': {
    area: 'taxonomy', tag: 'Taxonomy', key: 'private',
    summary: 'Create, update and delete segments in one batch',
    description: 'Up to 5000 operations; each succeeds or fails on its own, its result in order (D26).',
    path: IMPORT,
    body: {
      required: true,
      schema: {
        type: 'object',
        properties: {
          operations: {
            type: 'array',
            maxItems: 5000,
            items: { allOf: [ref('SegmentFields')], type: 'object', properties: { operation: { type: 'string', enum: ['Create', 'Update', 'Delete'] }, id: uuid, code: { type: 'string' } }, required: ['operation'] },
          },
        },
        required: ['operations'],
      },
    },
    ok: {
      status: 200,
      description: 'One result per operation',
      schema: {
        type: 'object',
        properties: {
          results: {
            type: 'array',
            items: {
              type: 'object',
              properties: {
                index: { type: 'integer' },
                operation: { type: ['string', 'null'], enum: ['Create', 'Update', 'Delete', null] },
                status: { type: 'integer' },
                segment: ref('Segment'),
                error: { type: 'object', properties: { code: { type: 'integer' }, detail: { type: 'string' } }, required: ['code'] },
              },
              required: ['index', 'operation', 'status'],
            },
          },
        },
        required: ['results'],
      },
    },
  },
  ...segmentOps('/audience-api/v1/imports/:importId/segments/:segmentId', BY_ID),
  ...segmentOps('/audience-api/v1/imports/:importId/segments/code/:segmentCode', BY_CODE),
  'POST /audience-api/v1/imports/:importId/segments/code/:segmentCode/members': {
    area: 'taxonomy', tag: 'Taxonomy', key: 'private',
    summary: 'Add and remove members of an imported segment',
    description: 'At most 10,000 users in all; the affected users are re-evaluated before the answer (D27).',
    path: BY_CODE,
    body: { required: true, schema: { type: 'object', properties: { add: arrayOf('UserRef'), remove: arrayOf('UserRef') } } },
    ok: { status: 200, description: 'How many memberships changed', schema: { type: 'object', properties: { added: { type: 'integer' }, removed: { type: 'integer' } }, required: ['added', 'removed'] } },
  },
  'POST /audience-api/v1/imports/:importId/rows': {
    area: 'taxonomy', tag: 'Taxonomy', key: 'private',
    summary: 'Load rows of a connections import',
    description: 'At most 10,000 rows, each checked against the import\'s schema; a row `id` loaded again replaces that row (D27).',
    path: IMPORT,
    body: {
      required: true,
      schema: {
        type: 'array',
        maxItems: 10000,
        items: {
          type: 'object',
          properties: {
            user_id: uuid,
            alias: ref('AliasRef'),
            time: { type: ['string', 'integer'], description: 'ISO 8601 or epoch milliseconds; default now' },
            properties: { type: 'object' },
            id: { type: 'string' },
          },
        },
      },
    },
    ok: { status: 200, description: 'How many rows were loaded', schema: { type: 'object', properties: { loaded: { type: 'integer' } }, required: ['loaded'] } },
  },
  'POST /admin/v1/workspaces': {
    area: 'admin', tag: 'Admin', key: 'private',
    summary: 'Create a workspace',
    description: 'Needs descendants access over the parent.',
    body: { required: true, schema: { type: 'object', properties: { name: { type: 'string' }, parent_id: uuid }, required: ['name', 'parent_id'] } },
    ok: { status: 201, description: 'The workspace', schema: ref('Workspace') },
    errors: [404],
  },
  'GET /admin/v1/workspaces': {
    area: 'admin', tag: 'Admin', key: 'private',
    summary: 'List the workspaces the key reaches',
    ok: { status: 200, description: 'The workspaces', schema: arrayOf('Workspace') },
  },
  'POST /admin/v1/keys': {
    area: 'admin', tag: 'Admin', key: 'private',
    summary: 'Create an API key',
    body: {
      required: true,
      schema: {
        type: 'object',
        properties: {
          workspace_id: uuid,
          type: { type: 'string', enum: ['public', 'private'] },
          name: { type: 'string' },
          access: { type: 'string', enum: ['workspace', 'descendants'], default: 'workspace' },
        },
        required: ['workspace_id', 'type'],
      },
    },
    ok: {
      status: 201,
      description: 'The key, with its value shown only here (D5)',
      schema: { allOf: [ref('Key'), { type: 'object', properties: { key: uuid }, required: ['key'] }] },
    },
    errors: [404],
  },
  'GET /admin/v1/keys': {
    area: 'admin', tag: 'Admin', key: 'private',
    summary: 'List keys (without their values)',
    ok: { status: 200, description: 'The keys', schema: arrayOf('Key') },
  },
  'DELETE /admin/v1/keys/:keyId': {
    area: 'admin', tag: 'Admin', key: 'private',
    summary: 'Revoke a key',
    description: 'It stops working at once.',
    path: { keyId: 'the key\'s id (not its value)' },
    ok: { status: 200, description: 'The revoked key', schema: ref('Key') },
  },
  'POST /admin/v1/backups': {
    area: 'admin', tag: 'Admin', key: 'private',
    summary: 'Take a backup consistent while serving',
    description: 'Root workspace admin of a single-organization store only; written under the data directory (`audience backup --out FILE` copies it out).',
    ok: {
      status: 201,
      description: 'Where the backup is',
      schema: { type: 'object', properties: { file: { type: 'string' }, keys: { type: 'integer' }, bytes: { type: 'integer' }, started_at: { type: 'string', format: 'date-time' } }, required: ['file', 'keys', 'bytes', 'started_at'] },
    },
  },
  'GET /healthz': {
    area: 'plain', tag: 'Operations', key: 'none',
    summary: 'Health check',
    ok: { status: 200, description: 'Serving', schema: { type: 'object', properties: { status: { const: 'ok' } }, required: ['status'] } },
  },
  'GET /errors/:status/:code': {
    area: 'plain', tag: 'Operations', key: 'none',
    summary: 'The page an error\'s `docs` link points to (D10)',
    path: { status: 'the HTTP status', code: 'the service subcode' },
    ok: { status: 200, description: 'An HTML page about the error', schema: { type: 'string' }, contentType: 'text/html' },
    errors: [404],
  },
  'GET /metrics': {
    area: 'plain', tag: 'Operations', key: 'none',
    summary: 'Prometheus metrics (absent with --metrics off)',
    ok: { status: 200, description: 'Prometheus text exposition format', schema: { type: 'string' }, contentType: 'text/plain' },
  },
  'GET /dashboard': {
    area: 'plain', tag: 'Operations', key: 'none',
    summary: 'The dashboard (sign in with a key)',
    ok: { status: 200, description: 'The dashboard\'s page', schema: { type: 'string' }, contentType: 'text/html' },
    errors: [404],
  },
  'GET /dashboard/:file': {
    area: 'plain', tag: 'Operations', key: 'none',
    summary: 'A file of the dashboard',
    path: { file: 'app.js, app.js.map, app.css or index.html' },
    ok: { status: 200, description: 'The file', schema: { type: 'string' }, contentType: 'text/javascript' },
    errors: [404],
  },
  'GET /openapi.json': {
    area: 'plain', tag: 'Operations', key: 'none',
    summary: 'This document: the routes this instance serves',
    ok: { status: 200, description: 'OpenAPI 3.1', schema: { type: 'object' } },
  },
};
