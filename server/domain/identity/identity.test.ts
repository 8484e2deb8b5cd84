// Identity: the spec's identity table and D28 (identify), aliases (D28), the user of a track (D29) and stateless
// resolution (D22), against the memory store.

import { beforeEach, describe, expect, it } from 'vitest';
import { ServiceError } from '../../errors.js';
import { Identity } from './identity.js';
import { aliasKey, userKey } from './keys.js';
import { CountingStore, dumpPrefix, sequentialIds } from '../../../test/support/identity.js';
import { aliasUserId } from './uuid.js';

const ORG = 'a0000000-0000-4000-8000-000000000001';
const OTHER_ORG = 'a0000000-0000-4000-8000-000000000002';
const U1 = 'b0000000-0000-4000-8000-000000000001';
const U2 = 'b0000000-0000-4000-8000-000000000002';
const U3 = 'b0000000-0000-4000-8000-000000000003';

const alias = (id: string, priority = 1, tag = 'email') => ({ id, tag, priority });

let store: CountingStore;
let identity: Identity;

beforeEach(() => {
  store = new CountingStore();
  identity = new Identity(store, { newId: sequentialIds(7) });
});

async function pointerOf(tag: string, id: string, org = ORG): Promise<string | undefined> {
  return (await store.get<{ user_id: string }>(aliasKey(org, tag, id)))?.user_id;
}

async function aliasIdsOf(user: string): Promise<string[]> {
  return (await identity.listAliases(ORG, user)).map((view) => `${view.tag}:${view.id}`).sort();
}

async function expectServiceError(promise: Promise<unknown>, status: number, code: number): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ServiceError);
  expect((error as ServiceError).status).toBe(status);
  expect((error as ServiceError).code).toBe(code);
}

describe('users', () => {
  it('createUser records a new user id from newId', async () => {
    const id = await identity.createUser(ORG);
    expect(id).toBe('00000007-0000-4000-8000-000000000001');
    expect(await identity.userExists(ORG, id)).toBe(true);
    expect(await store.get(userKey(ORG, id))).toEqual({ id });
  });

  it('users belong to their organization (D9)', async () => {
    const id = await identity.createUser(ORG);
    expect(await identity.userExists(OTHER_ORG, id)).toBe(false);
    expect(await identity.userExists(ORG, U1)).toBe(false);
    expect(await identity.userExists(ORG, 'not-a-uuid')).toBe(false);
  });
});

describe('identify (spec identity table, D28)', () => {
  it('all aliases new: every alias points to the given user, which is recorded', async () => {
    expect(await identity.identify(ORG, U1, [alias('a@x', 1), alias('42', 2, 'crm')])).toBe(U1);
    expect(await pointerOf('email', 'a@x')).toBe(U1);
    expect(await pointerOf('crm', '42')).toBe(U1);
    expect(await identity.userExists(ORG, U1)).toBe(true);
    expect(await aliasIdsOf(U1)).toEqual(['crm:42', 'email:a@x']);
  });

  it('all aliases already point to the user: returned unchanged, nothing written', async () => {
    await identity.identify(ORG, U1, [alias('a@x', 1), alias('b@x', 2)]);
    const before = store.batches;
    const snapshot = await dumpPrefix(store, 'a', ORG);
    expect(await identity.identify(ORG, U1, [alias('a@x', 1), alias('b@x', 2)])).toBe(U1);
    expect(store.batches).toBe(before);
    expect(await dumpPrefix(store, 'a', ORG)).toEqual(snapshot);
  });

  it('a fresh instance over the same store also writes nothing for an unchanged identify', async () => {
    await identity.identify(ORG, U1, [alias('a@x', 1)]);
    const fresh = new Identity(store, { newId: sequentialIds(8) });
    const before = store.batches;
    expect(await fresh.identify(ORG, U1, [alias('a@x', 1)])).toBe(U1);
    expect(store.batches).toBe(before);
  });

  it('aliases of different users: the lowest priority number wins and the others are re-pointed', async () => {
    await identity.identify(ORG, U1, [alias('a@x')]);
    await identity.identify(ORG, U2, [alias('b@x')]);
    expect(await identity.identify(ORG, U3, [alias('a@x', 5), alias('b@x', 1)])).toBe(U2);
    expect(await pointerOf('email', 'a@x')).toBe(U2);
    expect(await pointerOf('email', 'b@x')).toBe(U2);
    expect(await aliasIdsOf(U2)).toEqual(['email:a@x', 'email:b@x']);
    expect(await aliasIdsOf(U1)).toEqual([]);
    expect(await identity.userExists(ORG, U1)).toBe(true);
    expect(await identity.userExists(ORG, U3)).toBe(false);
  });

  it('priority ties: the first listed known alias wins (D28)', async () => {
    await identity.identify(ORG, U1, [alias('a@x')]);
    await identity.identify(ORG, U2, [alias('b@x')]);
    expect(await identity.identify(ORG, U3, [alias('b@x', 2), alias('a@x', 2)])).toBe(U2);
    expect(await pointerOf('email', 'a@x')).toBe(U2);
  });

  it('mixed known and new: the known alias wins even over a new one with a lower number (D28)', async () => {
    await identity.identify(ORG, U1, [alias('a@x')]);
    expect(await identity.identify(ORG, U2, [alias('new', 0), alias('a@x', 9)])).toBe(U1);
    expect(await pointerOf('email', 'new')).toBe(U1);
    expect(await aliasIdsOf(U1)).toEqual(['email:a@x', 'email:new']);
    expect(await identity.userExists(ORG, U2)).toBe(false);
  });

  it('mixed with several known: the known alias with the lowest number wins, every given alias moves to it', async () => {
    await identity.identify(ORG, U1, [alias('a@x')]);
    await identity.identify(ORG, U2, [alias('b@x')]);
    expect(await identity.identify(ORG, U3, [alias('new', 1), alias('a@x', 4), alias('b@x', 3)])).toBe(U2);
    expect(await aliasIdsOf(U2)).toEqual(['email:a@x', 'email:b@x', 'email:new']);
  });

  it('an empty alias list returns the user id and records the user', async () => {
    expect(await identity.identify(ORG, U1, [])).toBe(U1);
    expect(await identity.userExists(ORG, U1)).toBe(true);
    expect(await identity.listAliases(ORG, U1)).toEqual([]);
  });

  it('only alias pointers move: other keys of the losing user are untouched (history never moves, D28)', async () => {
    await identity.identify(ORG, U1, [alias('a@x')]);
    await store.batch([{ type: 'put', key: `e!${ORG}!${U1}!00000000000001`, value: { name: 'Pageview' } }]);
    await identity.identify(ORG, U2, [alias('b@x')]);
    await identity.identify(ORG, U3, [alias('a@x', 2), alias('b@x', 1)]);
    expect(await store.get(`e!${ORG}!${U1}!00000000000001`)).toEqual({ name: 'Pageview' });
    expect(await dumpPrefix(store, 'e', ORG)).toEqual({ [`e!${ORG}!${U1}!00000000000001`]: { name: 'Pageview' } });
  });

  it('an alias is (tag, id): the same id under two tags is two aliases (D28)', async () => {
    await identity.identify(ORG, U1, [alias('42', 1, 'crm')]);
    await identity.identify(ORG, U2, [alias('42', 1, 'shop')]);
    expect(await pointerOf('crm', '42')).toBe(U1);
    expect(await pointerOf('shop', '42')).toBe(U2);
  });

  it('aliases belong to the organization (D9)', async () => {
    await identity.identify(ORG, U1, [alias('a@x')]);
    expect(await identity.identify(OTHER_ORG, U2, [alias('a@x')])).toBe(U2);
    expect(await pointerOf('email', 'a@x')).toBe(U1);
    expect(await pointerOf('email', 'a@x', OTHER_ORG)).toBe(U2);
  });

  it('free-form tags and ids with separators round-trip through the keys', async () => {
    await identity.identify(ORG, U1, [alias('a!b%21c', 1, 't!%'), alias('x', 1, 'ü😀')]);
    expect((await identity.listAliases(ORG, U1)).map((view) => [view.tag, view.id]).sort()).toEqual(
      [['t!%', 'a!b%21c'], ['ü😀', 'x']].sort(),
    );
  });

  it('a user_id that is not a UUID is 400 1002', async () => {
    await expectServiceError(identity.identify(ORG, 'nope', []), 400, 1002);
  });
});

describe('aliases (D28)', () => {
  it('addAlias answers {id, tag, platform_id} and binds the alias', async () => {
    const user = await identity.createUser(ORG);
    expect(await identity.addAlias(ORG, user, { id: 'a@x', tag: 'email' })).toEqual({
      id: 'a@x',
      tag: 'email',
      platform_id: user,
    });
    expect(await pointerOf('email', 'a@x')).toBe(user);
    expect(await identity.listAliases(ORG, user)).toEqual([{ id: 'a@x', tag: 'email', platform_id: user }]);
  });

  it('addAlias of an alias that points to another user is 409 4000 and changes nothing', async () => {
    await identity.identify(ORG, U1, [alias('a@x')]);
    await expectServiceError(identity.addAlias(ORG, U2, { id: 'a@x', tag: 'email' }), 409, 4000);
    expect(await pointerOf('email', 'a@x')).toBe(U1);
    expect(await identity.userExists(ORG, U2)).toBe(false);
  });

  it('addAlias twice for the same user is idempotent', async () => {
    const user = await identity.createUser(ORG);
    await identity.addAlias(ORG, user, { id: 'a@x', tag: 'email', priority: 3 });
    const before = store.batches;
    expect(await identity.addAlias(ORG, user, { id: 'a@x', tag: 'email', priority: 3 })).toEqual({
      id: 'a@x',
      tag: 'email',
      platform_id: user,
    });
    expect(store.batches).toBe(before);
    expect(await identity.listAliases(ORG, user)).toHaveLength(1);
  });

  it('addAlias for a user never seen records the user', async () => {
    await identity.addAlias(ORG, U1, { id: 'a@x', tag: 'email' });
    expect(await identity.userExists(ORG, U1)).toBe(true);
  });

  it('listing the aliases of a user never seen is 404 3000', async () => {
    await expectServiceError(identity.listAliases(ORG, U1), 404, 3000);
    await expectServiceError(identity.listAliases(ORG, 'not-a-uuid'), 404, 3000);
    const user = await identity.createUser(ORG);
    await expectServiceError(identity.listAliases(OTHER_ORG, user), 404, 3000);
  });

  it("listing stays within the user: a neighbour's aliases are not listed", async () => {
    await identity.identify(ORG, U1, [alias('a')]);
    await identity.identify(ORG, U2, [alias('b')]);
    expect(await aliasIdsOf(U1)).toEqual(['email:a']);
    expect(await aliasIdsOf(U2)).toEqual(['email:b']);
  });
});

describe('resolveForTrack (D29)', () => {
  it('user_id: that user, created the first time only', async () => {
    expect(await identity.resolveForTrack(ORG, { user_id: U1 })).toEqual({ userId: U1, created: true });
    expect(await identity.resolveForTrack(ORG, { user_id: U1 })).toEqual({ userId: U1, created: false });
    expect(await identity.userExists(ORG, U1)).toBe(true);
  });

  it('user_id wins over aliases; new aliases are bound to it, aliases of others are left alone', async () => {
    await identity.identify(ORG, U2, [alias('known')]);
    const resolved = await identity.resolveForTrack(ORG, { user_id: U1, aliases: [alias('known', 0), alias('new', 5)] });
    expect(resolved).toEqual({ userId: U1, created: true });
    expect(await pointerOf('email', 'known')).toBe(U2);
    expect(await pointerOf('email', 'new')).toBe(U1);
  });

  it('aliases, none known: a new user (from newId) with every alias bound', async () => {
    const resolved = await identity.resolveForTrack(ORG, { aliases: [alias('a', 1), alias('b', 2)] });
    expect(resolved).toEqual({ userId: '00000007-0000-4000-8000-000000000001', created: true });
    expect(await aliasIdsOf(resolved.userId)).toEqual(['email:a', 'email:b']);
  });

  it('aliases: the user of the highest-priority known alias; unbound given aliases join it', async () => {
    await identity.identify(ORG, U1, [alias('a')]);
    await identity.identify(ORG, U2, [alias('b')]);
    const resolved = await identity.resolveForTrack(ORG, {
      aliases: [alias('new', 0), alias('a', 7), alias('b', 3)],
    });
    expect(resolved).toEqual({ userId: U2, created: false });
    expect(await pointerOf('email', 'new')).toBe(U2);
    expect(await pointerOf('email', 'a')).toBe(U1);
  });

  it('aliases all known and cached: nothing is written', async () => {
    await identity.identify(ORG, U1, [alias('a')]);
    const before = store.batches;
    expect(await identity.resolveForTrack(ORG, { aliases: [alias('a')] })).toEqual({ userId: U1, created: false });
    expect(store.batches).toBe(before);
  });

  it('a user found through its alias is known: a later track naming it by id reads nothing', async () => {
    await identity.identify(ORG, U1, [alias('a')]);
    const cold = new Identity(store, { newId: sequentialIds(8) }); // a restarted server: empty caches
    expect(await cold.resolveForTrack(ORG, { aliases: [alias('a')] })).toEqual({ userId: U1, created: false });
    const read = store.keysRead;
    expect(await cold.resolveForTrack(ORG, { user_id: U1 })).toEqual({ userId: U1, created: false });
    expect(await cold.resolveForTrack(ORG, { user_id: U1, aliases: [alias('a')] })).toEqual({ userId: U1, created: false });
    expect(store.keysRead).toBe(read);
    // A user id no alias read pointed to is still looked up (and an unknown one recorded).
    expect(await cold.resolveForTrack(ORG, { user_id: U2 })).toEqual({ userId: U2, created: true });
    expect(store.keysRead).toBe(read + 1);
  });

  it('an empty alias list without user_id is 400 1002', async () => {
    await expectServiceError(identity.resolveForTrack(ORG, { aliases: [] }), 400, 1002);
  });
});

describe('resolveStateless (D22)', () => {
  it('writes nothing, whatever the identifier', async () => {
    await identity.identify(ORG, U1, [alias('a')]);
    const before = store.batches;
    const snapshot = { a: await dumpPrefix(store, 'a', ORG), u: await dumpPrefix(store, 'u', ORG) };
    await identity.resolveStateless(ORG, { user_id: U2 });
    await identity.resolveStateless(ORG, { alias: { tag: 'email', id: 'unknown' } });
    await identity.resolveStateless(ORG, { aliases: [alias('x'), alias('y')] });
    expect(store.batches).toBe(before);
    expect({ a: await dumpPrefix(store, 'a', ORG), u: await dumpPrefix(store, 'u', ORG) }).toEqual(snapshot);
    expect(await identity.userExists(ORG, U2)).toBe(false);
  });

  it('a user_id is itself; a known alias is its user', async () => {
    await identity.identify(ORG, U1, [alias('a')]);
    expect(await identity.resolveStateless(ORG, { user_id: U2 })).toBe(U2);
    expect(await identity.resolveStateless(ORG, { alias: { tag: 'email', id: 'a' } })).toBe(U1);
  });

  it('an unknown alias is a stable UUID v5 of (organization, tag, id)', async () => {
    const first = await identity.resolveStateless(ORG, { alias: { tag: 'email', id: 'z' } });
    const again = await new Identity(new CountingStore(), { newId: sequentialIds(9) }).resolveStateless(ORG, {
      alias: { tag: 'email', id: 'z' },
    });
    expect(first).toBe(again);
    expect(first).toBe(aliasUserId(ORG, 'email', 'z'));
    expect(first).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const others = [
      await identity.resolveStateless(OTHER_ORG, { alias: { tag: 'email', id: 'z' } }),
      await identity.resolveStateless(ORG, { alias: { tag: 'crm', id: 'z' } }),
      await identity.resolveStateless(ORG, { alias: { tag: 'email', id: 'y' } }),
    ];
    expect(new Set([first, ...others]).size).toBe(4);
  });

  it('aliases: the known alias with the lowest number wins; none known gives the v5 of the top-priority one', async () => {
    await identity.identify(ORG, U1, [alias('a')]);
    await identity.identify(ORG, U2, [alias('b')]);
    expect(await identity.resolveStateless(ORG, { aliases: [alias('n', 0), alias('a', 4), alias('b', 2)] })).toBe(U2);
    expect(await identity.resolveStateless(ORG, { aliases: [alias('p', 3), alias('q', 1), alias('r', 1)] })).toBe(
      aliasUserId(ORG, 'email', 'q'),
    );
  });

  it('sees identify writes made after an earlier stateless read', async () => {
    const derived = await identity.resolveStateless(ORG, { alias: { tag: 'email', id: 'late' } });
    await identity.identify(ORG, U1, [alias('late')]);
    expect(derived).not.toBe(U1);
    expect(await identity.resolveStateless(ORG, { alias: { tag: 'email', id: 'late' } })).toBe(U1);
  });
});
