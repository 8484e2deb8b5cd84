// End-to-end tests of the taxonomy and imports API over a real server: auth on every route (D5–D7), the taxonomy
// envelope (D13), imports (D25), visibility (D9) and segments (D26). Loading members and rows: taxonomy-loading.test.ts.

import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UUID, V1, expectTaxonomyError, startTaxonomyHarness, type TaxonomyHarness } from './support-taxonomy.js';

let h: TaxonomyHarness;
beforeAll(async () => {
  h = await startTaxonomyHarness();
});
afterAll(async () => {
  await h?.close();
});

const expectError = expectTaxonomyError;
const createImport = (fields?: Record<string, unknown>, key?: string) => h.createImport(fields, key);
const createSegment = (importId: string, code: string, extra?: Record<string, unknown>) => h.createSegment(importId, code, extra);

describe('authentication on every taxonomy route (D5–D7, D13)', () => {
  const id = randomUUID();
  const sid = randomUUID();
  const routes: Array<[string, string, unknown]> = [
    ['POST', `${V1}/imports`, { name: 'x', code: 'x', relation: '3rd', kind: 'segments' }],
    ['GET', `${V1}/imports`, undefined],
    ['GET', `${V1}/imports/${id}`, undefined],
    ['POST', `${V1}/imports/${id}/segments`, { name: 'x', code: 'x' }],
    ['GET', `${V1}/imports/${id}/segments`, undefined],
    ['PATCH', `${V1}/imports/${id}/segments`, { operations: [] }],
    ['GET', `${V1}/imports/${id}/segments/${sid}`, undefined],
    ['PATCH', `${V1}/imports/${id}/segments/${sid}`, { name: 'y' }],
    ['DELETE', `${V1}/imports/${id}/segments/${sid}`, undefined],
    ['GET', `${V1}/imports/${id}/segments/code/x`, undefined],
    ['PATCH', `${V1}/imports/${id}/segments/code/x`, { name: 'y' }],
    ['DELETE', `${V1}/imports/${id}/segments/code/x`, undefined],
    ['POST', `${V1}/imports/${id}/segments/code/x/members`, { add: [] }],
    ['POST', `${V1}/imports/${id}/rows`, []],
  ];

  it.each(routes)('%s %s: 401 2004 / 2005 / 2000, 403 2001 for a public key and over plain HTTP', async (method, path, body) => {
    expectError(await h.call(method, path, { key: null, body }), 401, 'AuthorizationMissing', 2004);
    expectError(await h.call(method, path, { key: 'not-a-uuid', body }), 401, 'InvalidAPIKey', 2005);
    expectError(await h.call(method, path, { key: randomUUID(), body }), 401, 'InvalidAPIKey', 2000);
    expectError(await h.call(method, path, { key: h.keys.rootPublic, body }), 403, 'InsufficientAPIKey', 2001);
    const insecure = await h.call(method, path, { body, headers: { 'X-Forwarded-Proto': 'http' } });
    expectError(insecure, 403, 'InsufficientAPIKey', 2001);
  });

  it('D7: a trusted proxy forwarding HTTPS is accepted', async () => {
    const reply = await h.call('GET', `${V1}/imports`, { headers: { 'X-Forwarded-Proto': 'https' } });
    expect(reply.status).toBe(200);
  });
});

describe('imports (D25)', () => {
  it('creates an import (200), reads and lists it; the key may travel in k only; nulls count as absent', async () => {
    const created = await h.call('POST', `${V1}/imports`, {
      queryKey: h.keys.root,
      body: { name: 'Acme', code: 'acme', relation: '3rd', kind: 'segments', identifiers: null, schema: null, workspace_id: null },
    });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({
      id: expect.stringMatching(UUID),
      name: 'Acme',
      code: 'acme',
      relation: '3rd',
      kind: 'segments',
      identifiers: [],
      workspace_id: h.workspaces.root,
      created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      // D45: what Permutive clients read (Import.list / get_by_id).
      description: null,
      updated_at: created.body.created_at,
      source: { id: created.body.id, type: 'api', state: { status: 'ready' } },
    });
    const described = await h.call('POST', `${V1}/imports`, { body: { name: 'Described', code: 'described', relation: '2nd', kind: 'segments', description: 'first-party CRM' } });
    expect(described.body.description).toBe('first-party CRM');
    expect((await h.call('POST', `${V1}/imports`, { body: { name: 'Bad', code: 'bad', relation: '2nd', kind: 'segments', description: 7 } })).status).toBe(400);
    const read = await h.call('GET', `${V1}/imports/${created.body.id}`, { queryKey: h.keys.root, jsonHeaderOnly: true });
    expect(read).toEqual({ status: 200, body: created.body });
    const list = await h.call('GET', `${V1}/imports`, { jsonHeaderOnly: true });
    expect(list.status).toBe(200);
    expect(list.body).toContainEqual(created.body);
  });

  it('creates a connections import with its schema and identifiers', async () => {
    const created = await createImport({ kind: 'connections', relation: '2nd', identifiers: ['email'], schema: { plan: 'string' } });
    expect(created).toMatchObject({ kind: 'connections', relation: '2nd', identifiers: ['email'], schema: { plan: 'string' } });
  });

  it('400 InvalidRequestBody for a bad or missing body, 409 AlreadyExists for a repeated code', async () => {
    const bad = await h.call('POST', `${V1}/imports`, { body: { name: 'A', code: 'bad', relation: '1st', kind: 'segments' } });
    expectError(bad, 400, 'InvalidRequestBody', 1002);
    expectError(await h.call('POST', `${V1}/imports`, { body: { name: 'A', code: 'b', relation: '3rd', kind: 'x' } }), 400, 'InvalidRequestBody', 1002);
    expectError(await h.call('POST', `${V1}/imports`, { body: [1] }), 400, 'InvalidRequestBody', 1002);
    expectError(await h.call('POST', `${V1}/imports`, { body: '{"name":' }), 400, 'InvalidRequestBody', 1002);
    expectError(await h.call('POST', `${V1}/imports`, { jsonHeaderOnly: true }), 400, 'InvalidRequestBody', 1003);
    const wrongType = await h.call('POST', `${V1}/imports`, { body: { name: 'A', code: 'c', relation: '3rd', kind: 'segments', workspace_id: 5 } });
    expectError(wrongType, 400, 'InvalidRequestBody', 1002);
    const first = await createImport();
    const again = await h.call('POST', `${V1}/imports`, { body: { name: 'Other', code: first.code, relation: '2nd', kind: 'segments' } });
    expectError(again, 409, 'AlreadyExists', 4000);
  });

  it('404 DoesNotExist for an unknown or malformed import id', async () => {
    expectError(await h.call('GET', `${V1}/imports/${randomUUID()}`), 404, 'DoesNotExist', 3000);
    expectError(await h.call('GET', `${V1}/imports/not-an-id`), 404, 'DoesNotExist', 3000);
  });
});

describe('D9: imports are resources of a workspace', () => {
  let rootImport: any;
  let childImport: any;
  beforeAll(async () => {
    rootImport = await createImport();
    childImport = await createImport({ workspace_id: h.workspaces.child });
    await createSegment(rootImport.id, 'seg');
  });

  it('a descendants key creates in a child workspace; the child key sees its own and its ancestors\u2019 imports', async () => {
    expect(childImport.workspace_id).toBe(h.workspaces.child);
    const own = await createImport({}, h.keys.child);
    expect(own.workspace_id).toBe(h.workspaces.child);
    const list = await h.call('GET', `${V1}/imports`, { key: h.keys.child });
    const ids = (list.body as any[]).map((record) => record.id);
    expect(ids).toEqual(expect.arrayContaining([rootImport.id, childImport.id, own.id]));
    expect((await h.call('GET', `${V1}/imports/${rootImport.id}`, { key: h.keys.child })).status).toBe(200);
    expect((await h.call('GET', `${V1}/imports/${rootImport.id}/segments/code/seg`, { key: h.keys.child })).status).toBe(200);
    expect((await h.call('GET', `${V1}/imports/${rootImport.id}/segments`, { key: h.keys.child })).status).toBe(200);
  });

  it('hidden imports are 404 3000 and absent from lists (sibling; descendant without descendants access)', async () => {
    for (const key of [h.keys.sibling, h.keys.rootWorkspaceOnly]) {
      expectError(await h.call('GET', `${V1}/imports/${childImport.id}`, { key }), 404, 'DoesNotExist', 3000);
      expectError(await h.call('GET', `${V1}/imports/${childImport.id}/segments`, { key }), 404, 'DoesNotExist', 3000);
      const write = await h.call('POST', `${V1}/imports/${childImport.id}/segments`, { key, body: { name: 'x', code: 'x' } });
      expectError(write, 404, 'DoesNotExist', 3000);
      const list = await h.call('GET', `${V1}/imports`, { key });
      expect((list.body as any[]).map((record) => record.id)).not.toContain(childImport.id);
    }
    const elsewhere = await h.call('POST', `${V1}/imports`, {
      key: h.keys.child,
      body: { name: 'x', code: 'x-sib', relation: '3rd', kind: 'segments', workspace_id: h.workspaces.sibling },
    });
    expectError(elsewhere, 404, 'DoesNotExist', 3000);
    const unknown = await h.call('POST', `${V1}/imports`, {
      body: { name: 'x', code: 'x-unk', relation: '3rd', kind: 'segments', workspace_id: randomUUID() },
    });
    expectError(unknown, 404, 'DoesNotExist', 3000);
  });

  it('an ancestor\u2019s import is read-only: writes are 403 InsufficientAPIKey', async () => {
    const key = h.keys.child;
    const base = `${V1}/imports/${rootImport.id}/segments`;
    const writes: Array<[string, string, unknown]> = [
      ['POST', base, { name: 'x', code: 'x' }],
      ['PATCH', base, { operations: [] }],
      ['PATCH', `${base}/code/seg`, { name: 'y' }],
      ['DELETE', `${base}/code/seg`, undefined],
      ['POST', `${base}/code/seg/members`, { add: [] }],
      ['POST', `${V1}/imports/${rootImport.id}/rows`, []],
    ];
    for (const [method, path, body] of writes) {
      expectError(await h.call(method, path, { key, body }), 403, 'InsufficientAPIKey', 2001);
    }
    const inRoot = await h.call('POST', `${V1}/imports`, {
      key,
      body: { name: 'x', code: 'x-root', relation: '3rd', kind: 'segments', workspace_id: h.workspaces.root },
    });
    expectError(inRoot, 403, 'InsufficientAPIKey', 2001);
  });
});

describe('segments (D26)', () => {
  let acme: any;
  beforeAll(async () => {
    acme = await createImport();
  });

  it('create answers both casings; reads by id and code are snake_case only', async () => {
    const created = await h.call('POST', `${V1}/imports/${acme.id}/segments`, {
      body: { name: 'Sports', code: 'sports', description: 'fans', cpm: 1.5, categories: ['a', 'b'] },
    });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({
      id: expect.stringMatching(UUID),
      code: 'sports',
      name: 'Sports',
      description: 'fans',
      cpm: 1.5,
      categories: ['a', 'b'],
      import_id: acme.id,
      importId: acme.id,
      updated_at: expect.any(String),
      updatedAt: created.body.updated_at,
    });
    const { importId: _importId, updatedAt: _updatedAt, ...snake } = created.body;
    const byId = await h.call('GET', `${V1}/imports/${acme.id}/segments/${created.body.id}`, { jsonHeaderOnly: true });
    expect(byId).toEqual({ status: 200, body: snake });
    const byCode = await h.call('GET', `${V1}/imports/${acme.id}/segments/code/sports`, { jsonHeaderOnly: true });
    expect(byCode).toEqual({ status: 200, body: snake });
  });

  it('nulls for absent optional fields on create; 400 and 409 on bad or repeated create', async () => {
    const created = await createSegment(acme.id, 'nulls', { description: null, cpm: null, categories: null });
    expect(created).toMatchObject({ description: null, cpm: null, categories: [] });
    const path = `${V1}/imports/${acme.id}/segments`;
    expectError(await h.call('POST', path, { body: { name: 'x' } }), 400, 'InvalidRequestBody', 1002);
    expectError(await h.call('POST', path, { body: { name: 'x', code: 'neg', cpm: -1 } }), 400, 'InvalidRequestBody', 1002);
    expectError(await h.call('POST', path, { jsonHeaderOnly: true }), 400, 'InvalidRequestBody', 1003);
    expectError(await h.call('POST', path, { body: { name: 'again', code: 'nulls' } }), 409, 'AlreadyExists', 4000);
    const unknownImport = await h.call('POST', `${V1}/imports/${randomUUID()}/segments`, { body: { name: 'x', code: 'x' } });
    expectError(unknownImport, 404, 'DoesNotExist', 3000);
    const connections = await createImport({ kind: 'connections', schema: { plan: 'string' } });
    const wrongKind = await h.call('POST', `${V1}/imports/${connections.id}/segments`, { body: { name: 'x', code: 'x' } });
    expectError(wrongKind, 400, 'InvalidRequestBody', 1002);
  });

  it('PATCH by code and by id (client echoes id/code, sends null for absent fields); code never changes', async () => {
    const created = await createSegment(acme.id, 'news', { description: 'old', cpm: 2, categories: ['x'] });
    const byCode = await h.call('PATCH', `${V1}/imports/${acme.id}/segments/code/news`, {
      body: { id: created.id, code: 'news', name: 'News readers', categories: null, description: null },
    });
    expect(byCode.status).toBe(200);
    expect(byCode.body).toEqual({ ...withoutCamel(created), name: 'News readers', description: null, updated_at: expect.any(String) });
    expect(byCode.body).not.toHaveProperty('importId');
    const byId = await h.call('PATCH', `${V1}/imports/${acme.id}/segments/${created.id}`, { body: { id: created.id, cpm: 3.25 } });
    expect(byId.status).toBe(200);
    expect(byId.body).toMatchObject({ id: created.id, name: 'News readers', cpm: 3.25, categories: ['x'] });
    const rename = await h.call('PATCH', `${V1}/imports/${acme.id}/segments/code/news`, { body: { code: 'other' } });
    expectError(rename, 400, 'InvalidRequestBody', 1002);
    expectError(await h.call('PATCH', `${V1}/imports/${acme.id}/segments/code/news`, { body: { name: 7 } }), 400, 'InvalidRequestBody', 1002);
    expectError(await h.call('PATCH', `${V1}/imports/${acme.id}/segments/code/news`, { jsonHeaderOnly: true }), 400, 'InvalidRequestBody', 1003);
    expectError(await h.call('PATCH', `${V1}/imports/${acme.id}/segments/code/none`, { body: { name: 'x' } }), 404, 'DoesNotExist', 3000);
    expectError(await h.call('PATCH', `${V1}/imports/${acme.id}/segments/${randomUUID()}`, { body: { name: 'x' } }), 404, 'DoesNotExist', 3000);
  });

  it('DELETE by id and by code answer the deleted segment; it is gone afterwards', async () => {
    const one = await createSegment(acme.id, 'gone1');
    const two = await createSegment(acme.id, 'gone2');
    const byId = await h.call('DELETE', `${V1}/imports/${acme.id}/segments/${one.id}`, { jsonHeaderOnly: true });
    expect(byId).toEqual({ status: 200, body: withoutCamel(one) });
    const byCode = await h.call('DELETE', `${V1}/imports/${acme.id}/segments/code/gone2`, { jsonHeaderOnly: true });
    expect(byCode).toEqual({ status: 200, body: withoutCamel(two) });
    expectError(await h.call('GET', `${V1}/imports/${acme.id}/segments/${one.id}`), 404, 'DoesNotExist', 3000);
    expectError(await h.call('GET', `${V1}/imports/${acme.id}/segments/code/gone2`), 404, 'DoesNotExist', 3000);
    expectError(await h.call('DELETE', `${V1}/imports/${acme.id}/segments/${one.id}`), 404, 'DoesNotExist', 3000);
    expectError(await h.call('DELETE', `${V1}/imports/${acme.id}/segments/code/gone2`), 404, 'DoesNotExist', 3000);
    expectError(await h.call('DELETE', `${V1}/imports/${randomUUID()}/segments/code/gone2`), 404, 'DoesNotExist', 3000);
  });

  it('pages 250 segments in code order: 100 + 100 + 50, total_count 250, no next_token on the last page', async () => {
    const paged = await createImport();
    const operations = Array.from({ length: 250 }, (_, i) => ({ operation: 'Create', name: `S${i}`, code: `c${String(i).padStart(3, '0')}` }));
    const batch = await h.call('PATCH', `${V1}/imports/${paged.id}/segments`, { body: { operations } });
    expect(batch.status).toBe(200);
    expect((batch.body.results as any[]).every((result) => result.status === 200)).toBe(true);
    const codes: string[] = [];
    const sizes: number[] = [];
    let token: string | undefined;
    do {
      const query = token === undefined ? '' : `?pagination_token=${encodeURIComponent(token)}`;
      const page = await h.call('GET', `${V1}/imports/${paged.id}/segments${query}`, { jsonHeaderOnly: true });
      expect(page.status).toBe(200);
      expect(page.body.pagination.total_count).toBe(250);
      sizes.push(page.body.elements.length);
      codes.push(...page.body.elements.map((segment: any) => segment.code));
      token = page.body.pagination.next_token;
    } while (token !== undefined);
    expect(sizes).toEqual([100, 100, 50]);
    expect(codes).toEqual(operations.map((operation) => operation.code));
    const small = await h.call('GET', `${V1}/imports/${paged.id}/segments?page_size=7`);
    expect(small.body.elements).toHaveLength(7);
  });

  it('400 MissingParameters for a forged token or a bad page size', async () => {
    const path = `${V1}/imports/${acme.id}/segments`;
    expectError(await h.call('GET', `${path}?pagination_token=forged`), 400, 'MissingParameters', 1000);
    expectError(await h.call('GET', `${path}?page_size=abc`), 400, 'MissingParameters', 1000);
    expectError(await h.call('GET', `${path}?page_size=0`), 400, 'MissingParameters', 1000);
    expectError(await h.call('GET', `${path}?page_size=1001`), 400, 'MissingParameters', 1000);
    expectError(await h.call('GET', `${V1}/imports/${randomUUID()}/segments`), 404, 'DoesNotExist', 3000);
  });

  it('batch: per-item results in order, failures skipped, successes committed; malformed lists are 400', async () => {
    const batchImport = await createImport();
    const kept = await createSegment(batchImport.id, 'kept');
    const doomed = await createSegment(batchImport.id, 'doomed');
    const reply = await h.call('PATCH', `${V1}/imports/${batchImport.id}/segments`, {
      body: {
        operations: [
          { operation: 'Create', name: 'New', code: 'new', description: null, categories: null },
          { operation: 'Create', name: 'Dup', code: 'kept' },
          { operation: 'Update', id: kept.id, code: null, name: 'Kept renamed' },
          { operation: 'Update', code: 'new', cpm: 4 },
          { operation: 'Delete', id: doomed.id },
          { operation: 'Delete', id: randomUUID() },
          { operation: 'Rename', code: 'kept' },
        ],
      },
    });
    expect(reply.status).toBe(200);
    const results = reply.body.results as any[];
    expect(results.map((result) => [result.index, result.operation, result.status])).toEqual([
      [0, 'Create', 200],
      [1, 'Create', 409],
      [2, 'Update', 200],
      [3, 'Update', 200],
      [4, 'Delete', 200],
      [5, 'Delete', 404],
      [6, null, 400],
    ]);
    expect(results[1].error.code).toBe(4000);
    expect(results[3].segment).toMatchObject({ code: 'new', cpm: 4 });
    expect((await h.call('GET', `${V1}/imports/${batchImport.id}/segments/code/kept`)).body.name).toBe('Kept renamed');
    expect((await h.call('GET', `${V1}/imports/${batchImport.id}/segments/code/doomed`)).status).toBe(404);
    const path = `${V1}/imports/${batchImport.id}/segments`;
    expectError(await h.call('PATCH', path, { body: { operations: 'all' } }), 400, 'InvalidRequestBody', 1002);
    expectError(await h.call('PATCH', path, { body: {} }), 400, 'InvalidRequestBody', 1002);
    const tooMany = Array.from({ length: 5001 }, (_, i) => ({ operation: 'Create', name: 'x', code: `t${i}` }));
    expectError(await h.call('PATCH', path, { body: { operations: tooMany } }), 400, 'InvalidRequestBody', 1002);
    expectError(await h.call('PATCH', path, { jsonHeaderOnly: true }), 400, 'InvalidRequestBody', 1003);
  });
});

function withoutCamel(segment: Record<string, unknown>): Record<string, unknown> {
  const { importId: _importId, updatedAt: _updatedAt, ...snake } = segment;
  return snake;
}
