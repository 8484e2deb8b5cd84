import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../../store/memory.js';
import { Imports } from './index.js';

function setup() {
  let next = 0;
  const imports = Imports.open(new MemoryStore(), {
    newId: () => `id-${String(++next).padStart(4, '0')}`,
    now: () => Date.UTC(2024, 0, 2, 3, 4, 5),
  });
  return { imports };
}

const SEGMENTS = { name: 'Acme audiences', code: 'acme', relation: '3rd', kind: 'segments' } as const;
const CONNECTIONS = {
  name: 'Acme CRM',
  code: 'crm',
  relation: '2nd',
  kind: 'connections',
  identifiers: ['email'],
  schema: { plan: 'string', seats: 'number', active: 'boolean', renewed: 'date', tags: 'list' },
} as const;

describe('imports (D25)', () => {
  it('creates an import with every field and reads it back by id and by code', async () => {
    const { imports } = setup();
    const created = await imports.createImport('org1', 'ws1', CONNECTIONS);
    expect(created).toEqual({
      id: 'id-0001',
      name: 'Acme CRM',
      description: null,
      code: 'crm',
      relation: '2nd',
      kind: 'connections',
      identifiers: ['email'],
      schema: CONNECTIONS.schema,
      workspace_id: 'ws1',
      organization_id: 'org1',
      created_at: '2024-01-02T03:04:05.000Z',
    });
    expect(await imports.getImport('org1', created.id)).toEqual(created);
    expect(await imports.getImportByCode('org1', 'crm')).toEqual(created);
  });

  it('defaults identifiers to none and gives a segments import no schema', async () => {
    const { imports } = setup();
    const created = await imports.createImport('org1', 'ws1', SEGMENTS);
    expect(created.identifiers).toEqual([]);
    expect(created).not.toHaveProperty('schema');
  });

  it('D25: a code is unique in the organization (409 code 4000), but two organizations may share one', async () => {
    const { imports } = setup();
    await imports.createImport('org1', 'ws1', SEGMENTS);
    await expect(imports.createImport('org1', 'ws2', { ...SEGMENTS, name: 'other' })).rejects.toMatchObject({
      status: 409,
      code: 4000,
    });
    await expect(imports.createImport('org2', 'ws9', SEGMENTS)).resolves.toMatchObject({ organization_id: 'org2' });
  });

  it('D25: concurrent creates with one code let exactly one through', async () => {
    const { imports } = setup();
    const outcomes = await Promise.allSettled([1, 2, 3].map(() => imports.createImport('org1', 'ws1', SEGMENTS)));
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
    expect(await imports.listImports('org1')).toHaveLength(1);
  });

  it('D9: another organization’s import is 404 code 3000, by id and by code', async () => {
    const { imports } = setup();
    const created = await imports.createImport('org1', 'ws1', SEGMENTS);
    await expect(imports.getImport('org2', created.id)).rejects.toMatchObject({ status: 404, code: 3000 });
    await expect(imports.getImportByCode('org2', 'acme')).rejects.toMatchObject({ status: 404, code: 3000 });
    await expect(imports.getImport('org1', 'missing')).rejects.toMatchObject({ status: 404, code: 3000 });
    expect(await imports.listImports('org2')).toEqual([]);
  });

  it('lists only the organization’s imports, by code', async () => {
    const { imports } = setup();
    await imports.createImport('org1', 'ws1', { ...SEGMENTS, code: 'zeta' });
    await imports.createImport('org1', 'ws1', CONNECTIONS);
    await imports.createImport('org2', 'ws1', { ...SEGMENTS, code: 'alpha' });
    expect((await imports.listImports('org1')).map((record) => record.code)).toEqual(['crm', 'zeta']);
  });

  it.each([
    ['a missing name', { ...SEGMENTS, name: undefined }, /^name/],
    ['an empty code', { ...SEGMENTS, code: '' }, /^code/],
    ['an unknown relation', { ...SEGMENTS, relation: '1st' }, /^relation/],
    ['an unknown kind', { ...SEGMENTS, kind: 'files' }, /^kind/],
    ['identifiers that are not strings', { ...SEGMENTS, identifiers: [3] }, /^identifiers\[0\]/],
    ['a schema on a segments import', { ...SEGMENTS, schema: {} }, /^schema/],
    ['a connections import without a schema', { ...CONNECTIONS, schema: undefined }, /^schema/],
    ['a schema type that does not exist', { ...CONNECTIONS, schema: { plan: 'text' } }, /^schema\.plan/],
    ['a schema name with a dot', { ...CONNECTIONS, schema: { 'a.b': 'string' } }, /^schema\.a\.b/],
    ['a body that is not an object', [SEGMENTS], /^body/],
  ])('rejects %s with 1002 naming the field', async (_name, body, detail) => {
    const { imports } = setup();
    const error = await imports.createImport('org1', 'ws1', body).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ status: 400, code: 1002 });
    expect((error as { detail: string }).detail).toMatch(detail);
  });
});
