// Test support for the HTTP layer's tests: a real server on an ephemeral port and a node:http client that shows
// status, headers and body exactly as sent.

import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { createHttpServer } from '../../server/http/server.js';
import type { HttpServer, HttpServerOptions } from '../../server/http/types.js';

export interface RunningServer {
  readonly server: HttpServer;
  readonly port: number;
  readonly url: string;
  readonly logs: string[];
}

export async function startServer(
  register: (server: HttpServer) => void,
  options: Partial<HttpServerOptions> = {},
): Promise<RunningServer> {
  const logs: string[] = [];
  const server = createHttpServer({ host: '127.0.0.1', port: 0, log: (line) => logs.push(line), ...options });
  register(server);
  const { port, url } = await server.listen();
  return { server, port, url, logs };
}

export interface RawResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
  readonly json: unknown;
}

export interface RawRequest {
  method?: string;
  headers?: Record<string, string>;
  /** Written as is; an array is written chunk by chunk (chunked transfer unless content-length is given). */
  body?: string | Buffer | Array<string | Buffer>;
  host?: string;
}

/** One request on a fresh connection (no keep-alive pooling between tests). */
export function send(port: number, path: string, init: RawRequest = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: init.host ?? '127.0.0.1', port, path, method: init.method ?? 'GET', headers: init.headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = text === '' ? undefined : JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
      },
    );
    req.on('error', reject);
    const body = init.body;
    if (Array.isArray(body)) for (const chunk of body) req.write(chunk);
    else if (body !== undefined) req.write(body);
    req.end();
  });
}

export const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** A promise with its resolve function, for handlers a test releases. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}
