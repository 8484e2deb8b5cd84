import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../../store/memory.js';
import { Imports } from './index.js';
import type { ResolveUser } from './index.js';

/** user_id resolves to itself; an alias to `u-{id}`. */
const resolve: ResolveUser = async (refs, write) => write(refs.map((ref) => ('user_id' in ref ? ref.user_id : `u-${ref.alias.id}`)), []);

async function setup() {
  let next = 0;
  const removed: Array<[string, string[]]> = [];
  const imports = Imports.open(new MemoryStore(), {
    newId: () => `id-${String(++next).padStart(4, '0')}`,
    now: () => Date.UTC(2024, 0, 1),
    onMembersRemoved: (org, users) => {
      removed.push([org, [...users].sort()]);
    },
  });
  const acme = await imports.createImport('org1', 'ws1', {
    name: 'Acme', code: 'acme', relation: '3rd', kind: 'segments', identifiers: ['email'],
  });
  const sports = await imports.createSegment('org1', acme.id, { name: 'Sports', code: 'sports' });
  return { imports, acme, sports, removed };
}

describe('segment members (D27)', () => {
  it('adds and removes members idempotently, counting only actual changes', async () => {
    const { imports, acme } = await setup();
    const first = await imports.loadMembers('org1', acme.id, 'sports', { add: [{ user_id: 'a' }, { user_id: 'b' }] }, resolve);
    expect(first).toEqual({ added: 2, removed: 0, affectedUsers: ['a', 'b'] });
    const again = await imports.loadMembers('org1', acme.id, 'sports', { add: [{ user_id: 'a' }, { user_id: 'b' }] }, resolve);
    expect(again).toEqual({ added: 0, removed: 0, affectedUsers: [] });
    const mixed = await imports.loadMembers(
      'org1', acme.id, 'sports', { add: [{ user_id: 'c' }], remove: [{ user_id: 'a' }, { user_id: 'never' }] }, resolve,
    );
    expect(mixed).toEqual({ added: 1, removed: 1, affectedUsers: ['c', 'a'] });
    const ctxA = await imports.contextFor('org1', 'a');
    const ctxC = await imports.contextFor('org1', 'c');
    expect(ctxA.inImportedSegment('3rd', 'acme', 'sports')).toBe(false);
    expect(ctxC.inImportedSegment('3rd', 'acme', 'sports')).toBe(true);
  });

  it('resolves aliases through the caller’s resolver; a user in both lists ends up removed', async () => {
    const { imports, acme } = await setup();
    const result = await imports.loadMembers(
      'org1', acme.id, 'sports',
      { add: [{ alias: { tag: 'email', id: 'x@y' } }, { user_id: 'u-x@y' }], remove: [{ alias: { tag: 'email', id: 'z' } }] },
      resolve,
    );
    expect(result).toEqual({ added: 1, removed: 0, affectedUsers: ['u-x@y'] });
    const both = await imports.loadMembers(
      'org1', acme.id, 'sports', { add: [{ user_id: 'u-x@y' }], remove: [{ alias: { tag: 'email', id: 'x@y' } }] }, resolve,
    );
    expect(both).toEqual({ added: 0, removed: 1, affectedUsers: ['u-x@y'] });
  });

  it('answers 404 code 3000 for an unknown segment code or import, before resolving anyone', async () => {
    const { imports, acme } = await setup();
    let resolved = 0;
    const counting: ResolveUser = async (refs, write) => {
      resolved += refs.length;
      return resolve(refs, write);
    };
    await expect(imports.loadMembers('org1', acme.id, 'nope', { add: [{ user_id: 'a' }] }, counting)).rejects.toMatchObject({
      status: 404,
      code: 3000,
    });
    await expect(imports.loadMembers('org2', acme.id, 'sports', { add: [{ user_id: 'a' }] }, counting)).rejects.toMatchObject({
      status: 404,
      code: 3000,
    });
    expect(resolved).toBe(0);
  });

  it.each([
    ['add that is not an array', { add: { user_id: 'a' } }, /^add/],
    ['a ref with both user_id and alias', { add: [{ user_id: 'a', alias: { tag: 'email', id: 'b' } }] }, /^add\[0\]/],
    ['a ref with neither', { remove: [{}] }, /^remove\[0\]/],
    ['an alias without a tag', { add: [{ alias: { id: 'b' } }] }, /^add\[0\]\.alias\.tag/],
    ['D25: an alias tag outside the import’s identifiers', { add: [{ alias: { tag: 'phone', id: '1' } }] }, /^add\[0\]\.alias\.tag/],
  ])('rejects %s with 1002', async (_name, body, detail) => {
    const { imports, acme } = await setup();
    const error = await imports.loadMembers('org1', acme.id, 'sports', body, resolve).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ status: 400, code: 1002 });
    expect((error as { detail: string }).detail).toMatch(detail);
  });

  it('rejects members of a connections import with 1002', async () => {
    const { imports } = await setup();
    const crm = await imports.createImport('org1', 'ws1', {
      name: 'CRM', code: 'crm', relation: '2nd', kind: 'connections', schema: {},
    });
    await expect(imports.loadMembers('org1', crm.id, 'sports', { add: [{ user_id: 'a' }] }, resolve)).rejects.toMatchObject({
      code: 1002,
    });
  });

  it('deleting a segment removes its memberships and reports the users; a re-created code starts empty', async () => {
    const { imports, acme, sports, removed } = await setup();
    await imports.createSegment('org1', acme.id, { name: 'News', code: 'news' });
    await imports.loadMembers('org1', acme.id, 'sports', { add: [{ user_id: 'a' }, { user_id: 'b' }] }, resolve);
    await imports.loadMembers('org1', acme.id, 'news', { add: [{ user_id: 'a' }] }, resolve);
    expect((await imports.contextFor('org1', 'a')).inImportedSegment('3rd', 'acme', 'sports')).toBe(true);

    await imports.deleteSegment('org1', acme.id, sports.id);
    expect(removed).toEqual([['org1', ['a', 'b']]]);
    const ctx = await imports.contextFor('org1', 'a');
    expect(ctx.inImportedSegment('3rd', 'acme', 'sports')).toBe(false);
    expect(ctx.inImportedSegment('3rd', 'acme', 'news')).toBe(true);

    await imports.createSegment('org1', acme.id, { name: 'Sports again', code: 'sports' });
    expect((await imports.contextFor('org1', 'b')).inImportedSegment('3rd', 'acme', 'sports')).toBe(false);
    const readd = await imports.loadMembers('org1', acme.id, 'sports', { add: [{ user_id: 'b' }] }, resolve);
    expect(readd.added).toBe(1);
  });

  it('a batch that deletes and re-creates a code leaves the new segment without the old members', async () => {
    const { imports, acme, sports, removed } = await setup();
    await imports.loadMembers('org1', acme.id, 'sports', { add: [{ user_id: 'a' }] }, resolve);
    const results = await imports.batch('org1', acme.id, [
      { operation: 'Delete', id: sports.id },
      { operation: 'Create', name: 'Sports 2', code: 'sports' },
    ]);
    expect(results.map((result) => result.status)).toEqual([200, 200]);
    expect(removed).toEqual([['org1', ['a']]]);
    expect((await imports.contextFor('org1', 'a')).inImportedSegment('3rd', 'acme', 'sports')).toBe(false);
  });

  it('removes the memberships of a segment with more members than one delete chunk', async () => {
    const { imports, acme, sports, removed } = await setup();
    const add = Array.from({ length: 2500 }, (_, index) => ({ user_id: `user-${index}` }));
    expect((await imports.loadMembers('org1', acme.id, 'sports', { add }, resolve)).added).toBe(2500);
    await imports.deleteSegment('org1', acme.id, sports.id);
    expect(removed[0]?.[1]).toHaveLength(2500);
    expect((await imports.contextFor('org1', 'user-2499')).inImportedSegment('3rd', 'acme', 'sports')).toBe(false);
  });
});
