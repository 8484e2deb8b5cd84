// D43 in the HTTP layer: preflights, the public/private policies, --cors-origins narrowing, headers on errors.

import { afterEach, describe, expect, it } from 'vitest';
import { ServiceError } from '../errors.js';
import { CorsRules, parseCorsOrigin } from './cors.js';
import { send, startServer, type RunningServer } from '../../test/support/http-server.js';
import type { HttpServer } from './types.js';

let running: RunningServer | undefined;
afterEach(async () => {
  await running?.server.close();
  running = undefined;
});

function register(server: HttpServer): void {
  server.route('POST', '/pub', 'identity', () => ({ status: 200, body: { ok: true }, headers: { Link: '<x>; rel="next"' } }), { cors: 'public' });
  server.route('GET', '/pub', 'identity', () => ({ status: 200, body: [] }), { cors: 'public' });
  server.route('GET', '/priv/:id', 'cohorts', () => ({ status: 200, body: {} }));
  server.route('DELETE', '/priv/:id', 'cohorts', () => {
    throw new ServiceError(2004, 'No key.', undefined, 401);
  });
  server.route('POST', '/pub-fails', 'identity', () => {
    throw new ServiceError(2004, 'No key.', undefined, 401);
  }, { cors: 'public' });
}

describe('parseCorsOrigin', () => {
  it('accepts bare http(s) origins and canonicalises case and default ports', () => {
    expect(parseCorsOrigin('https://Example.COM')).toBe('https://example.com');
    expect(parseCorsOrigin('https://example.com:443/')).toBe('https://example.com');
    expect(parseCorsOrigin('http://localhost:3000')).toBe('http://localhost:3000');
  });
  it.each(['example.com', '*', 'https://example.com/app', 'https://example.com?a=1', 'ftp://example.com', 'https://u@example.com', ''])(
    'refuses %j',
    (text) => expect(() => parseCorsOrigin(text)).toThrow(/origin/),
  );
});

describe('CorsRules', () => {
  it('by default: public routes allow any origin, private ones none', () => {
    const rules = new CorsRules(undefined);
    expect(rules.allows('public', 'https://a.example')).toBe(true);
    expect(rules.allows('private', 'https://a.example')).toBe(false);
    expect(rules.allows('public', 'null')).toBe(false);
  });
  it('with origins: exact scheme+host+port, host case-insensitive, on every route', () => {
    const rules = new CorsRules(['https://a.example:8443']);
    expect(rules.allows('public', 'https://A.example:8443')).toBe(true);
    expect(rules.allows('private', 'https://a.example:8443')).toBe(true);
    expect(rules.allows('public', 'https://a.example')).toBe(false);
    expect(rules.allows('public', 'http://a.example:8443')).toBe(false);
    expect(rules.allows('private', 'https://b.example')).toBe(false);
  });
  it('a bad configured origin throws', () => {
    expect(() => new CorsRules(['https://a.example/path'])).toThrow(/not an origin/);
  });
});

describe('CORS on the server', () => {
  it('a preflight on a public path is 204 with methods, headers, max-age and the echoed origin, without a key', async () => {
    running = await startServer(register);
    const res = await send(running.port, '/pub', {
      method: 'OPTIONS',
      headers: { Origin: 'https://shop.example', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'x-api-key, content-type' },
    });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect(res.headers['access-control-allow-origin']).toBe('https://shop.example');
    expect(res.headers['access-control-allow-methods']).toBe('GET, POST');
    expect(res.headers['access-control-allow-headers']).toBe('Content-Type, X-API-Key, X-Request-Id');
    expect(res.headers['access-control-max-age']).toBe('600');
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    expect(res.headers.vary).toBe('Origin');
    expect(res.headers['x-request-id']).toBeDefined();
  });

  it('a preflight on a private path is 204 without Allow-Origin for an unlisted origin', async () => {
    running = await startServer(register);
    const res = await send(running.port, '/priv/abc/', { method: 'OPTIONS', headers: { Origin: 'https://shop.example' } });
    expect(res.status).toBe(204);
    expect(res.headers['access-control-allow-methods']).toBe('DELETE, GET');
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('a preflight on an unknown path is the usual 404 envelope', async () => {
    running = await startServer(register);
    const res = await send(running.port, '/nowhere', { method: 'OPTIONS', headers: { Origin: 'https://shop.example' } });
    expect(res.status).toBe(404);
    expect(res.json).toMatchObject({ error: { code: 3000 } });
  });

  it('responses of a public route, errors included, expose X-Request-Id and Link to any origin', async () => {
    running = await startServer(register);
    const ok = await send(running.port, '/pub', { method: 'POST', headers: { Origin: 'https://shop.example' } });
    expect(ok.status).toBe(200);
    expect(ok.headers['access-control-allow-origin']).toBe('https://shop.example');
    expect(ok.headers['access-control-expose-headers']).toBe('X-Request-Id, Link');
    expect(ok.headers.link).toBe('<x>; rel="next"');
    const failed = await send(running.port, '/pub-fails', { method: 'POST', headers: { Origin: 'https://shop.example' } });
    expect(failed.status).toBe(401);
    expect(failed.headers['access-control-allow-origin']).toBe('https://shop.example');
    expect(failed.headers['access-control-expose-headers']).toBe('X-Request-Id, Link');
    const noOrigin = await send(running.port, '/pub', { method: 'POST' });
    expect(noOrigin.headers['access-control-allow-origin']).toBeUndefined();
    expect(noOrigin.headers.vary).toBe('Origin');
  });

  it('a private route gives no Allow-Origin by default; with corsOrigins it allows only the listed ones, on both kinds', async () => {
    running = await startServer(register);
    const closed = await send(running.port, '/priv/1', { headers: { Origin: 'https://admin.example' } });
    expect(closed.status).toBe(200);
    expect(closed.headers['access-control-allow-origin']).toBeUndefined();
    await running.server.close();

    running = await startServer(register, { corsOrigins: ['https://admin.example'] });
    const listed = await send(running.port, '/priv/1', { method: 'DELETE', headers: { Origin: 'https://ADMIN.example' } });
    expect(listed.status).toBe(401);
    expect(listed.headers['access-control-allow-origin']).toBe('https://ADMIN.example');
    const narrowed = await send(running.port, '/pub', { method: 'POST', headers: { Origin: 'https://shop.example' } });
    expect(narrowed.status).toBe(200);
    expect(narrowed.headers['access-control-allow-origin']).toBeUndefined();
    const preflight = await send(running.port, '/pub', { method: 'OPTIONS', headers: { Origin: 'https://shop.example' } });
    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
  });
});
