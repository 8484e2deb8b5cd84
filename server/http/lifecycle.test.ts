import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpServer } from './server.js';
import { deferred, send, startServer } from '../../test/support/http-server.js';
import type { HttpServer, RequestContext } from './types.js';

const context = (ctx: RequestContext) => ({ status: 200, body: { secure: ctx.transportSecure, peer: ctx.remoteAddress } });

function connectionRefused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}

describe('graceful close', () => {
  it('stops accepting, lets the in-flight request get its 200, then resolves', async () => {
    const gate = deferred();
    const entered = deferred();
    const { server, port } = await startServer((s) =>
      s.route('GET', '/slow', 'plain', async () => {
        entered.resolve();
        await gate.promise;
        return { status: 200, body: { done: true } };
      }),
    );
    const inFlight = send(port, '/slow');
    await entered.promise;
    expect(server.inFlight()).toBe(1);
    let closed = false;
    const closing = server.close().then(() => (closed = true));
    expect(await connectionRefused(port)).toBe(true);
    expect(closed).toBe(false);
    gate.resolve();
    const res = await inFlight;
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ done: true });
    await closing;
    expect(server.inFlight()).toBe(0);
    await expect(server.listen()).rejects.toThrow();
  });

  it('closes at once when nothing is in flight, and twice is harmless', async () => {
    const { server, port } = await startServer(() => undefined);
    expect((await send(port, '/healthz')).status).toBe(200);
    await Promise.all([server.close(), server.close()]);
    expect(await connectionRefused(port)).toBe(true);
  });
});

describe('listen', () => {
  it('rejects with a clear message when the port is in use', async () => {
    const first = await startServer(() => undefined);
    const second = createHttpServer({ host: '127.0.0.1', port: first.port, log: () => undefined });
    try {
      await expect(second.listen()).rejects.toThrow(`port ${first.port} is already in use on 127.0.0.1`);
      expect((await send(first.port, '/healthz')).status).toBe(200);
    } finally {
      await second.close();
      await first.server.close();
    }
  });

  it('reports the port and URL, and uses that URL for docs links by default (D10)', async () => {
    const { server, port, url } = await startServer(() => undefined);
    try {
      expect(url).toBe(`http://127.0.0.1:${port}`);
      const res = await send(port, '/nowhere');
      const docs = (res.json as { error: { docs: string } }).error.docs;
      expect(docs).toBe(`${url}/errors/404/3000`);
      expect((await fetch(docs)).status).toBe(200);
    } finally {
      await server.close();
    }
  });
});

describe('transport security (D7)', () => {
  it('with trust-proxy, X-Forwarded-Proto decides', async () => {
    const { server, port } = await startServer((s) => s.route('GET', '/ctx', 'plain', context), { trustProxy: true });
    try {
      expect((await send(port, '/ctx', { headers: { 'X-Forwarded-Proto': 'https' } })).json).toMatchObject({ secure: true });
      expect((await send(port, '/ctx', { headers: { 'X-Forwarded-Proto': 'http' } })).json).toMatchObject({ secure: false });
      expect((await send(port, '/ctx')).json).toMatchObject({ secure: true });
    } finally {
      await server.close();
    }
  });

  it('with trust-proxy, the last X-Forwarded-Proto value decides, from a list or repeated headers (D46)', async () => {
    const { server, port } = await startServer((s) => s.route('GET', '/ctx', 'plain', context), { trustProxy: true });
    try {
      expect((await send(port, '/ctx', { headers: { 'X-Forwarded-Proto': 'https, http' } })).json).toMatchObject({ secure: false });
      expect((await send(port, '/ctx', { headers: { 'X-Forwarded-Proto': 'http, https' } })).json).toMatchObject({ secure: true });
      const repeated = (values: string[]) => ({ 'X-Forwarded-Proto': values }) as unknown as Record<string, string>;
      expect((await send(port, '/ctx', { headers: repeated(['https', 'http']) })).json).toMatchObject({ secure: false });
      expect((await send(port, '/ctx', { headers: repeated(['http', 'https']) })).json).toMatchObject({ secure: true });
    } finally {
      await server.close();
    }
  });

  it('without trust-proxy, a non-loopback peer is not secure even claiming https', async () => {
    const external = Object.values(networkInterfaces())
      .flat()
      .find((entry) => entry !== undefined && entry.family === 'IPv4' && !entry.internal);
    const { server, port } = await startServer((s) => s.route('GET', '/ctx', 'plain', context), { host: '0.0.0.0' });
    try {
      const local = await send(port, '/ctx', { host: '127.0.0.1' });
      expect(local.json).toEqual({ secure: true, peer: '127.0.0.1' });
      // A machine without a non-loopback interface can only check the loopback side here; transport.test.ts covers the rest.
      if (external !== undefined) {
        const remote = await send(port, '/ctx', { host: external.address, headers: { 'X-Forwarded-Proto': 'https' } });
        expect(remote.json).toEqual({ secure: false, peer: external.address });
      }
    } finally {
      await server.close();
    }
  });

  describe('over TLS', () => {
    let dir: string;
    let server: HttpServer;
    let port: number;

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'audience-tls-'));
      const cert = join(dir, 'cert.pem');
      const key = join(dir, 'key.pem');
      await promisify(execFile)('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=localhost', '-days', '1', '-keyout', key, '-out', cert]);
      server = createHttpServer({ host: '127.0.0.1', port: 0, tls: { certFile: cert, keyFile: key }, log: () => undefined });
      server.route('GET', '/ctx', 'plain', context);
      ({ port } = await server.listen());
    });

    afterAll(async () => {
      await server?.close();
      await rm(dir, { recursive: true, force: true });
    });

    it('serves HTTPS, marks requests secure and links docs to https', async () => {
      const get = (path: string) =>
        new Promise<{ status: number; body: string }>((resolve, reject) => {
          const req = httpsRequest({ host: '127.0.0.1', port, path, rejectUnauthorized: false, agent: false }, (res) => {
            let body = '';
            res.on('data', (chunk: Buffer) => (body += chunk.toString()));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
          });
          req.on('error', reject);
          req.end();
        });
      expect(await get('/ctx')).toEqual({ status: 200, body: JSON.stringify({ secure: true, peer: '127.0.0.1' }) });
      const missing = await get('/nowhere');
      expect(missing.status).toBe(404);
      expect(JSON.parse(missing.body).error.docs).toBe(`https://127.0.0.1:${port}/errors/404/3000`);
    });

    it('refuses to start with an unreadable certificate file', () => {
      expect(() => createHttpServer({ host: '127.0.0.1', port: 0, tls: { certFile: join(dir, 'none.pem'), keyFile: join(dir, 'key.pem') } })).toThrow(/TLS/);
    });
  });
});
