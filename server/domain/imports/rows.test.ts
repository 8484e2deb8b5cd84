import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../../store/memory.js';
import { openLevelStore } from '../../store/level.js';
import { tempDir } from '../../../test/support/processes.js';
import { Imports } from './index.js';
import type { ResolveUser } from './index.js';

const resolve: ResolveUser = async (refs, write) => write(refs.map((ref) => ('user_id' in ref ? ref.user_id : `u-${ref.alias.id}`)), []);
const NOW = Date.UTC(2024, 5, 1, 12);

async function setup() {
  let next = 0;
  const imports = Imports.open(new MemoryStore(), { newId: () => `id-${++next}`, now: () => NOW });
  const crm = await imports.createImport('org1', 'ws1', {
    name: 'CRM',
    code: 'crm',
    relation: '2nd',
    kind: 'connections',
    identifiers: ['email'],
    schema: { plan: 'string', seats: 'number', active: 'boolean', renewed: 'date', tags: 'list' },
  });
  return { imports, crm };
}

describe('connections rows (D27)', () => {
  it('loads rows checked against the schema; time defaults to now and is kept as epoch ms', async () => {
    const { imports, crm } = await setup();
    const result = await imports.loadRows('org1', crm.id, [
      { user_id: 'a', time: '2024-01-01T00:00:00Z', properties: { plan: 'pro', seats: 3, active: true, renewed: '2024-03-01', tags: ['x'] } },
      { alias: { tag: 'email', id: 'b@x' }, properties: { plan: 'free', seats: null } },
      { user_id: 'a', time: 1_700_000_000_000, properties: {} },
    ], resolve);
    expect(result).toEqual({ loaded: 3, affectedUsers: ['a', 'u-b@x'] });
    expect((await imports.contextFor('org1', 'a')).connectionRows('crm')).toEqual([
      { time: 1_700_000_000_000, properties: {} },
      { time: Date.UTC(2024, 0, 1), properties: { plan: 'pro', seats: 3, active: true, renewed: '2024-03-01', tags: ['x'] } },
    ]);
    expect((await imports.contextFor('org1', 'u-b@x')).connectionRows('crm')).toEqual([{ time: NOW, properties: { plan: 'free' } }]);
  });

  it('re-loading a row id replaces the row (resume-safe), also when it moves to another user', async () => {
    const { imports, crm } = await setup();
    await imports.loadRows('org1', crm.id, [{ id: 'r1', user_id: 'a', properties: { seats: 1 } }], resolve);
    const again = await imports.loadRows('org1', crm.id, [{ id: 'r1', user_id: 'a', properties: { seats: 2 } }], resolve);
    expect(again).toEqual({ loaded: 1, affectedUsers: ['a'] });
    expect((await imports.contextFor('org1', 'a')).connectionRows('crm')).toEqual([{ time: NOW, properties: { seats: 2 } }]);

    const moved = await imports.loadRows('org1', crm.id, [{ id: 'r1', user_id: 'b', properties: { seats: 3 } }], resolve);
    expect([...moved.affectedUsers].sort()).toEqual(['a', 'b']);
    expect((await imports.contextFor('org1', 'a')).connectionRows('crm')).toEqual([]);
    expect((await imports.contextFor('org1', 'b')).connectionRows('crm')).toEqual([{ time: NOW, properties: { seats: 3 } }]);
  });

  it('within one load, the last row with an id wins', async () => {
    const { imports, crm } = await setup();
    const result = await imports.loadRows('org1', crm.id, [
      { id: 'r1', user_id: 'a', properties: { plan: 'one' } },
      { id: 'r1', user_id: 'a', properties: { plan: 'two' } },
    ], resolve);
    expect(result.loaded).toBe(1);
    expect((await imports.contextFor('org1', 'a')).connectionRows('crm').map((row) => row.properties.plan)).toEqual(['two']);
  });

  it.each([
    ['a property outside the schema', [{ user_id: 'a', properties: { color: 'red' } }], /^rows\[0\]\.properties\.color/],
    ['a string for a number', [{ user_id: 'a', properties: {} }, { user_id: 'a', properties: { seats: '3' } }], /^rows\[1\]\.properties\.seats/],
    ['a number for a string', [{ user_id: 'a', properties: { plan: 3 } }], /^rows\[0\]\.properties\.plan/],
    ['a non-ISO date', [{ user_id: 'a', properties: { renewed: 'yesterday' } }], /^rows\[0\]\.properties\.renewed/],
    ['a string for a list', [{ user_id: 'a', properties: { tags: 'x' } }], /^rows\[0\]\.properties\.tags/],
    ['a string for a boolean', [{ user_id: 'a', properties: { active: 'true' } }], /^rows\[0\]\.properties\.active/],
    ['an unparseable time', [{ user_id: 'a', time: 'soon', properties: {} }], /^rows\[0\]\.time/],
    ['a row without a user', [{ properties: {} }], /^rows\[0\]/],
    ['an alias tag outside the identifiers', [{ alias: { tag: 'phone', id: '1' }, properties: {} }], /^rows\[0\]\.alias\.tag/],
    ['rows that are not an array', { user_id: 'a' }, /^rows/],
  ])('rejects %s with 1002 naming the row and property, loading nothing', async (_name, rows, detail) => {
    const { imports, crm } = await setup();
    const error = await imports.loadRows('org1', crm.id, rows, resolve).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ status: 400, code: 1002 });
    expect((error as { detail: string }).detail).toMatch(detail);
    expect((await imports.contextFor('org1', 'a')).connectionRows('crm')).toEqual([]);
  });

  it('rejects rows for a segments import with 1002, and another organization’s import with 404 code 3000', async () => {
    const { imports, crm } = await setup();
    const acme = await imports.createImport('org1', 'ws1', { name: 'Acme', code: 'acme', relation: '3rd', kind: 'segments' });
    await expect(imports.loadRows('org1', acme.id, [], resolve)).rejects.toMatchObject({ code: 1002 });
    await expect(imports.loadRows('org2', crm.id, [], resolve)).rejects.toMatchObject({ status: 404, code: 3000 });
  });

  it('schema and row properties named __proto__, constructor or toString are names like any other (over LevelDB)', async () => {
    const dir = await tempDir('audience-import-names-');
    const store = await openLevelStore(dir.path);
    try {
      const imports = Imports.open(store, { newId: () => 'id-1', now: () => NOW });
      const schema = JSON.parse('{"__proto__": "list", "constructor": "string", "toString": "number"}') as Record<string, string>;
      const named = await imports.createImport('org1', 'ws1', { name: 'Names', code: 'names', relation: '2nd', kind: 'connections', schema });
      expect(Object.keys((await imports.getImport('org1', named.id)).schema ?? {})).toEqual(['__proto__', 'constructor', 'toString']);
      const rows = JSON.parse('[{"user_id": "a", "properties": {"__proto__": ["x"], "constructor": "c", "toString": 2}}]') as unknown[];
      await imports.loadRows('org1', named.id, rows, resolve);
      const [row] = (await imports.contextFor('org1', 'a')).connectionRows('names');
      expect(Object.getPrototypeOf(row?.properties)).toBe(Object.prototype);
      expect(JSON.stringify(row?.properties)).toBe('{"__proto__":["x"],"constructor":"c","toString":2}');
      // A name the schema lacks is outside it, whatever a plain object inherits.
      const outside = await imports.loadRows('org1', named.id, [{ user_id: 'a', properties: { hasOwnProperty: 1 } }], resolve).catch((caught: unknown) => caught);
      expect(outside).toMatchObject({ status: 400, code: 1002, detail: expect.stringMatching(/^rows\[0\]\.properties\.hasOwnProperty: not in the import's schema/) });
    } finally {
      await store.close();
      await dir.remove();
    }
  });

  it('takes an explicit now for rows without a time', async () => {
    const { imports, crm } = await setup();
    await imports.loadRows('org1', crm.id, [{ user_id: 'a', properties: {} }], resolve, 42);
    expect((await imports.contextFor('org1', 'a')).connectionRows('crm')).toEqual([{ time: 42, properties: {} }]);
  });
});
