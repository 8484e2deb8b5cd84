// D47: the spec's {legacy_base_url}: with a legacy port, the identity and events routes (and only those) are also
// served there, with the same keys, rules and envelopes.

import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/service.js';

let h: TestService | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('the legacy base address (D47)', () => {
  it('serves the identity and events routes with the same rules; nothing else', async () => {
    const service = (h = await startTestService({ legacyPort: 0 }));
    const legacy = service.running.legacyUrl as string;
    expect(legacy).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(legacy).not.toBe(service.url);
    const call = (method: string, path: string, key: string | null, body?: unknown) =>
      fetch(`${legacy}${path}`, { method, headers: { ...(key === null ? {} : { 'X-API-Key': key }), ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) });

    const user = randomUUID();
    const tracked = await call('POST', '/v2.0/events', service.keys.public_key, { user_id: user, name: 'Pageview', properties: {} });
    expect(tracked.status).toBe(200);
    const read = await call('GET', `/v2.0/events?user_id=${user}`, service.keys.public_key);
    expect(read.status).toBe(200);
    expect(await read.json()).toHaveLength(1);
    // The same store: the main address sees the event.
    expect((await service.json<unknown[]>('GET', `/v2.0/events?user_id=${user}`, { key: service.keys.public_key })).body).toHaveLength(1);
    const created = await call('POST', '/v2.0/users', service.keys.public_key);
    expect(created.status).toBeLessThan(300);
    expect((await call('POST', '/v2.0/identify', service.keys.public_key, { user_id: user, aliases: [{ id: 'a@x.example', tag: 'email', priority: 1 }] })).status).toBe(200);
    expect((await call('GET', `/v2.0/users/${user}/aliases`, service.keys.private_key)).status).toBe(200);

    // Same rules and envelopes: no key is the identity envelope's 401 on both addresses.
    const legacyRefusal = await call('POST', '/v2.0/events', null, { user_id: user, name: 'Pageview', properties: {} });
    const mainRefusal = await service.request('POST', '/v2.0/events', { key: null, body: { user_id: user, name: 'Pageview', properties: {} } });
    expect(legacyRefusal.status).toBe(401);
    const strip = (body: Record<string, unknown>) => JSON.stringify(body).replace(/[0-9a-f-]{36}/g, 'ID').replace(/http:\/\/127\.0\.0\.1:\d+/g, 'URL');
    expect(strip((await legacyRefusal.json()) as Record<string, unknown>)).toBe(strip((await mainRefusal.json()) as Record<string, unknown>));

    for (const [method, path] of [['GET', '/cohorts-api/v2/cohorts'], ['GET', '/metrics'], ['POST', '/ccs/v1/segmentation'], ['GET', '/admin/v1/keys'], ['GET', '/reactions-api/v1/reactions']] as const) {
      expect((await call(method, path, service.keys.private_key)).status, `${method} ${path}`).toBe(404);
    }
  });
});
