// The identity routes end to end (spec "Identity", D5–D7, D10, D28): create a user, identify in every scenario of
// the spec's table, list and add aliases, and each authentication and body error in the identity envelope.

import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startIdentityHarness, type HttpAnswer, type IdentityHarness } from './support-identity.js';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const INSECURE = { 'X-Forwarded-Proto': 'http' };

let h: IdentityHarness;
beforeAll(async () => {
  h = await startIdentityHarness({ trustProxy: true });
});
afterAll(async () => {
  await h?.close();
});

/** D10: the identity envelope has no `type` nor `status_code`; `status` is the reason phrase. */
function expectIdentityError(answer: HttpAnswer, status: number, code: number): void {
  expect(answer.status).toBe(status);
  const body = answer.body as { request_id: string; error: Record<string, unknown> };
  expect(body.request_id).toMatch(UUID_V4);
  expect(answer.headers['x-request-id']).toBe(body.request_id);
  expect(body.error.code).toBe(code);
  expect(typeof body.error.status).toBe('string');
  expect(typeof body.error.message).toBe('string');
  expect(body.error.docs).toMatch(new RegExp(`/errors/${status}/${code}$`));
  expect(body.error).not.toHaveProperty('type');
  expect(body.error).not.toHaveProperty('status_code');
  for (const key of Object.keys(body.error)) expect(['status', 'code', 'message', 'docs', 'cause']).toContain(key);
}

const alias = (tag: string, priority: number) => ({ id: `${tag}-${randomUUID()}`, tag, priority });

async function newUser(key = h.keys.public_key): Promise<string> {
  const answer = await h.call<{ id: string }>('POST', '/v2.0/users', { key });
  expect(answer.status).toBe(200);
  return answer.body.id;
}

async function aliasesOf(user: string): Promise<Array<{ id: string; tag: string; platform_id: string }>> {
  const answer = await h.call('GET', `/v2.0/users/${user}/aliases`);
  expect(answer.status).toBe(200);
  return answer.body;
}

describe('POST /v2.0/users', () => {
  it('creates a UUID v4 user with the public key in k and an empty JSON body (D1, D6)', async () => {
    const answer = await h.call('POST', '/v2.0/users', { key: h.keys.public_key });
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toMatch(/application\/json/);
    expect(Object.keys(answer.body)).toEqual(['id']);
    expect(answer.body.id).toMatch(UUID_V4);
    // The new user is known: its (empty) alias list reads 200, not 404.
    expect(await aliasesOf(answer.body.id)).toEqual([]);
  });

  it('accepts the private key in the X-API-Key header and ignores a body', async () => {
    const answer = await h.call('POST', '/v2.0/users', { keyIn: 'header', body: { ignored: true } });
    expect(answer.status).toBe(200);
    expect(answer.body.id).toMatch(UUID_V4);
    expect(answer.body.id).not.toBe(await newUser());
  });

  it('answers 401 2004 without a key, 2005 for a non-UUID key, 2000 for an unknown key (D5)', async () => {
    expectIdentityError(await h.call('POST', '/v2.0/users', { key: null }), 401, 2004);
    expectIdentityError(await h.call('POST', '/v2.0/users', { key: 'not-a-key' }), 401, 2005);
    const unknown = await h.call('POST', '/v2.0/users', { key: randomUUID() });
    expectIdentityError(unknown, 401, 2000);
    expect(unknown.body.error.cause).toBe('This key does not exist.');
  });

  it('refuses a private key over a non-secure transport (403 2001, D7) and accepts a public one there', async () => {
    expectIdentityError(await h.call('POST', '/v2.0/users', { headers: INSECURE }), 403, 2001);
    const publicAnswer = await h.call('POST', '/v2.0/users', { key: h.keys.public_key, headers: INSECURE });
    expect(publicAnswer.status).toBe(200);
  });
});

describe('POST /v2.0/identify (spec identity table, D28)', () => {
  it('with all aliases new, the given user wins and every alias points to it', async () => {
    const user = await newUser();
    const aliases = [alias('email', 1), alias('crm', 2)];
    const answer = await h.call('POST', '/v2.0/identify', { key: h.keys.public_key, body: { user_id: user, aliases } });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ user_id: user });
    const listed = await aliasesOf(user);
    expect(listed).toHaveLength(2);
    for (const a of aliases) expect(listed).toContainEqual({ id: a.id, tag: a.tag, platform_id: user });
  });

  it('with all aliases already pointing to the user, returns it and changes nothing', async () => {
    const user = await newUser();
    const aliases = [alias('email', 1), alias('crm', 2)];
    await h.call('POST', '/v2.0/identify', { body: { user_id: user, aliases } });
    const before = await aliasesOf(user);
    const answer = await h.call('POST', '/v2.0/identify', { body: { user_id: user, aliases } });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ user_id: user });
    expect(await aliasesOf(user)).toEqual(before);
  });

  it('with aliases of different users, the lowest priority number wins and the others are re-pointed', async () => {
    const [first, second, caller] = [await newUser(), await newUser(), await newUser()];
    const a = alias('email', 5);
    const b = alias('crm', 1);
    await h.call('POST', '/v2.0/identify', { body: { user_id: first, aliases: [a] } });
    await h.call('POST', '/v2.0/identify', { body: { user_id: second, aliases: [b] } });
    const answer = await h.call('POST', '/v2.0/identify', { body: { user_id: caller, aliases: [a, b] } });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ user_id: second });
    expect(await aliasesOf(first)).toEqual([]);
    const listed = await aliasesOf(second);
    expect(listed).toContainEqual({ id: a.id, tag: a.tag, platform_id: second });
    expect(listed).toContainEqual({ id: b.id, tag: b.tag, platform_id: second });
    expect(await aliasesOf(caller)).toEqual([]);
  });

  it('in the mixed case the known alias wins and the new ones join its user (D28)', async () => {
    const [owner, caller] = [await newUser(), await newUser()];
    const known = alias('email', 9);
    const fresh = alias('device', 1);
    await h.call('POST', '/v2.0/identify', { body: { user_id: owner, aliases: [known] } });
    const answer = await h.call('POST', '/v2.0/identify', { body: { user_id: caller, aliases: [fresh, known] } });
    expect(answer.body).toEqual({ user_id: owner });
    expect(await aliasesOf(owner)).toContainEqual({ id: fresh.id, tag: fresh.tag, platform_id: owner });
    expect(await aliasesOf(caller)).toEqual([]);
  });

  it('with an empty alias list returns the given user, recorded from then on', async () => {
    const user = randomUUID();
    expectIdentityError(await h.call('GET', `/v2.0/users/${user}/aliases`), 404, 3000);
    const answer = await h.call('POST', '/v2.0/identify', { body: { user_id: user, aliases: [] } });
    expect(answer.body).toEqual({ user_id: user });
    expect(await aliasesOf(user)).toEqual([]);
  });

  it('answers 400 1003 without a body and 1002 naming the path of a malformed one', async () => {
    expectIdentityError(await h.call('POST', '/v2.0/identify'), 400, 1003);
    expectIdentityError(await h.call('POST', '/v2.0/identify', { body: '{"user_id":' }), 400, 1002);
    const notUuid = await h.call('POST', '/v2.0/identify', { body: { user_id: 'abc', aliases: [] } });
    expectIdentityError(notUuid, 400, 1002);
    expect(notUuid.body.error.cause).toMatch(/^user_id:/);
    const noAliases = await h.call('POST', '/v2.0/identify', { body: { user_id: randomUUID() } });
    expectIdentityError(noAliases, 400, 1002);
    expect(noAliases.body.error.cause).toMatch(/^aliases:/);
    const badPriority = await h.call('POST', '/v2.0/identify', {
      body: { user_id: randomUUID(), aliases: [alias('a', 1), { id: 'x', tag: 't', priority: 1.5 }] },
    });
    expectIdentityError(badPriority, 400, 1002);
    expect(badPriority.body.error.cause).toMatch(/^aliases\[1\]\.priority:/);
  });

  it('answers 401 without a key and 403 for a private key over plain HTTP', async () => {
    const body = { user_id: randomUUID(), aliases: [] };
    expectIdentityError(await h.call('POST', '/v2.0/identify', { key: null, body }), 401, 2004);
    expectIdentityError(await h.call('POST', '/v2.0/identify', { body, headers: INSECURE }), 403, 2001);
  });
});

describe('GET /v2.0/users/{user_id}/aliases', () => {
  it('lists {id, tag, platform_id} with a private key (Content-Type on a bodiless GET, D1)', async () => {
    const user = await newUser();
    const a = alias('email', 1);
    await h.call('POST', '/v2.0/identify', { body: { user_id: user, aliases: [a] } });
    const answer = await h.call('GET', `/v2.0/users/${user}/aliases`, { headers: { 'Content-Type': 'application/json' } });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual([{ id: a.id, tag: a.tag, platform_id: user }]);
  });

  it('answers 404 3000 for a user never seen and for a path that is no UUID (D28)', async () => {
    expectIdentityError(await h.call('GET', `/v2.0/users/${randomUUID()}/aliases`), 404, 3000);
    expectIdentityError(await h.call('GET', '/v2.0/users/nobody/aliases'), 404, 3000);
  });

  it('needs a private key over a secure transport (403 2001, D6, D7) and a valid key (401)', async () => {
    const user = await newUser();
    expectIdentityError(await h.call('GET', `/v2.0/users/${user}/aliases`, { key: h.keys.public_key }), 403, 2001);
    expectIdentityError(await h.call('GET', `/v2.0/users/${user}/aliases`, { headers: INSECURE }), 403, 2001);
    expectIdentityError(await h.call('GET', `/v2.0/users/${user}/aliases`, { key: null }), 401, 2004);
    expectIdentityError(await h.call('GET', `/v2.0/users/${user}/aliases`, { key: '1234' }), 401, 2005);
    expectIdentityError(await h.call('GET', `/v2.0/users/${user}/aliases`, { key: randomUUID() }), 401, 2000);
  });
});

describe('POST /v2.0/users/{user_id}/aliases', () => {
  it('binds an alias and answers {id, tag, platform_id}; null priority counts as absent', async () => {
    const user = await newUser();
    const answer = await h.call('POST', `/v2.0/users/${user}/aliases`, { body: { id: 'u-1@example.com', tag: 'email', priority: null } });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ id: 'u-1@example.com', tag: 'email', platform_id: user });
    expect(await aliasesOf(user)).toEqual([{ id: 'u-1@example.com', tag: 'email', platform_id: user }]);
    // Adding it again to the same user changes nothing.
    const again = await h.call('POST', `/v2.0/users/${user}/aliases`, { body: { id: 'u-1@example.com', tag: 'email', priority: 3 } });
    expect(again.status).toBe(200);
    expect(await aliasesOf(user)).toHaveLength(1);
  });

  it('records a user never seen before and binds the alias to it', async () => {
    const user = randomUUID();
    const answer = await h.call('POST', `/v2.0/users/${user}/aliases`, { body: { id: 'device-1', tag: 'device' } });
    expect(answer.status).toBe(200);
    expect(await aliasesOf(user)).toEqual([{ id: 'device-1', tag: 'device', platform_id: user }]);
  });

  it('answers 409 4000 for an alias that points to another user (D28)', async () => {
    const [owner, other] = [await newUser(), await newUser()];
    const a = { id: `taken-${randomUUID()}`, tag: 'email' };
    expect((await h.call('POST', `/v2.0/users/${owner}/aliases`, { body: a })).status).toBe(200);
    expectIdentityError(await h.call('POST', `/v2.0/users/${other}/aliases`, { body: a }), 409, 4000);
    expect(await aliasesOf(other)).toEqual([]);
  });

  it('answers 400 1003 without a body and 1002 naming the field of a malformed one', async () => {
    const user = await newUser();
    expectIdentityError(await h.call('POST', `/v2.0/users/${user}/aliases`), 400, 1003);
    const noTag = await h.call('POST', `/v2.0/users/${user}/aliases`, { body: { id: 'x' } });
    expectIdentityError(noTag, 400, 1002);
    expect(noTag.body.error.cause).toMatch(/^tag:/);
    const emptyId = await h.call('POST', `/v2.0/users/${user}/aliases`, { body: { id: '', tag: 'email' } });
    expectIdentityError(emptyId, 400, 1002);
    expect(emptyId.body.error.cause).toMatch(/^id:/);
    expectIdentityError(await h.call('POST', `/v2.0/users/${user}/aliases`, { body: [1] }), 400, 1002);
  });

  it('answers 404 3000 for a path that is no UUID and 403/401 for the wrong key', async () => {
    const body = { id: 'x', tag: 'email' };
    expectIdentityError(await h.call('POST', '/v2.0/users/nobody/aliases', { body }), 404, 3000);
    const user = await newUser();
    expectIdentityError(await h.call('POST', `/v2.0/users/${user}/aliases`, { key: h.keys.public_key, body }), 403, 2001);
    expectIdentityError(await h.call('POST', `/v2.0/users/${user}/aliases`, { headers: INSECURE, body }), 403, 2001);
    expectIdentityError(await h.call('POST', `/v2.0/users/${user}/aliases`, { key: null, body }), 401, 2004);
    expect(await aliasesOf(user)).toEqual([]);
  });
});
