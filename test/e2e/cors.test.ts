// D43 end to end on the in-process service: preflights on public and private routes, the default policies (public
// routes readable from any origin, private ones from none), `corsOrigins` narrowing public routes and opening
// private ones, and CORS headers on error responses.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/service.js';

const SHOP = 'https://shop.example';
const ADMIN = 'https://admin.example:8443';

function expectAllowed(headers: Headers, origin: string): void {
  expect(headers.get('access-control-allow-origin')).toBe(origin);
  expect(headers.get('access-control-expose-headers')).toBe('X-Request-Id, Link');
  expect(headers.get('access-control-allow-credentials')).toBeNull();
  expect(headers.get('vary')).toBe('Origin');
}

describe('CORS with the default policy', () => {
  let s: TestService;
  beforeAll(async () => {
    s = await startTestService();
  });
  afterAll(async () => {
    await s?.close();
  });

  it('a preflight on a public route is 204 with the allowed methods and headers, without a key', async () => {
    const res = await s.request('OPTIONS', '/v2.0/events', {
      key: null,
      headers: { Origin: SHOP, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type, x-api-key' },
    });
    expect(res.status).toBe(204);
    expect(await res.text()).toBe('');
    expect(res.headers.get('access-control-allow-methods')).toBe('GET, POST');
    expect(res.headers.get('access-control-allow-headers')).toBe('Content-Type, X-API-Key, X-Request-Id');
    expect(res.headers.get('access-control-max-age')).toBe('600');
    expectAllowed(res.headers, SHOP);
  });

  it('a preflight on a private route is 204 without Allow-Origin for an unlisted origin', async () => {
    const res = await s.request('OPTIONS', '/cohorts-api/v2/cohorts', { key: null, headers: { Origin: SHOP } });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-methods')).toBe('GET, POST');
    expect(res.headers.get('access-control-allow-headers')).toBe('Content-Type, X-API-Key, X-Request-Id');
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('public routes answer any origin, exposing X-Request-Id and Link', async () => {
    const created = await s.json<{ id: string }>('POST', '/v2.0/users', { key: s.keys.public_key, headers: { Origin: SHOP } });
    expect(created.status).toBe(200);
    expectAllowed(created.headers, SHOP);
    const other = 'http://localhost:5173';
    const tracked = await s.json('POST', '/v2.0/events', {
      key: s.keys.public_key,
      headers: { Origin: other },
      body: { name: 'Pageview', user_id: created.body.id, properties: {} },
    });
    expect(tracked.status).toBe(200);
    expectAllowed(tracked.headers, other);
    const read = await s.json('GET', `/v2.0/events?user_id=${created.body.id}`, { key: s.keys.public_key, headers: { Origin: SHOP } });
    expect(read.status).toBe(200);
    expectAllowed(read.headers, SHOP);
    const segmented = await s.json('POST', '/ccs/v1/segmentation', {
      key: s.keys.public_key,
      headers: { Origin: SHOP },
      body: { user_id: created.body.id, events: [] },
    });
    expect(segmented.status).toBe(200);
    expectAllowed(segmented.headers, SHOP);
  });

  it('an error response (401 without a key) carries the CORS headers', async () => {
    const res = await s.json<{ request_id: string; error: { code: number } }>('POST', '/v2.0/users', { key: null, headers: { Origin: SHOP } });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe(2004);
    expectAllowed(res.headers, SHOP);
    expect(res.headers.get('x-request-id')).toBe(res.body.request_id);
  });

  it('a private route gives an unlisted origin no Allow-Origin', async () => {
    const res = await s.json('GET', '/cohorts-api/v2/cohorts', { headers: { Origin: SHOP } });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    expect(res.headers.get('access-control-expose-headers')).toBeNull();
  });

  it('OPTIONS on an unknown path is the usual 404', async () => {
    const res = await s.json<{ error: { code: number } }>('OPTIONS', '/cohorts-api/v2/nothing-here', { key: null, headers: { Origin: SHOP } });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe(3000);
  });
});

describe('CORS with corsOrigins configured', () => {
  let s: TestService;
  beforeAll(async () => {
    s = await startTestService({ corsOrigins: [ADMIN] });
  });
  afterAll(async () => {
    await s?.close();
  });

  it('a public route refuses an unlisted origin and allows a listed one', async () => {
    const refused = await s.request('POST', '/v2.0/users', { key: s.keys.public_key, headers: { Origin: SHOP } });
    expect(refused.status).toBe(200);
    expect(refused.headers.get('access-control-allow-origin')).toBeNull();
    const preflight = await s.request('OPTIONS', '/v2.0/identify', { key: null, headers: { Origin: SHOP } });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
    const allowed = await s.request('POST', '/v2.0/users', { key: s.keys.public_key, headers: { Origin: ADMIN } });
    expectAllowed(allowed.headers, ADMIN);
  });

  it('a private route allows a listed origin (host compared case-insensitively), errors included', async () => {
    const preflight = await s.request('OPTIONS', '/cohorts-api/v2/cohorts', { key: null, headers: { Origin: ADMIN } });
    expect(preflight.status).toBe(204);
    expectAllowed(preflight.headers, ADMIN);
    const listed = await s.request('GET', '/cohorts-api/v2/cohorts', { headers: { Origin: 'https://ADMIN.example:8443' } });
    expect(listed.status).toBe(200);
    expectAllowed(listed.headers, 'https://ADMIN.example:8443');
    const unauthorised = await s.request('GET', '/cohorts-api/v2/cohorts', { key: null, headers: { Origin: ADMIN } });
    expect(unauthorised.status).toBe(401);
    expectAllowed(unauthorised.headers, ADMIN);
    const otherPort = await s.request('GET', '/cohorts-api/v2/cohorts', { headers: { Origin: 'https://admin.example' } });
    expect(otherPort.headers.get('access-control-allow-origin')).toBeNull();
  });
});
