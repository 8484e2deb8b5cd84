// End-to-end tests of the segmentation area (D21–D24): the stateless route (identity, events, signed state,
// visibility, synchronous and asynchronous validation, publication) and the stateful route, over a real server.

import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpServer } from '../../server/http/index.js';
import { aliasUserId } from '../../server/domain/identity/index.js';
import { readUserEvents } from '../../server/domain/events/index.js';
import {
  registerSegmentationRoutes,
  stateSecretKey,
} from '../../server/routes/segmentation/index.js';
import { STATEFUL, STATELESS, at, expectError, pageview, startSegmentationHarness, type CallOptions, type SegmentationHarness } from './support-segmentation.js';

let h: SegmentationHarness;
let keys: SegmentationHarness['keys'];
let otherOrg: SegmentationHarness['otherOrg'];
let codes: SegmentationHarness['codes'];

beforeAll(async () => {
  h = await startSegmentationHarness();
  ({ keys, otherOrg, codes } = h);
});

afterAll(async () => {
  await h?.close();
});

const call = (path: string, body: unknown, options?: CallOptions) => h.call(path, body, options);

describe('authentication (D5–D7)', () => {
  const body = () => ({ user_id: randomUUID(), events: [] });

  it('no key is 401 2004, a non-UUID 2005, an unknown key 2000', async () => {
    expectError(await call(STATELESS, body(), { key: null }), 401, 2004);
    expectError(await call(STATELESS, body(), { key: 'not-a-key' }), 401, 2005);
    expectError(await call(STATELESS, body(), { key: randomUUID() }), 401, 2000);
    expectError(await call(STATEFUL, body(), { key: null }), 401, 2004);
  });

  it('D6: public and private keys may call; the key may travel in `k`', async () => {
    expect((await call(STATELESS, body(), { key: keys.rootPublic })).status).toBe(200);
    expect((await call(STATELESS, body(), { key: keys.rootPrivate })).status).toBe(200);
    expect((await call(STATELESS, body(), { key: keys.rootPublic, keyInQuery: true })).status).toBe(200);
    expect((await call(STATEFUL, body(), { key: keys.rootPrivate, keyInQuery: true })).status).toBe(200);
  });

  it('D7: a private key over plain HTTP behind a trusted proxy is 403 2001; a public key is fine', async () => {
    const insecure = { 'X-Forwarded-Proto': 'http' };
    expectError(await call(STATELESS, body(), { key: keys.rootPrivate, headers: insecure }), 403, 2001);
    expectError(await call(STATEFUL, body(), { key: keys.rootPrivate, headers: insecure }), 403, 2001);
    expect((await call(STATELESS, body(), { key: keys.rootPublic, headers: insecure })).status).toBe(200);
  });
});

describe('body and identifier rules (D21, D22)', () => {
  it('a missing body is 400 1003; a body that is not an object is 1002', async () => {
    expectError(await call(STATELESS, undefined), 400, 1003);
    expectError(await call(STATELESS, [1, 2]), 400, 1002);
    expectError(await call(STATELESS, undefined, { raw: '{"user_id":' }), 400, 1002);
    expectError(await call(STATEFUL, undefined), 400, 1003);
  });

  it('D21: no identifier, or several, is 400 1002; null counts as absent', async () => {
    expectError(await call(STATELESS, { events: [] }), 400, 1002);
    expectError(await call(STATELESS, { user_id: null, alias: null, aliases: null, events: [] }), 400, 1002);
    expectError(await call(STATELESS, { user_id: randomUUID(), alias: { tag: 't', id: 'x' }, events: [] }), 400, 1002);
    expectError(
      await call(STATELESS, { alias: { tag: 't', id: 'x' }, aliases: [{ tag: 't', id: 'x', priority: 0 }], events: [] }),
      400,
      1002,
    );
    expectError(await call(STATEFUL, { events: [] }), 400, 1002);
    const user = randomUUID();
    const ok = await call(STATELESS, { user_id: user, alias: null, aliases: null, events: [], state: null });
    expect(ok.status).toBe(200);
    expect(ok.body.user_id).toBe(user);
  });

  it('D21: malformed identifiers are 400 1002 naming the field', async () => {
    const bad = [
      [{ user_id: 'nope' }, 'user_id'],
      [{ alias: { tag: 't' } }, 'alias.id'],
      [{ alias: 'x' }, 'alias'],
      [{ aliases: [] }, 'aliases'],
      [{ aliases: [{ tag: 't', id: 'x' }] }, 'aliases[0].priority'],
    ] as const;
    for (const [body, path] of bad) {
      const response = await call(STATELESS, { ...body, events: [] });
      expectError(response, 400, 1002);
      expect(response.body.error.cause.startsWith(path)).toBe(true);
    }
  });

  it('D22: an unknown alias resolves to the same UUID v5 every time and writes nothing', async () => {
    const alias = { tag: 'email', id: `${randomUUID()}@example.com` };
    const first = await call(STATELESS, { alias, events: [] });
    const second = await call(STATELESS, { alias, events: [] }, { key: keys.childPublic });
    expect(first.status).toBe(200);
    expect(first.body.user_id).toBe(aliasUserId(keys.org, alias.tag, alias.id));
    expect(second.body.user_id).toBe(first.body.user_id);
    expect(await h.services.identity.findAliasUser(keys.org, alias)).toBeUndefined();
    // Another organization derives another user from the same alias.
    const other = await call(STATELESS, { alias, events: [] }, { key: otherOrg.key });
    expect(other.body.user_id).toBe(aliasUserId(otherOrg.org, alias.tag, alias.id));
    expect(other.body.user_id).not.toBe(first.body.user_id);
  });

  it('D22: with `aliases` none known, the lowest priority number decides the derived user', async () => {
    const low = { tag: 'crm', id: randomUUID(), priority: 1 };
    const high = { tag: 'cookie', id: randomUUID(), priority: 5 };
    const response = await call(STATELESS, { aliases: [high, low], events: [] });
    expect(response.body.user_id).toBe(aliasUserId(keys.org, low.tag, low.id));
  });

  it('D22: a known alias resolves to its user (alone or among aliases)', async () => {
    const user = randomUUID();
    const known = { tag: 'crm', id: randomUUID(), priority: 3 };
    await h.services.identity.identify(keys.org, user, [known]);
    expect((await call(STATELESS, { alias: { tag: known.tag, id: known.id }, events: [] })).body.user_id).toBe(user);
    const unknown = { tag: 'cookie', id: randomUUID(), priority: 0 };
    expect((await call(STATELESS, { aliases: [unknown, known], events: [] })).body.user_id).toBe(user);
  });
});

describe('events (D21)', () => {
  it('0 and 10 events are fine; 11 is 400 1002; absent or null events count as none', async () => {
    const none = await call(STATELESS, { user_id: randomUUID(), events: [] });
    expect(none.status).toBe(200);
    expect(none.body.state.cohorts).toEqual([]);
    const ten = await call(STATELESS, { user_id: randomUUID(), events: Array.from({ length: 10 }, () => pageview()) });
    expect(ten.status).toBe(200);
    expect(ten.body.state.cohorts).toContain(String(codes.pageviews3));
    const eleven = await call(STATELESS, { user_id: randomUUID(), events: Array.from({ length: 11 }, () => pageview()) });
    expectError(eleven, 400, 1002);
    expect(eleven.body.error.cause.startsWith('events')).toBe(true);
    expect((await call(STATELESS, { user_id: randomUUID() })).status).toBe(200);
    expect((await call(STATELESS, { user_id: randomUUID(), events: null })).status).toBe(200);
    expectError(await call(STATELESS, { user_id: randomUUID(), events: {} }), 400, 1002);
  });

  it('event fields: name and time required, properties an object, ids UUIDs or null; causes name the path', async () => {
    const user = randomUUID();
    const cases = [
      [[{ time: at(), properties: {} }], 'events[0].name'],
      [[pageview(), { name: 'Pageview', properties: {} }], 'events[1].time'],
      [[{ name: 'Pageview', time: 'yesterday' }], 'events[0].time'],
      [[{ name: 'Page view', time: at() }], 'events[0].name'],
      [[{ name: 'Pageview', time: at(), properties: [] }], 'events[0].properties'],
      [[{ name: 'Pageview', time: at(), properties: { Bad: 1 } }], 'events[0].properties.Bad'],
      [[{ name: 'Pageview', time: at(), session_id: 'abc' }], 'events[0].session_id'],
      [[{ name: 'Pageview', time: at(), view_id: 42 }], 'events[0].view_id'],
      [[pageview(), pageview(), 'x'], 'events[2]'],
      [[{ name: 'Pageview', time: new Date(Date.now() + 3_600_000).toISOString() }], 'events[0].time'],
    ] as const;
    for (const [events, path] of cases) {
      const response = await call(STATELESS, { user_id: user, events });
      expectError(response, 400, 1002);
      expect(response.body.error.cause.startsWith(path)).toBe(true);
    }
    // Optional fields: properties default to {}, ids may be null.
    const ok = await call(STATELESS, {
      user_id: user,
      events: [{ name: 'Pageview', time: at(), properties: null, view_id: null, session_id: null }, { name: 'Pageview', time: at() }],
    });
    expect(ok.status).toBe(200);
  });
});

describe('signed state (D23)', () => {
  it('state round trips: membership appears at the 3rd Pageview across calls, with its entry time', async () => {
    const user = randomUUID();
    const first = await call(STATELESS, { user_id: user, events: [pageview()] });
    expect(first.status).toBe(200);
    expect(first.body.user_id).toBe(user);
    expect(first.body.state.cohorts).not.toContain(String(codes.pageviews3));
    expect(first.body.state.external_state[String(codes.pageviews3)]).toBeUndefined();
    const second = await call(STATELESS, { user_id: user, events: [pageview()], state: first.body.state });
    expect(second.body.state.cohorts).not.toContain(String(codes.pageviews3));
    const third = pageview();
    const thirdCall = await call(STATELESS, { user_id: user, events: [third], state: second.body.state });
    expect(thirdCall.status).toBe(200);
    expect(thirdCall.body.state.cohorts).toContain(String(codes.pageviews3));
    expect(thirdCall.body.state.external_state[String(codes.pageviews3)]).toEqual({ entered_at: third.time });
    // The entry time is kept by later calls.
    const fourth = await call(STATELESS, { user_id: user, events: [pageview()], state: thirdCall.body.state });
    expect(fourth.body.state.external_state[String(codes.pageviews3)]).toEqual({ entered_at: third.time });
    // No state: a fresh user state, whatever the same user did before (nothing is read from storage, D24 rule 2).
    const fresh = await call(STATELESS, { user_id: user, events: [pageview()] });
    expect(fresh.body.state.cohorts).not.toContain(String(codes.pageviews3));
    // Cohort codes are strings sorted numerically (visible ones only).
    const codesOut: string[] = fourth.body.state.cohorts;
    expect(codesOut.every((code) => typeof code === 'string')).toBe(true);
    expect([...codesOut].map(Number)).toEqual([...codesOut].map(Number).sort((a, b) => a - b));
  });

  it('a this_session cohort follows the session carried in the state', async () => {
    const user = randomUUID();
    const session = randomUUID();
    const click = await call(STATELESS, { user_id: user, events: [{ name: 'Click', time: at(), session_id: session }] });
    expect(click.body.state.cohorts).toContain(String(codes.clickSession));
    const sameSession = await call(STATELESS, {
      user_id: user,
      events: [pageview({ session_id: session })],
      state: click.body.state,
    });
    expect(sameSession.body.state.cohorts).toContain(String(codes.clickSession));
    const nextSession = await call(STATELESS, {
      user_id: user,
      events: [pageview({ session_id: randomUUID() })],
      state: sameSession.body.state,
    });
    expect(nextSession.body.state.cohorts).not.toContain(String(codes.clickSession));
    expect(nextSession.body.state.external_state[String(codes.clickSession)]).toBeUndefined();
  });

  it('a modified, truncated, foreign or malformed state is 400 1002 (D42)', async () => {
    const user = randomUUID();
    const good = (await call(STATELESS, { user_id: user, events: [pageview(), pageview(), pageview()] })).body.state;
    expect(good.cohorts).toContain(String(codes.pageviews3));
    const withInternal = (internal: unknown) => ({ ...good, internal_state: internal });
    const sealed = Buffer.from(good.internal_state.c, 'base64');
    /** The state with one bit of byte `at` flipped: in the IV, the ciphertext or the tag. */
    const flippedAt = (at: number) => {
      const bytes = Buffer.from(sealed);
      bytes[at] = (bytes[at] as number) ^ 0x01;
      return withInternal({ ...good.internal_state, c: bytes.toString('base64') });
    };
    const truncated = withInternal({ ...good.internal_state, c: sealed.subarray(0, sealed.length - 1).toString('base64') });
    const short = withInternal({ ...good.internal_state, c: sealed.subarray(0, 12).toString('base64') });
    const version = withInternal({ ...good.internal_state, v: 3 });
    const otherOrgState = (await call(STATELESS, { user_id: user, events: [pageview()] }, { key: otherOrg.key })).body.state;
    const otherUserState = (await call(STATELESS, { user_id: randomUUID(), events: [pageview()] })).body.state;

    const refused = [flippedAt(0), flippedAt(11), flippedAt(12), flippedAt(Math.floor(sealed.length / 2)), flippedAt(sealed.length - 1)];
    refused.push(truncated, short, version, otherOrgState, otherUserState, withInternal('x'), withInternal(null), withInternal({ v: 2 }));
    for (const state of [...refused, 'x']) {
      expectError(await call(STATELESS, { user_id: user, events: [pageview()], state }), 400, 1002);
    }
    // Sent with a key of another organization, the state is refused too.
    expectError(await call(STATELESS, { user_id: user, events: [], state: good }, { key: otherOrg.key }), 400, 1002);
    // The untouched state still works, also with no events (it answers the memberships it holds).
    const again = await call(STATELESS, { user_id: user, events: [], state: good });
    expect(again.status).toBe(200);
    expect(again.body.state.cohorts).toContain(String(codes.pageviews3));
  });
});

describe('internal_state reveals nothing (D42)', () => {
  it('carries no cohort code or entry time, readable or decoded, not even of cohorts the key cannot see', async () => {
    const user = randomUUID();
    // The root's key does not see the child workspace's cohort the user is also in (D9).
    const answer = await call(STATELESS, { user_id: user, events: [pageview(), pageview(), pageview()] });
    expect(answer.status).toBe(200);
    const { internal_state: internal, cohorts, external_state: external } = answer.body.state;
    expect(cohorts).toEqual([String(codes.pageviews3)]);
    expect(Object.keys(internal).sort()).toEqual(['c', 'v']);
    expect(internal.v).toBe(2);
    const entered = String(Date.parse(external[String(codes.pageviews3)].entered_at));
    const sealed = Buffer.from(internal.c, 'base64');
    const readings = [JSON.stringify(internal), sealed.toString('latin1'), sealed.toString('utf8'), sealed.toString('hex')];
    for (const text of readings) {
      for (const code of [codes.pageviews3, codes.childPageview]) {
        for (const shape of [`"${code}":`, `[${code},`]) expect(text).not.toContain(shape);
      }
      expect(text).not.toContain(entered);
    }
    // A random 96-bit IV per state: the same state sealed twice differs.
    const resealed = (await call(STATELESS, { user_id: user, events: [], state: answer.body.state })).body.state.internal_state;
    expect(resealed.c).not.toBe(internal.c);
    expect(Buffer.from(resealed.c, 'base64').subarray(0, 12).equals(sealed.subarray(0, 12))).toBe(false);
  });

  it('round trips across a restart of the service: the key is kept per organization, not per process', async () => {
    const { startTestService } = await import('../support/service.js');
    let service = await startTestService();
    try {
      const cohort = await service.json<{ code: number }>('POST', '/cohorts-api/v2/cohorts', {
        body: { name: '3 pageviews', query: { event: 'Pageview', frequency: { greater_than_or_equal_to: 3 } } },
      });
      expect(cohort.status).toBe(201);
      const stateless = (state: unknown, events: unknown[]) =>
        service.json<any>('POST', STATELESS, { key: service.keys.public_key, body: { user_id: user, events, ...(state === undefined ? {} : { state }) } });
      const user = randomUUID();
      const before = await stateless(undefined, [pageview(), pageview()]);
      expect(before.body.state.cohorts).toEqual([]);
      service = await service.restart();
      const after = await stateless(before.body.state, [pageview()]);
      expect(after.status).toBe(200);
      // The third Pageview counts the two the state carried: it was decrypted with the same key after the restart.
      expect(after.body.state.cohorts).toEqual([String(cohort.body.code)]);
    } finally {
      await service.close();
    }
  });

  it('still reads a version-1 (D23, HMAC-signed) state handed out before, and refuses a modified one', async () => {
    const { createHmac } = await import('node:crypto');
    const { encodeState, newUserState } = await import('../../engine/index.js');
    const user = randomUUID();
    expect((await call(STATELESS, { user_id: user, events: [] })).status).toBe(200); // the secret exists from here on
    const secret = Buffer.from((await h.store.get(stateSecretKey(keys.org))) as string, 'hex');
    const bytes = Buffer.from(encodeState(newUserState()));
    const hmac = createHmac('sha256', secret);
    for (const part of ['audience-state:1', keys.org, user, '[]']) hmac.update(`${Buffer.byteLength(part)}:`).update(part);
    const v1 = { v: 1, s: bytes.toString('base64'), e: {}, sig: hmac.update(bytes).digest('hex') };
    const accepted = await call(STATELESS, { user_id: user, events: [pageview()], state: { internal_state: v1 } });
    expect(accepted.status).toBe(200);
    expect(accepted.body.state.internal_state.v).toBe(2);
    const forged = { ...v1, sig: (v1.sig[0] === '0' ? '1' : '0') + v1.sig.slice(1) };
    expectError(await call(STATELESS, { user_id: user, events: [], state: { internal_state: forged } }), 400, 1002);
  });
});

describe('compact state (D23, D42): stored formats stay readable', () => {
  it('reads a v2 state sealed with JSON entry times and a format-1 engine state (every slot written)', async () => {
    const { createCipheriv, hkdfSync, randomBytes } = await import('node:crypto');
    const { pack } = await import('msgpackr');
    const user = randomUUID();
    expect((await call(STATELESS, { user_id: user, events: [] })).status).toBe(200); // the secret exists from here on
    const secret = Buffer.from((await h.store.get(stateSecretKey(keys.org))) as string, 'hex');
    const key = Buffer.from(hkdfSync('sha256', secret, keys.org, 'audience internal_state AES-256-GCM v2', 32));
    // A member of "3 pageviews" since `entered`, as states sealed before the compact formats carry it.
    const entered = Date.parse(at()) - 60_000;
    const engine = pack([1, 3, entered, null, 0, entered, 0, null, 0, entered, [codes.pageviews3], [], [], []]);
    const json = Buffer.from(JSON.stringify([[codes.pageviews3, entered]]));
    const length = Buffer.alloc(4);
    length.writeUInt32BE(json.length);
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    const aad = ['audience-state:2', keys.org, user].map((part) => `${Buffer.byteLength(part)}:${part}`).join('');
    cipher.setAAD(Buffer.from(aad));
    const c = Buffer.concat([iv, cipher.update(length), cipher.update(json), cipher.update(engine), cipher.final(), cipher.getAuthTag()]);
    const answer = await call(STATELESS, { user_id: user, events: [], state: { internal_state: { v: 2, c: c.toString('base64') } } });
    expect(answer.status).toBe(200);
    expect(answer.body.state.cohorts).toEqual([String(codes.pageviews3)]);
    expect(answer.body.state.external_state[String(codes.pageviews3)].entered_at).toBe(new Date(entered).toISOString());
    // Sealed again in the compact form, the entry time is kept exactly.
    const again = await call(STATELESS, { user_id: user, events: [], state: answer.body.state });
    expect(again.body.state.external_state[String(codes.pageviews3)].entered_at).toBe(new Date(entered).toISOString());
    expect(again.body.state.internal_state.c.length).toBeLessThan(answer.body.state.internal_state.c.length + 200);
  });

  it('a state carries only what the user touched: small after a few events, entry times exact over calls', async () => {
    const user = randomUUID();
    const first = await call(STATELESS, { user_id: user, events: [pageview(), pageview(), pageview()] });
    expect(first.body.state.cohorts).toEqual([String(codes.pageviews3)]);
    const enteredAt = first.body.state.external_state[String(codes.pageviews3)].entered_at;
    let state = first.body.state;
    for (let i = 0; i < 3; i++) state = (await call(STATELESS, { user_id: user, events: [pageview()], state })).body.state;
    expect(state.external_state[String(codes.pageviews3)].entered_at).toBe(enteredAt);
    expect(Buffer.from(state.internal_state.c, 'base64').length).toBeLessThan(300);
  });
});

describe('state secret (D23)', () => {
  it('is persisted under m!state-secret!{org}: a server with a cold cache accepts an earlier state', async () => {
    const user = randomUUID();
    const state = (await call(STATELESS, { user_id: user, events: [pageview(), pageview()] })).body.state;
    expect(typeof (await h.store.get(stateSecretKey(keys.org)))).toBe('string');
    const http = createHttpServer({ host: '127.0.0.1', port: 0, log: () => undefined });
    registerSegmentationRoutes(http, h.services, { log: () => undefined });
    const { url } = await http.listen();
    try {
      const response = await fetch(`${url}${STATELESS}?k=${keys.rootPublic}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ user_id: user, events: [pageview()], state }),
      });
      expect(response.status).toBe(200);
      const body = (await response.json()) as { state: { cohorts: string[] } };
      expect(body.state.cohorts).toContain(String(codes.pageviews3));
    } finally {
      await http.close();
    }
  });
});

describe('visibility of cohorts (D9, D23)', () => {
  it('a child workspace cohort is hidden from a workspace-access key of the parent', async () => {
    const events = [pageview(), pageview(), pageview()];
    const user = randomUUID();
    const parentView = await call(STATELESS, { user_id: user, events }, { key: keys.rootPublic });
    expect(parentView.body.state.cohorts).toContain(String(codes.pageviews3));
    expect(parentView.body.state.cohorts).not.toContain(String(codes.childPageview));
    expect(parentView.body.state.external_state[String(codes.childPageview)]).toBeUndefined();

    const descendants = await call(STATELESS, { user_id: user, events }, { key: keys.rootPrivate });
    expect(descendants.body.state.cohorts).toEqual(
      [codes.pageviews3, codes.childPageview].sort((a, b) => a - b).map(String),
    );
    // A key of the child sees its own cohorts and its ancestors'.
    const childView = await call(STATELESS, { user_id: user, events }, { key: keys.childPublic });
    expect(childView.body.state.cohorts).toContain(String(codes.childPageview));
    expect(childView.body.state.cohorts).toContain(String(codes.pageviews3));
    // The hidden membership is still carried in the state: the child key sees it when passing the parent's state.
    const carried = await call(STATELESS, { user_id: user, events: [], state: parentView.body.state }, { key: keys.childPublic });
    expect(carried.body.state.cohorts).toContain(String(codes.childPageview));
  });
});

describe('validation and publication (D24)', () => {
  it('a bad switch value is 400 1000', async () => {
    for (const value of ['yes', '', '1']) {
      expectError(await call(STATELESS, { user_id: randomUUID(), events: [] }, { query: `synchronous-validation=${value}` }), 400, 1000);
    }
    const ok = await call(STATELESS, { user_id: randomUUID(), events: [] }, { query: 'synchronous-validation=false' });
    expect(ok.status).toBe(200);
  });

  it('synchronous validation: a non-conforming event is 400 1007 before anything; nothing is published', async () => {
    const org = keys.org;
    const seed = await call(STATEFUL, { user_id: randomUUID(), events: [{ name: 'Article', time: at(), properties: { words: 100 } }] });
    expect(seed.status).toBe(200);
    const before = h.segmentation.stats(org);
    const user = randomUUID();
    const response = await call(
      STATELESS,
      {
        user_id: user,
        events: [
          { name: 'Article', time: at(), properties: { words: 5 } },
          { name: 'Article', time: at(), properties: { words: 'many' } },
        ],
        state: { internal_state: 'not checked yet' },
      },
      { query: 'synchronous-validation=true' },
    );
    expectError(response, 400, 1007);
    expect(response.body.error.cause.startsWith('events[1].properties.words')).toBe(true);
    await h.segmentation.published(org);
    expect(await readUserEvents(h.store, org, user)).toEqual([]);
    expect(h.segmentation.stats(org)).toEqual(before);

    // Conforming events pass and are published after the reply.
    const good = await call(
      STATELESS,
      { user_id: user, events: [{ name: 'Article', time: at(), properties: { words: 7 } }] },
      { query: 'synchronous-validation=true' },
    );
    expect(good.status).toBe(200);
    await h.segmentation.published(org);
    const stored = await readUserEvents(h.store, org, user);
    expect(stored.map((event) => event.properties)).toEqual([{ words: 7 }]);
  });

  it('by default a bad event is dropped and counted after the reply, the good ones are published', async () => {
    const org = keys.org;
    await call(STATEFUL, { user_id: randomUUID(), events: [{ name: 'Video', time: at(), properties: { seconds: 1 } }] });
    const before = h.segmentation.stats(org);
    const user = randomUUID();
    const session = randomUUID();
    const events = [
      { name: 'Video', time: at(), properties: { seconds: 30 } },
      { name: 'Video', time: at(), properties: { seconds: 'long' } },
      pageview({ session_id: session }),
    ];
    const response = await call(STATELESS, { user_id: user, events });
    expect(response.status).toBe(200);
    await h.segmentation.published(org);
    const stored = await readUserEvents(h.store, org, user);
    expect(stored.map((event) => [event.name, event.time, event.user_id])).toEqual([
      ['Video', events[0]?.time, user],
      ['Pageview', events[2]?.time, user],
    ]);
    expect(stored[1]?.session_id).toBe(session);
    const after = h.segmentation.stats(org);
    expect(after.dropped).toBe(before.dropped + 1);
    expect(after.published).toBe(before.published + 2);
    expect(after.failed).toBe(before.failed);
  });

  it('published events join the stored history and the stateful membership', async () => {
    const alias = { tag: 'device', id: randomUUID() };
    const user = aliasUserId(keys.org, alias.tag, alias.id);
    for (let i = 0; i < 3; i++) {
      const response = await call(STATELESS, { alias, events: [pageview()] });
      expect(response.body.user_id).toBe(user);
    }
    await h.segmentation.published(keys.org);
    expect(await readUserEvents(h.store, keys.org, user)).toHaveLength(3);
    const stateful = await call(STATEFUL, { user_id: user, events: [] });
    expect(stateful.body.cohorts).toContain(String(codes.pageviews3));
  });
});

describe('stateful segmentation (D24)', () => {
  it('runs the events through ingestion and answers the visible cohorts', async () => {
    const user = randomUUID();
    const first = await call(STATEFUL, { user_id: user, events: [pageview(), pageview()] });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ user_id: user, cohorts: [] });
    const second = await call(STATEFUL, { user_id: user, events: [pageview()], state: { ignored: true } });
    expect(second.body).toEqual({ user_id: user, cohorts: [String(codes.pageviews3)] });
    expect(await readUserEvents(h.store, keys.org, user)).toHaveLength(3);
    // No events: the current memberships, per the key's visibility.
    const descendants = await call(STATEFUL, { user_id: user, events: [] }, { key: keys.rootPrivate });
    expect(descendants.body.cohorts).toEqual([codes.pageviews3, codes.childPageview].sort((a, b) => a - b).map(String));
  });

  it('an alias is resolved as for tracking: created once, then the same user', async () => {
    const alias = { tag: 'login', id: randomUUID() };
    const first = await call(STATEFUL, { alias, events: [pageview()] });
    expect(first.status).toBe(200);
    expect(await h.services.identity.findAliasUser(keys.org, alias)).toBe(first.body.user_id);
    const second = await call(STATEFUL, { aliases: [{ ...alias, priority: 1 }], events: [pageview()] });
    expect(second.body.user_id).toBe(first.body.user_id);
    expect(await readUserEvents(h.store, keys.org, first.body.user_id)).toHaveLength(2);
  });

  it('a non-conforming event is 400 1007 and nothing is stored; body errors are 1002', async () => {
    await call(STATEFUL, { user_id: randomUUID(), events: [{ name: 'Share', time: at(), properties: { count: 1 } }] });
    const user = randomUUID();
    const response = await call(STATEFUL, {
      user_id: user,
      events: [pageview(), { name: 'Share', time: at(), properties: { count: true } }],
    });
    expectError(response, 400, 1007);
    expect(response.body.error.cause.startsWith('events[1].properties.count')).toBe(true);
    expect(await readUserEvents(h.store, keys.org, user)).toEqual([]);
    expectError(await call(STATEFUL, { user_id: user, events: Array.from({ length: 11 }, () => pageview()) }), 400, 1002);
    expectError(await call(STATEFUL, { user_id: user, events: [{ name: 'Pageview' }] }), 400, 1002);
  });
});
