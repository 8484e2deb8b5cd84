import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { send, startServer, type RunningServer } from '../../test/support/http-server.js';
import { createRng } from '../../test/differential/random.js';

let running: RunningServer;

beforeAll(async () => {
  running = await startServer(
    (server) => {
      server.route('POST', '/cohorts-api/v2/cohorts', 'cohorts', (ctx) => ({ status: 201, body: { got: ctx.body ?? null } }));
      server.route('PATCH', '/cohorts-api/v2/cohorts/:id', 'cohorts', async (ctx) => ({ status: 200, body: { id: ctx.params['id'] } }), { body: 'required' });
      server.route('GET', '/v2.0/events', 'identity', (ctx) => ({ status: 200, body: [ctx.query.get('user_id')] }));
    },
    { bodyLimit: 64 * 1024 },
  );
});

afterAll(async () => {
  await running.server.close();
});

/** The shared seeded PRNG (mulberry32), so a failure replays. */
const generator = (seed: number): (() => number) => createRng(seed).next;

function garbageRequest(random: () => number): Buffer {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const bytes = (n: number) => Buffer.from(Array.from({ length: n }, () => Math.floor(random() * 256)));
  const kind = Math.floor(random() * 6);
  if (kind === 0) return bytes(1 + Math.floor(random() * 2000));
  const method = pick(['GET', 'POST', 'POST', 'PATCH', 'PATCH', 'DELETE', 'PUT', 'HEAD', 'OPTIONS', 'BREW', '', 'G\u0000T']);
  const path = pick([
    '/cohorts-api/v2/cohorts',
    '/cohorts-api/v2/cohorts/',
    '/cohorts-api/v2/cohorts/c%201',
    '/v2.0/events?user_id=u1',
    '/cohorts-api/v2/cohorts/%ZZ',
    `/cohorts-api/v2/cohorts/${'a'.repeat(5000)}`,
    '/v2.0/events?user_id=%E0%A4%A&k=',
    '//../../etc/passwd',
    '*',
    '/healthz?' + 'q=1&'.repeat(500),
    bytes(20).toString('latin1'),
  ]);
  const headers: string[] = [`Host: x`];
  if (random() < 0.3) headers.push(`X-API-Key: ${bytes(10).toString('latin1')}`);
  if (random() < 0.2) headers.push(`X-Huge: ${'h'.repeat(Math.floor(random() * 200_000))}`);
  if (random() < 0.2) headers.push(`${bytes(8).toString('latin1')}: ${bytes(8).toString('latin1')}`);
  const body = pick(['{"name":', '{"a":[1,2,{"b":', '[]', 'null', '{"x":"\\ud800"}', bytes(300).toString('latin1'), '']);
  const lengthKind = Math.floor(random() * 4);
  if (lengthKind === 0) headers.push(`Content-Length: ${Buffer.byteLength(body, 'latin1')}`);
  else if (lengthKind === 1) headers.push(`Content-Length: ${Buffer.byteLength(body, 'latin1') + 50}`); // truncated
  else if (lengthKind === 2) headers.push('Content-Length: -5');
  else headers.push('Transfer-Encoding: chunked');
  return Buffer.from(`${method} ${path} HTTP/1.1\r\n${headers.join('\r\n')}\r\n\r\n${body}`, 'latin1');
}

/** Writes the bytes, half-closes, and waits for the server to answer and/or close the connection. */
function sendRaw(port: number, payload: Buffer): Promise<string> {
  return new Promise((resolve) => {
    let answer = '';
    const socket = connect({ host: '127.0.0.1', port });
    socket.setTimeout(10_000, () => socket.destroy());
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(answer));
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
    socket.on('connect', () => socket.end(payload));
  });
}

describe('robustness', () => {
  it('survives a few hundred garbage requests and stays healthy', async () => {
    const random = generator(20261120);
    const requests = Array.from({ length: 400 }, () => garbageRequest(random));
    const answers: string[] = [];
    for (let i = 0; i < requests.length; i += 25) {
      answers.push(...(await Promise.all(requests.slice(i, i + 25).map((payload) => sendRaw(running.port, payload)))));
    }
    // Some garbage is well-formed enough to reach the layer, which answers it with its own envelope.
    const answered = answers.filter((answer) => /\r\nX-Request-Id: /i.test(answer));
    expect(answered.length).toBeGreaterThan(20);
    await vi.waitFor(() => expect(running.server.inFlight()).toBe(0));
    const health = await send(running.port, '/healthz');
    expect(health.status).toBe(200);
    expect(health.json).toEqual({ status: 'ok' });
    const post = await send(running.port, '/cohorts-api/v2/cohorts', { method: 'POST', body: '{"name":"after"}' });
    expect(post.json).toEqual({ got: { name: 'after' } });
  });
});
