import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ServiceError, badBody, notFound, unknownUser } from '../errors.js';
import { deferred, send, startServer, UUID_V4, type RunningServer } from '../../test/support/http-server.js';
import { DRAIN_BYTES } from './server.js';
import type { Reply, RequestContext } from './types.js';

const LIMIT = 4096;
let running: RunningServer;
let slowGate = deferred();
let slowEntered = deferred();

function echo(ctx: RequestContext) {
  return {
    method: ctx.method,
    path: ctx.path,
    params: ctx.params,
    query: Object.fromEntries(ctx.query),
    body: ctx.body === undefined ? '<none>' : ctx.body,
    rawLength: ctx.rawBody.length,
    requestId: ctx.requestId,
    apiKey: ctx.apiKey ?? '<none>',
    transportSecure: ctx.transportSecure,
    remoteAddress: ctx.remoteAddress,
    contentType: ctx.headers['content-type'] ?? '<none>',
  };
}

beforeAll(async () => {
  running = await startServer(
    (server) => {
      server.route('GET', '/cohorts-api/v2/cohorts/:cohortId', 'cohorts', (ctx) => ({ status: 200, body: echo(ctx) }));
      server.route('POST', '/cohorts-api/v2/cohorts', 'cohorts', async (ctx) => ({ status: 201, body: echo(ctx) }));
      server.route('PATCH', '/cohorts-api/v2/cohorts/:cohortId', 'cohorts', (ctx) => ({ status: 200, body: echo(ctx) }), { body: 'required' });
      server.route('DELETE', '/cohorts-api/v2/cohorts/:cohortId', 'cohorts', () => ({ status: 200 }));
      server.route('POST', '/v2.0/users', 'identity', (ctx) => ({ status: 200, body: echo(ctx) }), { body: 'none' });
      server.route('GET', '/v2.0/events', 'identity', () => {
        throw unknownUser();
      });
      server.route('GET', '/v2.0/users/:userId/aliases', 'identity', async () => {
        throw notFound('user');
      });
      server.route('POST', '/audience-api/v1/imports/:importId/segments', 'taxonomy', () => {
        throw badBody('code: missing');
      });
      server.route('POST', '/ccs/v1/segmentation/stateless', 'segmentation', async () => {
        throw new ServiceError(1002, 'bad state', 'state.internal_state: signature does not match');
      });
      server.route('GET', '/admin/v1/boom', 'admin', () => {
        throw new TypeError('secret internals');
      });
      server.route('GET', '/admin/v1/async-boom', 'admin', async () => {
        await Promise.resolve();
        throw new Error('async internals');
      });
      server.route('GET', '/admin/v1/bigint', 'admin', () => ({ status: 200, body: { n: 1n } }));
      server.route('GET', '/admin/v1/nothing', 'admin', async () => undefined as unknown as Reply);
      server.route('GET', '/admin/v1/bad-status', 'admin', () => ({ status: 99 }));
      server.route('GET', '/admin/v1/bad-header', 'admin', () => ({ status: 200, headers: { 'X-Bad': 'a\r\nInjected: yes' } }));
      server.route('GET', '/plain/large', 'plain', (ctx) => {
        const count = Number(ctx.query.get('n') ?? '1000');
        const events = Array.from({ length: count }, (_, i) => ({ id: i, name: 'Pageview', properties: { url: `https://example.com/${'p'.repeat(400)}/${i}` } }));
        return { status: 200, body: events };
      });
      server.route('GET', '/plain/text', 'plain', () => ({ status: 202, text: 'hello', headers: { 'X-Extra': 'yes', 'X-Request-Id': 'forged' } }));
      server.route('GET', '/plain/slow', 'plain', async () => {
        slowEntered.resolve();
        await slowGate.promise;
        return { status: 200, body: { slow: true } };
      });
    },
    { bodyLimit: LIMIT, docsUrl: 'https://docs.example/' },
  );
});

afterAll(async () => {
  await running.server.close();
});

function errorOf(json: unknown): Record<string, unknown> {
  return (json as { error: Record<string, unknown> }).error;
}

describe('responses', () => {
  it('GET /healthz answers 200 {"status":"ok"} as JSON without a key, with a UUID v4 X-Request-Id (D4)', async () => {
    const res = await send(running.port, '/healthz');
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ status: 'ok' });
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.headers['x-request-id']).toMatch(UUID_V4);
  });

  it('gives the handler the request id that the X-Request-Id header carries (D4)', async () => {
    const res = await send(running.port, '/cohorts-api/v2/cohorts/c1');
    expect((res.json as { requestId: string }).requestId).toBe(res.headers['x-request-id']);
  });

  it('writes text replies, extra headers, and never a handler-forged X-Request-Id', async () => {
    const res = await send(running.port, '/plain/text');
    expect(res.status).toBe(202);
    expect(res.text).toBe('hello');
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.headers['x-extra']).toBe('yes');
    expect(res.headers['x-request-id']).toMatch(UUID_V4);
  });

  it('answers an empty body when the reply has none (D16 DELETE)', async () => {
    const res = await send(running.port, '/cohorts-api/v2/cohorts/c1', { method: 'DELETE' });
    expect(res.status).toBe(200);
    expect(res.text).toBe('');
    expect(res.headers['x-request-id']).toMatch(UUID_V4);
  });

  it('streams a large body intact under backpressure (a 1000-event read and a 10000-event one)', async () => {
    for (const n of [1000, 10000]) {
      const res = await send(running.port, `/plain/large?n=${n}`);
      expect(res.status).toBe(200);
      const events = res.json as Array<{ id: number }>;
      expect(events).toHaveLength(n);
      expect(events[n - 1]?.id).toBe(n - 1);
    }
    expect(running.server.inFlight()).toBe(0);
  });
});

describe('routing', () => {
  it('passes URL-decoded path parameters and the query', async () => {
    const res = await send(running.port, '/cohorts-api/v2/cohorts/a%20b?x=1&y=%C3%A9');
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ method: 'GET', params: { cohortId: 'a b' }, query: { x: '1', y: 'é' } });
  });

  it('routes a trailing slash like the path without it (D1)', async () => {
    const res = await send(running.port, '/cohorts-api/v2/cohorts/', { method: 'POST', body: '{}' });
    expect(res.status).toBe(201);
  });

  it('answers an unknown path with 404 code 3000 in the cohort envelope, request_id = X-Request-Id', async () => {
    expect((await send(running.port, '/')).status).toBe(404);
    const res = await send(running.port, '/nowhere');
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.json).toMatchObject({ request_id: res.headers['x-request-id'], error: { status_code: 404, code: 3000, status: 'Not Found' } });
  });

  it('answers an unknown path under an area in that area\'s envelope', async () => {
    const taxonomy = await send(running.port, '/audience-api/v1/nothing');
    expect(taxonomy.status).toBe(404);
    expect(taxonomy.json).toMatchObject({ requestId: taxonomy.headers['x-request-id'], error: { c: 'DoesNotExist', d: { code: 3000 } } });
    const identity = await send(running.port, '/v2.0/nothing');
    expect(errorOf(identity.json)).not.toHaveProperty('type');
    expect(errorOf(identity.json)['code']).toBe(3000);
  });

  it('answers a known path with the wrong method 405 code 3000 and an Allow header', async () => {
    const res = await send(running.port, '/cohorts-api/v2/cohorts', { method: 'GET' });
    expect(res.status).toBe(405);
    expect(res.headers['allow']).toBe('POST');
    expect(errorOf(res.json)).toMatchObject({ status_code: 405, code: 3000, status: 'Method Not Allowed' });
  });
});

describe('bodies', () => {
  const json = { 'Content-Type': 'application/json' };

  it('parses a JSON body', async () => {
    const res = await send(running.port, '/cohorts-api/v2/cohorts', { method: 'POST', headers: json, body: '{"name":"x","n":[1,2]}' });
    expect(res.json).toMatchObject({ body: { name: 'x', n: [1, 2] }, rawLength: 22, contentType: 'application/json' });
  });

  it('reads a body sent in chunks', async () => {
    const res = await send(running.port, '/cohorts-api/v2/cohorts', { method: 'POST', body: ['{"na', 'me":', '"chunked"}'] });
    expect(res.json).toMatchObject({ body: { name: 'chunked' } });
  });

  it('treats an empty or blank body with Content-Type: application/json as no body (D1)', async () => {
    for (const body of [undefined, '', ' \r\n\t']) {
      const res = await send(running.port, '/cohorts-api/v2/cohorts', { method: 'POST', headers: json, body });
      expect(res.status).toBe(201);
      expect((res.json as { body: unknown }).body).toBe('<none>');
    }
  });

  it('answers invalid JSON with 400 code 1002 and a cause', async () => {
    for (const body of ['{"name":', 'nope', '{"a":1}}']) {
      const res = await send(running.port, '/cohorts-api/v2/cohorts', { method: 'POST', headers: json, body });
      expect(res.status).toBe(400);
      expect(errorOf(res.json)).toMatchObject({ code: 1002, cause: expect.any(String) });
    }
  });

  it('answers a missing body on a body-required route with 400 code 1003', async () => {
    const res = await send(running.port, '/cohorts-api/v2/cohorts/c1', { method: 'PATCH', headers: json });
    expect(res.status).toBe(400);
    expect(errorOf(res.json)['code']).toBe(1003);
  });

  it('ignores the body of a route that takes none', async () => {
    const res = await send(running.port, '/v2.0/users', { method: 'POST', headers: json, body: 'not json at all' });
    expect(res.status).toBe(200);
    expect((res.json as { body: unknown }).body).toBe('<none>');
  });

  it('accepts a body of exactly the limit and answers one byte more with 413 code 1002 (D2)', async () => {
    const fits = JSON.stringify({ pad: 'x'.repeat(LIMIT - 10) });
    expect(Buffer.byteLength(fits)).toBe(LIMIT);
    expect((await send(running.port, '/cohorts-api/v2/cohorts', { method: 'POST', body: fits })).status).toBe(201);
    const tooBig = JSON.stringify({ pad: 'x'.repeat(LIMIT - 9) });
    const res = await send(running.port, '/cohorts-api/v2/cohorts', { method: 'POST', body: tooBig });
    expect(res.status).toBe(413);
    expect(errorOf(res.json)).toMatchObject({ status_code: 413, code: 1002 });
  });

  it('answers a body far over the limit with 413 code 1002 without buffering it (D2)', async () => {
    const huge = Buffer.alloc(8 * 1024 * 1024, 0x61);
    for (const body of [huge, [huge.subarray(0, 4 * 1024 * 1024), huge.subarray(4 * 1024 * 1024)]]) {
      const res = await send(running.port, '/cohorts-api/v2/cohorts', { method: 'POST', body });
      expect(res.status).toBe(413);
      expect(errorOf(res.json)['code']).toBe(1002);
    }
  });

  /**
   * Node's global fetch in a child process (in-process, the client shares the server's event loop and the race does
   * not show): `count` POSTs of `size` bytes, each reported as {status, requestId, body} or {error}.
   */
  async function fetchFromChild(size: number, count: number, streamed: boolean): Promise<Array<Record<string, unknown>>> {
    const script = `
      const [url, size, count, streamed] = process.argv.slice(1);
      const piece = new Uint8Array(64 * 1024).fill(0x61);
      const results = [];
      for (let i = 0; i < Number(count); i++) {
        let body = new Uint8Array(Number(size)).fill(0x61);
        if (streamed === 'true') {
          let sent = 0;
          body = new ReadableStream({ pull(c) { if (sent >= Number(size)) c.close(); else { sent += piece.length; c.enqueue(piece); } } });
        }
        try {
          const res = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body, duplex: 'half' });
          results.push({ status: res.status, requestId: res.headers.get('x-request-id'), body: await res.json() });
        } catch (error) {
          results.push({ error: String(error.cause?.code ?? error.cause ?? error) });
        }
      }
      process.stdout.write(JSON.stringify(results));`;
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script, `${running.url}/cohorts-api/v2/cohorts`, String(size), String(count), String(streamed)], { maxBuffer: 1 << 24 });
    return JSON.parse(stdout) as Array<Record<string, unknown>>;
  }

  it('lets fetch clients still sending a 2 MiB or an 8 MiB body read the 413 envelope, 20 times in a row each (D44)', async () => {
    for (const size of [2 * 1024 * 1024, 8 * 1024 * 1024]) {
      const results = await fetchFromChild(size, 20, false);
      expect(results).toHaveLength(20);
      for (const result of results) {
        expect(result).toEqual({ status: 413, requestId: expect.stringMatching(UUID_V4), body: { request_id: result['requestId'], error: expect.objectContaining({ status_code: 413, code: 1002 }) } });
      }
    }
  }, 60_000);

  it('lets a fetch client streaming an 8 MiB body without Content-Length read the 413 envelope, 20 times (D44)', async () => {
    const results = await fetchFromChild(8 * 1024 * 1024, 20, true);
    expect(results).toHaveLength(20);
    for (const result of results) expect(result).toMatchObject({ status: 413, body: { error: { status_code: 413, code: 1002 } } });
  }, 60_000);

  it('answers at once, without waiting for the body, when the declared Content-Length is past what is drained (D2)', async () => {
    const { connect } = await import('node:net');
    const declared = LIMIT + DRAIN_BYTES + 1;
    const answer = await new Promise<string>((resolve, reject) => {
      let text = '';
      const socket = connect({ host: '127.0.0.1', port: running.port });
      socket.on('error', reject);
      socket.on('data', (chunk: Buffer) => {
        text += chunk.toString('latin1');
        if (text.includes('\r\n\r\n') && text.endsWith('}')) {
          socket.destroy();
          resolve(text);
        }
      });
      socket.on('connect', () => socket.write(`POST /cohorts-api/v2/cohorts HTTP/1.1\r\nHost: x\r\nContent-Length: ${declared}\r\n\r\n`));
    });
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer).toMatch(/\r\nX-Request-Id: [0-9a-f-]{36}\r\n/i);
  });

  it('answers an over-limit chunked body (no Content-Length) with 413 code 1002 (D2)', async () => {
    const chunk = 'x'.repeat(1000);
    const res = await send(running.port, '/cohorts-api/v2/cohorts', { method: 'POST', body: ['{"pad":"', chunk, chunk, chunk, chunk, chunk, '"}'] });
    expect(res.status).toBe(413);
    expect(errorOf(res.json)['code']).toBe(1002);
  });
});

describe('well-formed Unicode (D40)', () => {
  const post = (body: string | Buffer) => send(running.port, '/cohorts-api/v2/cohorts', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });

  it('refuses a lone surrogate in a JSON string value, at any depth, with 400 code 1002 naming the path', async () => {
    for (const [body, cause] of [
      ['"\\udc00"', 'body: not well-formed Unicode (lone surrogate)'],
      ['{"properties":{"x":"a\\ud800"}}', 'properties.x: not well-formed Unicode (lone surrogate)'],
      ['{"items":[{"name":"ok"},{"name":"\\uDFFFz"}]}', 'items[1].name: not well-formed Unicode (lone surrogate)'],
      ['{"a":"\\ud83d\\ud83d\\ude00"}', 'a: not well-formed Unicode (lone surrogate)'],
    ] as const) {
      const res = await post(body);
      expect(res.status).toBe(400);
      expect(errorOf(res.json)).toMatchObject({ code: 1002, cause });
    }
  });

  it('refuses a lone surrogate in an object key with 400 code 1002', async () => {
    const res = await post('{"properties":{"\\udc00":1}}');
    expect(res.status).toBe(400);
    expect(errorOf(res.json)).toMatchObject({ code: 1002, cause: 'properties["\\udc00"]: not well-formed Unicode (lone surrogate) in a key' });
  });

  it('refuses a body whose bytes are not UTF-8 with 400 code 1002 instead of storing U+FFFD', async () => {
    for (const bytes of [[0x22, 0xff, 0x22], [0x22, 0xed, 0xb0, 0x80, 0x22], [0x22, 0xc3, 0x22]]) {
      const res = await post(Buffer.from(bytes));
      expect(res.status).toBe(400);
      expect(errorOf(res.json)).toMatchObject({ code: 1002, cause: 'body: not well-formed Unicode (invalid UTF-8)' });
    }
  });

  it('passes well-formed strings through unchanged: pairs as escapes or raw, U+FFFD, U+FFFF, combining marks, "\\\\ud800" text', async () => {
    const value = { emoji: '😀 𝄞', escaped: '\ud83d\ude00', fffd: '\ufffd', ffff: '\uffff', combining: 'e\u0301', text: '\\ud800' };
    for (const body of [JSON.stringify(value), '{"emoji":"😀 𝄞","escaped":"\\ud83d\\ude00","fffd":"\\ufffd","ffff":"\\uffff","combining":"e\\u0301","text":"\\\\ud800"}']) {
      const res = await post(body);
      expect(res.status).toBe(201);
      expect((res.json as { body: unknown }).body).toEqual(value);
    }
  });

  it('refuses a query-string value whose escapes are not UTF-8 with 400 code 1002 naming it, in the area envelope', async () => {
    for (const query of ['x=%ED%B0%80', 'x=a%FFb', 'k=1&x=%C3']) {
      const res = await send(running.port, `/cohorts-api/v2/cohorts/c1?${query}`);
      expect(res.status).toBe(400);
      expect(errorOf(res.json)).toMatchObject({ code: 1002, status_code: 400, cause: 'query.x: not well-formed Unicode (invalid UTF-8)' });
      expect(res.json).toMatchObject({ request_id: res.headers['x-request-id'] });
    }
    const name = await send(running.port, '/cohorts-api/v2/cohorts/c1?%FF=1');
    expect(name.status).toBe(400);
    expect(errorOf(name.json)).toMatchObject({ code: 1002 });
  });

  it('still decodes well-formed query escapes, keeps a malformed % as is, and + as a space', async () => {
    const res = await send(running.port, '/cohorts-api/v2/cohorts/c1?x=%F0%9F%98%80&y=%EF%BF%BF&z=100%&w=a+b%2B');
    expect(res.status).toBe(200);
    expect((res.json as { query: unknown }).query).toEqual({ x: '😀', y: '\uffff', z: '100%', w: 'a b+' });
  });

  it('refuses a path parameter whose escapes are not UTF-8 with 400 code 1002 (not 404, not U+FFFD)', async () => {
    const res = await send(running.port, '/cohorts-api/v2/cohorts/a%ED%A0%80');
    expect(res.status).toBe(400);
    expect(errorOf(res.json)).toMatchObject({ code: 1002, cause: 'path.cohortId: not well-formed Unicode (invalid UTF-8)' });
    const taxonomy = await send(running.port, '/audience-api/v1/imports/%FF/segments', { method: 'POST', body: '{}' });
    expect(taxonomy.status).toBe(400);
    expect(taxonomy.json).toMatchObject({ requestId: taxonomy.headers['x-request-id'], error: { c: 'InvalidRequestBody', d: { code: 1002, cause: 'path.importId: not well-formed Unicode (invalid UTF-8)' } } });
    const astral = await send(running.port, '/cohorts-api/v2/cohorts/%F0%9F%98%80%EF%BF%BD');
    expect(astral.json).toMatchObject({ params: { cohortId: '😀\ufffd' } });
  });
});

describe('request heads and request ids (D44)', () => {
  it('answers a 16 KiB header with 431 in the area\'s JSON envelope and an X-Request-Id, not uWS\'s HTML page', async () => {
    for (const size of [16 * 1024, 60 * 1024]) {
      const big = { 'X-Big': 'b'.repeat(size) };
      const res = await send(running.port, '/cohorts-api/v2/cohorts/c1', { headers: big });
      expect(res.status).toBe(431);
      expect(res.headers['content-type']).toBe('application/json');
      expect(res.headers['x-request-id']).toMatch(UUID_V4);
      expect(res.json).toMatchObject({
        request_id: res.headers['x-request-id'],
        error: { type: 'https://tools.ietf.org/html/rfc6585#section-5', status_code: 431, status: 'Request Header Fields Too Large', code: 1002, cause: expect.stringContaining('16384') },
      });
      const taxonomy = await send(running.port, '/audience-api/v1/imports/i1/segments', { method: 'POST', headers: big, body: '{}' });
      expect(taxonomy.status).toBe(431);
      expect(taxonomy.json).toMatchObject({ requestId: taxonomy.headers['x-request-id'], error: { d: { code: 1002 } } });
      const unknown = await send(running.port, '/nowhere', { headers: big });
      expect(unknown.status).toBe(431);
      expect(unknown.headers['x-request-id']).toMatch(UUID_V4);
    }
    expect((await send(running.port, '/errors/431/1002')).status).toBe(200);
  });

  it('still serves a head just under the limit (15 KiB of headers)', async () => {
    const res = await send(running.port, '/cohorts-api/v2/cohorts/c1', { headers: { 'X-Big': 'b'.repeat(15 * 1024) } });
    expect(res.status).toBe(200);
  });

  it('keeps a client\'s X-Request-Id that is a UUID as the request id, in the header, the context and error bodies', async () => {
    for (const id of ['0b6f3c0e-5d1a-4c7e-9f2b-3a4d5e6f7a8b', '0B6F3C0E-5D1A-1C7E-9F2B-3A4D5E6F7A8B']) {
      const ok = await send(running.port, '/cohorts-api/v2/cohorts/c1', { headers: { 'X-Request-Id': id } });
      expect(ok.headers['x-request-id']).toBe(id);
      expect((ok.json as { requestId: string }).requestId).toBe(id);
      const failed = await send(running.port, '/nowhere', { headers: { 'X-Request-Id': id } });
      expect(failed.headers['x-request-id']).toBe(id);
      expect(failed.json).toMatchObject({ request_id: id });
    }
  });

  it('makes its own request id when the client\'s X-Request-Id is not a UUID', async () => {
    for (const id of ['abc', '', '0b6f3c0e-5d1a-4c7e-9f2b-3a4d5e6f7a8b-extra', '<script>']) {
      const res = await send(running.port, '/nowhere', { headers: { 'X-Request-Id': id } });
      expect(res.headers['x-request-id']).toMatch(UUID_V4);
      expect(res.headers['x-request-id']).not.toBe(id);
      expect(res.json).toMatchObject({ request_id: res.headers['x-request-id'] });
    }
  });
});

describe('errors', () => {
  it('renders a ServiceError of the identity area without type/status_code', async () => {
    const res = await send(running.port, '/v2.0/users/u1/aliases');
    expect(res.status).toBe(404);
    expect(res.json).toEqual({
      request_id: res.headers['x-request-id'],
      error: { status: 'Not Found', code: 3000, message: expect.any(String), docs: 'https://docs.example/errors/404/3000' },
    });
  });

  it('renders 3002 in the identity area as the flat HTTP 400 body (D12)', async () => {
    const res = await send(running.port, '/v2.0/events?user_id=u1');
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ request_id: res.headers['x-request-id'], status: 'Bad Request', code: 3002 });
    expect(res.json).not.toHaveProperty('error');
  });

  it('renders a taxonomy error as {requestId, error: {c, d}} (D13)', async () => {
    const res = await send(running.port, '/audience-api/v1/imports/i1/segments', { method: 'POST', body: '{}' });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({
      requestId: res.headers['x-request-id'],
      error: { c: 'InvalidRequestBody', d: { message: expect.any(String), cause: 'code: missing', code: 1002 } },
    });
  });

  it('renders a segmentation error in the cohort envelope with its cause (D10)', async () => {
    const res = await send(running.port, '/ccs/v1/segmentation/stateless', { method: 'POST', body: '{}' });
    expect(res.status).toBe(400);
    expect(errorOf(res.json)).toMatchObject({ type: 'https://tools.ietf.org/html/rfc7231#section-6.5.1', status_code: 400, code: 1002, cause: expect.any(String) });
  });

  it('turns any other thrown error into 500 code 5000, logged with the request id and stack, never sent (D11)', async () => {
    for (const path of ['/admin/v1/boom', '/admin/v1/async-boom', '/admin/v1/bigint', '/admin/v1/nothing', '/admin/v1/bad-status', '/admin/v1/bad-header']) {
      const res = await send(running.port, path);
      expect(res.status).toBe(500);
      expect(errorOf(res.json)).toMatchObject({ code: 5000, status_code: 500 });
      expect(res.text).not.toMatch(/internals|at .*\.ts/);
      const id = res.headers['x-request-id'] as string;
      expect(running.logs.some((line) => line.includes(id) && /\n\s+at /.test(line))).toBe(true);
    }
  });

  it('serves a docs page behind every docs link (D10), and 404 for an unknown one', async () => {
    const page = await send(running.port, '/errors/413/1002');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['x-request-id']).toMatch(UUID_V4);
    for (const path of ['/errors/400/1002', '/errors/401/2005', '/errors/404/3000', '/errors/400/3002', '/errors/500/5000']) {
      expect((await send(running.port, path)).status).toBe(200);
    }
    for (const path of ['/errors/400/9999', '/errors/401/1002', '/errors/abc/1002', '/errors/400/constructor']) {
      const res = await send(running.port, path);
      expect(res.status).toBe(404);
      expect(errorOf(res.json)['code']).toBe(3000);
    }
  });
});

describe('request context', () => {
  const key = '8d3e0f9a-1b2c-4d5e-8f70-a1b2c3d4e5f6';

  it('takes the API key from X-API-Key in any case, or from ?k, the header winning (D5)', async () => {
    const path = '/cohorts-api/v2/cohorts/c1';
    expect((await send(running.port, path, { headers: { 'x-Api-KEY': key } })).json).toMatchObject({ apiKey: key });
    expect((await send(running.port, `${path}?k=${key}`)).json).toMatchObject({ apiKey: key });
    expect((await send(running.port, `${path}?k=other`, { headers: { 'X-API-Key': key } })).json).toMatchObject({ apiKey: key });
    expect((await send(running.port, path)).json).toMatchObject({ apiKey: '<none>' });
  });

  it('marks a loopback peer over plain HTTP as secure (D7)', async () => {
    const res = await send(running.port, '/cohorts-api/v2/cohorts/c1');
    expect(res.json).toMatchObject({ transportSecure: true, remoteAddress: '127.0.0.1' });
  });

  it('releases an aborted request and never writes to it; the server stays healthy', async () => {
    slowGate = deferred();
    slowEntered = deferred();
    const { request } = await import('node:http');
    const req = request({ host: '127.0.0.1', port: running.port, path: '/plain/slow', agent: false });
    const failed = new Promise((resolve) => req.on('error', resolve));
    req.end();
    await slowEntered.promise;
    expect(running.server.inFlight()).toBe(1);
    req.destroy();
    await failed;
    await vi.waitFor(() => expect(running.server.inFlight()).toBe(0));
    slowGate.resolve();
    expect((await send(running.port, '/healthz')).status).toBe(200);
  });
});
