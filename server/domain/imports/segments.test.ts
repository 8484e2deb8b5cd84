import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../../store/memory.js';
import { Imports } from './index.js';
import type { BatchResult, SegmentRecord } from './index.js';

async function setup() {
  let next = 0;
  let clock = Date.UTC(2024, 0, 1);
  const imports = Imports.open(new MemoryStore(), {
    newId: () => `id-${String(++next).padStart(4, '0')}`,
    now: () => clock,
  });
  const acme = await imports.createImport('org1', 'ws1', { name: 'Acme', code: 'acme', relation: '3rd', kind: 'segments' });
  return { imports, acme, tick: (ms: number) => (clock += ms) };
}

function ok(result: BatchResult | undefined): SegmentRecord {
  if (result === undefined || result.status !== 200 || !('segment' in result)) throw new Error('expected a success');
  return result.segment;
}

describe('imported segments (D26)', () => {
  it('creates a segment with defaults and reads it by id and by code', async () => {
    const { imports, acme } = await setup();
    const created = await imports.createSegment('org1', acme.id, { name: 'Sports fans', code: 'sports' });
    expect(created).toEqual({
      id: 'id-0002',
      code: 'sports',
      name: 'Sports fans',
      import_id: acme.id,
      description: null,
      cpm: null,
      categories: [],
      updated_at: '2024-01-01T00:00:00.000Z',
    });
    expect(await imports.getSegment('org1', acme.id, created.id)).toEqual(created);
    expect(await imports.getSegmentByCode('org1', acme.id, 'sports')).toEqual(created);
  });

  it('D1: ignores unknown top-level fields on create and update (clients echo id, import_id, updated_at)', async () => {
    const { imports, acme } = await setup();
    const created = await imports.createSegment('org1', acme.id, { name: 'A', code: 'a', cmp: 1, id: 'mine' });
    expect(created).not.toHaveProperty('cmp');
    expect(created.id).not.toBe('mine');
    const updated = await imports.updateSegment('org1', acme.id, created.id, { ...created, name: 'B', extra: true });
    expect(updated).toMatchObject({ id: created.id, code: 'a', name: 'B' });
    expect(updated).not.toHaveProperty('extra');
  });

  it('updates name, description, cpm and categories by id or by code, stamping updated_at; code never changes', async () => {
    const { imports, acme, tick } = await setup();
    const created = await imports.createSegment('org1', acme.id, { name: 'A', code: 'a', cpm: 1.5, categories: ['x'] });
    tick(60_000);
    const byCode = await imports.updateSegmentByCode('org1', acme.id, 'a', { name: 'B', description: 'd', cpm: 0 });
    expect(byCode).toMatchObject({ id: created.id, code: 'a', name: 'B', description: 'd', cpm: 0, categories: ['x'] });
    expect(byCode.updated_at).toBe('2024-01-01T00:01:00.000Z');
    const byId = await imports.updateSegment('org1', acme.id, created.id, { categories: ['y', 'z'], code: 'a' });
    expect(byId).toMatchObject({ name: 'B', categories: ['y', 'z'] });
    await expect(imports.updateSegment('org1', acme.id, created.id, { code: 'b' })).rejects.toMatchObject({ code: 1002 });
    expect(await imports.getSegmentByCode('org1', acme.id, 'a')).toEqual(byId);
  });

  it('deletes by id or by code, answering the deleted segment; it is then 404 code 3000', async () => {
    const { imports, acme } = await setup();
    const a = await imports.createSegment('org1', acme.id, { name: 'A', code: 'a' });
    const b = await imports.createSegment('org1', acme.id, { name: 'B', code: 'b' });
    expect(await imports.deleteSegment('org1', acme.id, a.id)).toEqual(a);
    expect(await imports.deleteSegmentByCode('org1', acme.id, 'b')).toEqual(b);
    await expect(imports.getSegment('org1', acme.id, a.id)).rejects.toMatchObject({ status: 404, code: 3000 });
    await expect(imports.getSegmentByCode('org1', acme.id, 'b')).rejects.toMatchObject({ status: 404, code: 3000 });
    await expect(imports.deleteSegment('org1', acme.id, a.id)).rejects.toMatchObject({ status: 404, code: 3000 });
    expect((await imports.listSegments('org1', acme.id)).pagination.total_count).toBe(0);
  });

  it('D26: a code is unique within the import (409 code 4000) and free again after a delete', async () => {
    const { imports, acme } = await setup();
    const other = await imports.createImport('org1', 'ws1', { name: 'Other', code: 'other', relation: '2nd', kind: 'segments' });
    const first = await imports.createSegment('org1', acme.id, { name: 'A', code: 'a' });
    await expect(imports.createSegment('org1', acme.id, { name: 'A2', code: 'a' })).rejects.toMatchObject({
      status: 409,
      code: 4000,
    });
    await expect(imports.createSegment('org1', other.id, { name: 'A', code: 'a' })).resolves.toMatchObject({ code: 'a' });
    await imports.deleteSegment('org1', acme.id, first.id);
    await expect(imports.createSegment('org1', acme.id, { name: 'A3', code: 'a' })).resolves.toMatchObject({ name: 'A3' });
  });

  it('pages through 250 segments in code order with an opaque token and an exact total', async () => {
    const { imports, acme } = await setup();
    const codes = Array.from({ length: 250 }, (_, index) => `seg-${String(index).padStart(3, '0')}`);
    for (const code of [...codes].reverse()) await imports.createSegment('org1', acme.id, { name: code, code });
    const seen: string[] = [];
    const totals: number[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const page = await imports.listSegments('org1', acme.id, { pageSize: 100, ...(token ? { paginationToken: token } : {}) });
      seen.push(...page.elements.map((segment) => segment.code));
      totals.push(page.pagination.total_count);
      token = page.pagination.next_token;
      pages += 1;
    } while (token !== undefined);
    expect(pages).toBe(3);
    expect(seen).toEqual(codes);
    expect(totals).toEqual([250, 250, 250]);
  });

  it('answers an empty page for an import without segments, and rejects a forged token or page size with 1000', async () => {
    const { imports, acme } = await setup();
    expect(await imports.listSegments('org1', acme.id)).toEqual({ elements: [], pagination: { total_count: 0 } });
    await expect(imports.listSegments('org1', acme.id, { paginationToken: 'not-a-token' })).rejects.toMatchObject({ code: 1000 });
    await expect(imports.listSegments('org1', acme.id, { pageSize: 0 })).rejects.toMatchObject({ code: 1000 });
  });

  it('D9: segments of another organization’s import are 404 code 3000', async () => {
    const { imports, acme } = await setup();
    const segment = await imports.createSegment('org1', acme.id, { name: 'A', code: 'a' });
    await expect(imports.getSegment('org2', acme.id, segment.id)).rejects.toMatchObject({ status: 404, code: 3000 });
    await expect(imports.listSegments('org2', acme.id)).rejects.toMatchObject({ status: 404, code: 3000 });
    await expect(imports.createSegment('org2', acme.id, { name: 'B', code: 'b' })).rejects.toMatchObject({ code: 3000 });
    await expect(imports.deleteSegmentByCode('org2', acme.id, 'a')).rejects.toMatchObject({ code: 3000 });
    expect(await imports.getSegment('org1', acme.id, segment.id)).toEqual(segment);
  });

  it('keeps segments to segments imports: a connections import answers 1002', async () => {
    const { imports } = await setup();
    const crm = await imports.createImport('org1', 'ws1', {
      name: 'CRM', code: 'crm', relation: '2nd', kind: 'connections', schema: { plan: 'string' },
    });
    await expect(imports.createSegment('org1', crm.id, { name: 'A', code: 'a' })).rejects.toMatchObject({ code: 1002 });
  });

  it.each([
    ['a missing name', { code: 'a' }, /^name/],
    ['a missing code', { name: 'A' }, /^code/],
    ['a negative cpm', { name: 'A', code: 'a', cpm: -1 }, /^cpm/],
    ['a cpm that is a string', { name: 'A', code: 'a', cpm: '2' }, /^cpm/],
    ['categories that are not strings', { name: 'A', code: 'a', categories: ['x', 2] }, /^categories\[1\]/],
  ])('D26: create rejects %s with 1002 naming the field', async (_name, body, detail) => {
    const { imports, acme } = await setup();
    const error = await imports.createSegment('org1', acme.id, body).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ status: 400, code: 1002 });
    expect((error as { detail: string }).detail).toMatch(detail);
  });

  it('an update with a bad field changes nothing', async () => {
    const { imports, acme } = await setup();
    const created = await imports.createSegment('org1', acme.id, { name: 'A', code: 'a' });
    await expect(imports.updateSegment('org1', acme.id, created.id, { name: 'B', cpm: -2 })).rejects.toMatchObject({ code: 1002 });
    await expect(imports.updateSegment('org1', acme.id, 'nope', { name: 'B' })).rejects.toMatchObject({ code: 3000 });
    expect(await imports.getSegment('org1', acme.id, created.id)).toEqual(created);
  });
});

describe('segment batches (D26)', () => {
  it('applies mixed operations in order with per-item results; failures are skipped, the rest committed', async () => {
    const { imports, acme } = await setup();
    const old = await imports.createSegment('org1', acme.id, { name: 'Old', code: 'old' });
    const results = await imports.batch('org1', acme.id, [
      { operation: 'Create', name: 'A', code: 'a', cpm: 2 },
      { operation: 'Create', name: 'A again', code: 'a' },
      { operation: 'Update', code: 'a', name: 'A renamed' },
      { operation: 'Update', code: 'missing', name: 'x' },
      { operation: 'Delete', id: old.id },
      { operation: 'Create', name: 'Bad', code: 'bad', cpm: -1 },
      { operation: 'Rename', code: 'a' },
      { operation: 'Create', name: 'Old reborn', code: 'old' },
      { operation: 'Update', id: old.id, code: 'old', name: 'gone' },
    ]);
    expect(results.map((result) => [result.index, result.operation, result.status])).toEqual([
      [0, 'Create', 200],
      [1, 'Create', 409],
      [2, 'Update', 200],
      [3, 'Update', 404],
      [4, 'Delete', 200],
      [5, 'Create', 400],
      [6, null, 400],
      [7, 'Create', 200],
      [8, 'Update', 404],
    ]);
    expect(results.map((result) => ('error' in result ? result.error.code : 0))).toEqual([0, 4000, 0, 3000, 0, 1002, 1002, 0, 3000]);
    expect(ok(results[4])).toEqual(old);
    const page = await imports.listSegments('org1', acme.id);
    expect(page.elements.map((segment) => [segment.code, segment.name, segment.cpm])).toEqual([
      ['a', 'A renamed', 2],
      ['old', 'Old reborn', null],
    ]);
    expect(page.pagination.total_count).toBe(2);
    expect(ok(results[7]).id).not.toBe(old.id);
  });

  it('rejects a list that is not an array or longer than 5000 with 1002, changing nothing', async () => {
    const { imports, acme } = await setup();
    await expect(imports.batch('org1', acme.id, { operations: [] })).rejects.toMatchObject({ code: 1002 });
    const tooMany = Array.from({ length: 5001 }, (_, index) => ({ operation: 'Create', name: 'n', code: `c${index}` }));
    await expect(imports.batch('org1', acme.id, tooMany)).rejects.toMatchObject({ code: 1002 });
    expect((await imports.listSegments('org1', acme.id)).pagination.total_count).toBe(0);
  });

  it('takes 5000 creates in one batch', async () => {
    const { imports, acme } = await setup();
    const operations = Array.from({ length: 5000 }, (_, index) => ({ operation: 'Create', name: 'n', code: `c${index}` }));
    const results = await imports.batch('org1', acme.id, operations);
    expect(results.every((result) => result.status === 200)).toBe(true);
    expect((await imports.listSegments('org1', acme.id, { pageSize: 1 })).pagination.total_count).toBe(5000);
  });
});
