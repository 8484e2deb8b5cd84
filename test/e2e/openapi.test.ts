// `GET /openapi.json` (issue 14): an OpenAPI 3.1 document that a real validator accepts, held against the router both
// ways (the server refuses to build it when a served route has no operation; every documented operation is a route
// it serves), listing only what this instance serves (--metrics off: no /metrics), and true to the wire: a
// scenario calls EVERY documented operation (the WebSocket stream included) and checks each answer's status is
// documented and its JSON body fits the documented schema (ajv, JSON Schema 2020-12 as OpenAPI 3.1 uses).

import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import WebSocket from 'ws';
import { afterEach, describe, expect, it } from 'vitest';
import { OPERATIONS } from '../../server/openapi/document.js';
import { fullApiMarkdown } from '../../server/openapi/markdown.js';
import { startTestService, type TestService } from '../support/service.js';
import { waitUntil } from '../support/wait.js';

type Doc = { openapi: string; paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: unknown }> }> }>>; components: unknown };

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void;
let h: TestService | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function fetchDocument(service: TestService): Promise<Doc> {
  const response = await service.request('GET', '/openapi.json', { key: null });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toBe('application/json');
  return (await response.json()) as Doc;
}

/** `METHOD pattern` of every operation of the document, in the router's `:name` form. */
function documented(doc: Doc): string[] {
  return Object.entries(doc.paths).flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path.replace(/\{([^}]+)\}/g, ':$1')}`));
}

/** Checks answers against the document: the status documented for the operation, the JSON body fits its schema. */
function conformance(doc: Doc) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  const base = 'https://audience.invalid/openapi.json';
  const rebased = JSON.parse(JSON.stringify(doc).replaceAll('"#/components/', `"${base}#/components/`)) as Doc;
  ajv.addSchema({ $id: base, components: rebased.components });
  const exercised = new Set<string>();
  return {
    exercised,
    check(method: string, pattern: string, status: number, body: unknown, contentType: string | null): void {
      const path = pattern.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
      const operation = rebased.paths[path]?.[method.toLowerCase()];
      expect(operation, `${method} ${pattern} is documented`).toBeDefined();
      const response = operation?.responses[String(status)];
      expect(response, `${method} ${pattern} documents status ${status}`).toBeDefined();
      exercised.add(`${method} ${pattern}`);
      const schema = response?.content?.['application/json']?.schema;
      if (schema === undefined) return;
      expect(contentType).toMatch(/^application\/json/);
      const validate = ajv.compile(schema as object);
      expect(validate(body), `${method} ${pattern} ${status}: ${JSON.stringify(validate.errors)} in ${JSON.stringify(body)}`).toBe(true);
    },
  };
}

describe('GET /openapi.json', () => {
  it('is a valid OpenAPI 3.1 document of exactly the routes served', async () => {
    const service = (h = await startTestService());
    const doc = await fetchDocument(service);
    expect(doc.openapi).toBe('3.1.0');
    const result = await new Validator().validate(doc as unknown as Parameters<Validator['validate']>[0]);
    expect(result.errors ?? [], JSON.stringify(result.errors)).toEqual([]);
    expect(result.valid).toBe(true);
    // Both ways: the server builds the document from its router and refuses an undocumented route (a 200 above
    // says none is), and every operation written down is a route it serves.
    expect(documented(doc).sort()).toEqual(Object.keys(OPERATIONS).sort());
  });

  it('is what docs/API.md shows (npm run docs rewrites it)', async () => {
    const committed = await readFile(fileURLToPath(new URL('../../docs/API.md', import.meta.url)), 'utf8');
    expect(committed === fullApiMarkdown(), 'docs/API.md is stale: run npm run docs').toBe(true);
  });

  it('leaves out what this instance does not serve', async () => {
    const service = (h = await startTestService({ metrics: false }));
    const doc = await fetchDocument(service);
    expect(Object.keys(doc.paths)).not.toContain('/metrics');
    expect(documented(doc).sort()).toEqual(Object.keys(OPERATIONS).filter((id) => id !== 'GET /metrics').sort());
  });

  it('matches what the server answers, on every documented operation', async () => {
    const service = (h = await startTestService());
    const doc = await fetchDocument(service);
    const { check, exercised } = conformance(doc);
    const call = async <T = any>(method: string, pattern: string, values: Record<string, string> = {}, options: { key?: string | null; body?: unknown; query?: string } = {}): Promise<{ status: number; body: T }> => {
      const path = pattern.replace(/:([A-Za-z0-9_]+)/g, (_, name: string) => encodeURIComponent(values[name] as string));
      const response = await service.request(method, path + (options.query ?? ''), options);
      const text = await response.text();
      const contentType = response.headers.get('content-type');
      const body: unknown = contentType?.startsWith('application/json') && text !== '' ? JSON.parse(text) : text;
      check(method, pattern, response.status, body, contentType);
      return { status: response.status, body: body as T };
    };
    const pub = { key: service.keys.public_key };

    // Plain routes.
    expect((await call('GET', '/healthz', {}, { key: null })).status).toBe(200);
    expect((await call('GET', '/errors/:status/:code', { status: '400', code: '1002' }, { key: null })).status).toBe(200);
    expect((await call('GET', '/metrics', {}, { key: null })).status).toBe(200);
    expect((await call('GET', '/openapi.json', {}, { key: null })).status).toBe(200);
    expect((await call('GET', '/dashboard', {}, { key: null })).status).toBe(200);
    expect((await call('GET', '/dashboard/:file', { file: 'app.js' }, { key: null })).status).toBe(200);
    expect((await call('GET', '/dashboard/:file', { file: 'secrets.txt' }, { key: null })).status).toBe(404);

    // Admin.
    const child = await call('POST', '/admin/v1/workspaces', {}, { body: { name: 'Child', parent_id: service.keys.workspace_id } });
    expect(child.status).toBe(201);
    await call('GET', '/admin/v1/workspaces');
    const key = await call('POST', '/admin/v1/keys', {}, { body: { workspace_id: child.body.id, type: 'public', name: 'site' } });
    expect(key.status).toBe(201);
    await call('GET', '/admin/v1/keys');
    expect((await call('DELETE', '/admin/v1/keys/:keyId', { keyId: key.body.id })).status).toBe(200);
    expect((await call('DELETE', '/admin/v1/keys/:keyId', { keyId: key.body.id })).status).toBe(404);
    expect((await call('POST', '/admin/v1/backups')).status).toBe(201);

    // Identity and events, with the identity envelopes.
    const user = (await call('POST', '/v2.0/users', {}, pub)).body.id as string;
    await call('POST', '/v2.0/identify', {}, { ...pub, body: { user_id: user, aliases: [{ id: 'a@example.com', tag: 'email', priority: 0 }] } });
    await call('POST', '/v2.0/users/:user_id/aliases', { user_id: user }, { body: { id: 'crm-1', tag: 'crm' } });
    await call('GET', '/v2.0/users/:user_id/aliases', { user_id: user });
    expect((await call('GET', '/v2.0/users/:user_id/aliases', { user_id: user }, pub)).status).toBe(403);

    // Cohorts, a stream socket following them, then events that enter the user.
    const cohort = await call('POST', '/cohorts-api/v2/cohorts', {}, { body: { name: 'Viewers', query: { event: 'Pageview' }, tags: ['web'] } });
    expect(cohort.status).toBe(201);
    const offline = await call('POST', '/cohorts-api/v2/cohorts', {}, { body: { name: 'Offline', query: { and: [{ or: [{ event: 'Pageview', frequency: { greater_than: 1 } }] }] }, segment_type: 'offline' } });
    expect(offline.status).toBe(201);
    expect((await call('POST', '/cohorts-api/v2/cohorts', {}, { body: { name: 'Bad', query: { event: 'Pageview', during: { the_last: 3 } } } })).status).toBe(400);

    const frames: unknown[] = [];
    const socket = new WebSocket(`${service.url.replace('http', 'ws')}/reactions-api/v1/stream`, { headers: { 'X-API-Key': service.keys.private_key } });
    let upgradeStatus: number | undefined;
    await new Promise<void>((resolve, reject) => {
      socket.once('upgrade', (response) => (upgradeStatus = response.statusCode));
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    socket.on('message', (data) => frames.push(JSON.parse(String(data))));
    try {
      const reaction = await call('POST', '/reactions-api/v1/reactions', {}, { body: { name: 'Hook', cohort_id: cohort.body.id, trigger: 'on_entry', action: { type: 'webhook', url: 'http://127.0.0.1:9/hook' } } });
      expect(reaction.status).toBe(201);
      const tracked = await call('POST', '/v2.0/events', {}, { ...pub, body: { user_id: user, name: 'Pageview', properties: { path: '/' } } });
      expect(tracked.status).toBe(200);
      expect((await call('POST', '/v2.0/events', {}, { ...pub, body: { user_id: user, name: 'Pageview', properties: { path: 1 } } })).status).toBe(400);
      await waitUntil(() => frames.length >= 1, 'the entry on the stream');
      // The socket's frames are what its documented 101 answer describes.
      check('GET', '/reactions-api/v1/stream', upgradeStatus ?? 0, frames[0], 'application/json');
      expect(frames[0]).toMatchObject({ kind: 'entered', user_id: user });

      await call('GET', '/v2.0/events', {}, { ...pub, query: `?user_id=${user}` });
      expect((await call('GET', '/v2.0/events', {}, { ...pub, query: `?user_id=${randomUUID()}` })).status).toBe(400);
      expect((await call('GET', '/v2.0/events', {}, { ...pub, query: `?user_id=${user}&from=yesterday` })).status).toBe(400);

      await call('GET', '/cohorts-api/v2/cohorts');
      await call('GET', '/cohorts-api/v2/cohorts/:cohortId', { cohortId: cohort.body.id });
      expect((await call('GET', '/cohorts-api/v2/cohorts/:cohortId', { cohortId: randomUUID() })).status).toBe(404);
      await call('PATCH', '/cohorts-api/v2/cohorts/:cohortId', { cohortId: cohort.body.id }, { body: { description: 'page viewers' } });
      await call('GET', '/cohorts-api/v2/cohorts/:cohortId/series', { cohortId: cohort.body.id });
      await call('GET', '/cohorts-api/v2/cohorts/:cohortId/explain', { cohortId: offline.body.id }, { query: `?user_id=${user}` });
      expect((await call('GET', '/cohorts-api/v2/cohorts/:cohortId/explain', { cohortId: offline.body.id }, { query: `?user_id=${randomUUID()}` })).status).toBe(404);
      await call('GET', '/cohorts-api/v2/users/:userId/cohorts', { userId: user });
      expect((await call('GET', '/v2.0/aliases/:tag/:id', { tag: 'email', id: 'a@example.com' })).body).toMatchObject({ platform_id: user });
      expect((await call('GET', '/v2.0/aliases/:tag/:id', { tag: 'email', id: 'nobody@example.com' })).status).toBe(404);
      const recomputed = await call('POST', '/cohorts-api/v2/cohorts/:cohortId/recompute', { cohortId: offline.body.id });
      expect([200, 202]).toContain(recomputed.status);

      await call('GET', '/reactions-api/v1/reactions');
      await call('GET', '/reactions-api/v1/reactions/:reactionId', { reactionId: reaction.body.id });
      // The webhook's port refuses: the delivery is pending, and only a failed one may be retried (409).
      await waitUntil(async () => ((await service.json<unknown[]>('GET', `/reactions-api/v1/reactions/${reaction.body.id}/deliveries`)).body.length > 0), 'a delivery');
      const deliveries = await call<{ id: string }[]>('GET', '/reactions-api/v1/reactions/:reactionId/deliveries', { reactionId: reaction.body.id }, { query: '?limit=10' });
      const deliveryId = (deliveries.body[0] as { id: string }).id;
      expect((await call('POST', '/reactions-api/v1/reactions/:reactionId/deliveries/:deliveryId/retry', { reactionId: reaction.body.id, deliveryId })).status).toBe(409);
      await call('PATCH', '/reactions-api/v1/reactions/:reactionId', { reactionId: reaction.body.id }, { body: { state: 'Disabled' } });
      expect((await call('DELETE', '/reactions-api/v1/reactions/:reactionId', { reactionId: reaction.body.id })).status).toBe(200);
    } finally {
      socket.terminate();
    }

    // Segmentation.
    const now = new Date().toISOString();
    await call('POST', '/ccs/v1/segmentation', {}, { ...pub, body: { user_id: user, events: [{ name: 'Pageview', time: now, properties: {} }] } });
    const stateless = await call('POST', '/ccs/v1/segmentation/stateless', {}, { ...pub, body: { alias: { tag: 'email', id: 'b@example.com' }, events: [{ name: 'Pageview', time: now, properties: {} }] } });
    await call('POST', '/ccs/v1/segmentation/stateless', {}, { ...pub, query: '?synchronous-validation=true', body: { user_id: user, events: [], state: stateless.body.state } });

    // Taxonomy: imports, segments one by one and in a batch, members, rows, and its own envelope.
    const imported = await call('POST', '/audience-api/v1/imports', {}, { body: { name: 'Partner', code: 'partner', relation: '3rd', kind: 'segments', identifiers: ['email'] } });
    await call('GET', '/audience-api/v1/imports');
    expect((await call('GET', '/audience-api/v1/imports', {}, { key: null })).status).toBe(401);
    await call('GET', '/audience-api/v1/imports/:importId', { importId: imported.body.id });
    const importId = imported.body.id as string;
    const segment = await call('POST', '/audience-api/v1/imports/:importId/segments', { importId }, { body: { name: 'Sports', code: 'sports', cpm: 1.5, categories: ['sport'] } });
    expect((await call('POST', '/audience-api/v1/imports/:importId/segments', { importId }, { body: { name: 'Again', code: 'sports' } })).status).toBe(409);
    await call('GET', '/audience-api/v1/imports/:importId/segments', { importId }, { query: '?page_size=1' });
    await call('PATCH', '/audience-api/v1/imports/:importId/segments', { importId }, { body: { operations: [{ operation: 'Create', name: 'News', code: 'news' }, { operation: 'Delete', code: 'nothing' }] } });
    const byId = { importId, segmentId: segment.body.id as string };
    const byCode = { importId, segmentCode: 'news' };
    await call('GET', '/audience-api/v1/imports/:importId/segments/:segmentId', byId);
    await call('PATCH', '/audience-api/v1/imports/:importId/segments/:segmentId', byId, { body: { cpm: null } });
    await call('GET', '/audience-api/v1/imports/:importId/segments/code/:segmentCode', byCode);
    await call('PATCH', '/audience-api/v1/imports/:importId/segments/code/:segmentCode', byCode, { body: { description: 'daily news' } });
    await call('POST', '/audience-api/v1/imports/:importId/segments/code/:segmentCode/members', byCode, { body: { add: [{ user_id: user }, { alias: { tag: 'email', id: 'c@example.com' } }], remove: [] } });
    await call('DELETE', '/audience-api/v1/imports/:importId/segments/code/:segmentCode', byCode);
    await call('DELETE', '/audience-api/v1/imports/:importId/segments/:segmentId', byId);
    expect((await call('GET', '/audience-api/v1/imports/:importId/segments/:segmentId', byId)).status).toBe(404);
    const connections = await call('POST', '/audience-api/v1/imports', {}, { body: { name: 'Shop', code: 'shop', relation: '2nd', kind: 'connections', identifiers: ['email'], schema: { amount: 'number' } } });
    await call('POST', '/audience-api/v1/imports/:importId/rows', { importId: connections.body.id }, { body: [{ user_id: user, time: now, properties: { amount: 3 } }] });

    // Last: a cohort named by another cannot be deleted (409); then both go.
    const named = await call('POST', '/cohorts-api/v2/cohorts', {}, { body: { name: 'Entered viewers', query: { has_entered: { segment: cohort.body.code } } } });
    expect((await call('DELETE', '/cohorts-api/v2/cohorts/:cohortId', { cohortId: cohort.body.id })).status).toBe(409);
    await call('DELETE', '/cohorts-api/v2/cohorts/:cohortId', { cohortId: named.body.id });
    expect((await call('DELETE', '/cohorts-api/v2/cohorts/:cohortId', { cohortId: cohort.body.id })).status).toBe(200);

    expect([...exercised].sort()).toEqual(Object.keys(OPERATIONS).sort());
  });
});
