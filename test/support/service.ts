// Starts the whole service in-process on an ephemeral port over a temp LevelDB directory, with an initialised
// organization, for end-to-end tests. `restart()` reopens the same directory (data must survive).

import { randomUUID } from 'node:crypto';
import { startService, type RunningService, type ServiceOptions } from '../../server/app.js';
import type { ServiceLimits } from '../../server/services.js';
import { initialiseDataDir, type InitResult } from '../../server/bootstrap.js';
import { tempDir } from './processes.js';

export interface TestService {
  readonly url: string;
  readonly keys: InitResult;
  readonly dataDir: string;
  readonly running: RunningService;
  /** fetch against the service with a key (default: the private key) and a JSON body. */
  request(method: string, path: string, options?: { key?: string | null; body?: unknown; headers?: Record<string, string> }): Promise<Response>;
  /** request() and the parsed JSON body. */
  json<T = unknown>(method: string, path: string, options?: { key?: string | null; body?: unknown; headers?: Record<string, string> }): Promise<{ status: number; body: T; headers: Headers }>;
  restart(): Promise<TestService>;
  close(): Promise<void>;
}

export interface TestServiceOptions {
  threads?: number;
  bodyLimit?: number;
  trustProxy?: boolean;
  /** D40 limits (small ones keep limit tests fast). */
  limits?: ServiceLimits;
  /** D43: `--cors-origins`. */
  corsOrigins?: string[];
  /** D38: the stream's tuning (retention, slow-client bound). */
  stream?: ServiceOptions['stream'];
  /** `GET /metrics` (default on). */
  metrics?: boolean;
  /** D47: a legacy port (0: a free one) serving the identity and events routes. */
  legacyPort?: number;
  /** D37: the delivery loop's tuning (a short horizon makes failed deliveries at once). */
  delivery?: ServiceOptions['delivery'];
}

export async function startTestService(options: TestServiceOptions = {}): Promise<TestService> {
  const dir = await tempDir('audience-e2e-');
  const dataDir = `${dir.path}/data`;
  const keys = await initialiseDataDir(dataDir, 'Test organization');
  if (keys === 'already-initialised') throw new Error('a fresh temp directory cannot be initialised already');
  return open(dataDir, keys, options, dir.remove);
}

async function open(dataDir: string, keys: InitResult, options: TestServiceOptions, removeDir: () => Promise<void>): Promise<TestService> {
  const running = await startService({
    dataDir,
    host: '127.0.0.1',
    port: 0,
    threads: options.threads ?? 0,
    bodyLimit: options.bodyLimit,
    trustProxy: options.trustProxy,
    limits: options.limits,
    corsOrigins: options.corsOrigins,
    stream: options.stream,
    metrics: options.metrics,
    ...(options.delivery === undefined ? {} : { delivery: options.delivery }),
    ...(options.legacyPort === undefined ? {} : { legacyPort: options.legacyPort }),
    log: () => undefined,
  });
  const request: TestService['request'] = (method, path, opts = {}) => {
    const headers: Record<string, string> = { ...opts.headers };
    const key = opts.key === undefined ? keys.private_key : opts.key;
    if (key !== null) headers['X-API-Key'] = key;
    let body: string | undefined;
    if (opts.body !== undefined) {
      headers['Content-Type'] = 'application/json';
      body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
    }
    return fetch(`${running.url}${path}`, { method, headers, body });
  };
  const service: TestService = {
    url: running.url,
    keys,
    dataDir,
    running,
    request,
    json: async (method, path, opts) => {
      const response = await request(method, path, opts);
      const text = await response.text();
      return { status: response.status, body: (text === '' ? undefined : JSON.parse(text)) as never, headers: response.headers };
    },
    restart: async () => {
      await running.close();
      return open(dataDir, keys, options, removeDir);
    },
    close: async () => {
      await running.close();
      await removeDir();
    },
  };
  return service;
}

export const newUuid = randomUUID;
