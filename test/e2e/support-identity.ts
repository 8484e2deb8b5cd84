// A harness for the identity and events end-to-end tests: the real HTTP layer with only the identity and events
// routes, over real services on a temp LevelDB, with an initialised organization, on an ephemeral port.

import { randomUUID } from 'node:crypto';
import { Agent, request as httpRequest } from 'node:http';
import { createHttpServer } from '../../server/http/index.js';
import { openLevelStore } from '../../server/store/level.js';
import { closeServices, openServices, type Services } from '../../server/services.js';
import type { InitializedOrganization } from '../../server/domain/tenancy/index.js';
import { registerIdentityRoutes } from '../../server/routes/identity.js';
import { registerEventsRoutes } from '../../server/routes/events.js';
import { tempDir } from '../support/processes.js';

export interface HttpAnswer<T = unknown> {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: T;
}

export interface CallOptions {
  /** The API key; default the private key; null sends none. */
  readonly key?: string | null;
  /** Where the key goes (D5): query `k` (default, as PermutiveAPI-style clients do) or header `X-API-Key`. */
  readonly keyIn?: 'query' | 'header';
  /** A JSON body (a string is sent as is). Without one, `Content-Type: application/json` is still sent (D1). */
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
}

export interface IdentityHarness {
  readonly url: string;
  readonly keys: InitializedOrganization;
  readonly services: Services;
  call<T = any>(method: string, path: string, options?: CallOptions): Promise<HttpAnswer<T>>;
  close(): Promise<void>;
}

export async function startIdentityHarness(options: { trustProxy?: boolean } = {}): Promise<IdentityHarness> {
  const dir = await tempDir('audience-identity-e2e-');
  const store = await openLevelStore(`${dir.path}/data`);
  const services = await openServices(store, { threads: 0, log: () => undefined });
  const keys = await services.tenancy.initOrganization({
    name: 'Identity e2e',
    now: new Date(),
    newId: randomUUID,
    newKey: randomUUID,
  });
  const http = createHttpServer({ host: '127.0.0.1', port: 0, trustProxy: options.trustProxy, log: () => undefined });
  registerIdentityRoutes(http, services);
  registerEventsRoutes(http, services);
  const { url, port } = await http.listen();
  // Keep-alive connections for bursts; destroyed on close.
  const agent = new Agent({ keepAlive: true });

  const call: IdentityHarness['call'] = (method, path, opts = {}) => {
    const key = opts.key === undefined ? keys.private_key : opts.key;
    let target = path;
    const headers: Record<string, string> = { 'Content-Type': 'application/json', ...opts.headers };
    if (key !== null) {
      if (opts.keyIn === 'header') headers['X-API-Key'] = key;
      else target += `${path.includes('?') ? '&' : '?'}k=${encodeURIComponent(key)}`;
    }
    const payload =
      opts.body === undefined ? '' : typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
    headers['Content-Length'] = String(Buffer.byteLength(payload));
    return new Promise((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port, path: target, method, headers, agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown;
          try {
            body = text === '' ? undefined : JSON.parse(text);
          } catch {
            body = text;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: body as never });
        });
      });
      req.on('error', reject);
      req.end(payload);
    });
  };

  return {
    url,
    keys,
    services,
    call,
    close: async () => {
      agent.destroy();
      await http.close();
      await closeServices(services);
      await store.close();
      await dir.remove();
    },
  };
}

/** Runs `task` for each index with at most `limit` running at once. */
export async function runLimited(count: number, limit: number, task: (index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const index = next++;
      await task(index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, count) }, worker));
}
