// Wiring only: opens the store and the domain, registers every area's routes on the HTTP layer, listens.
// `startService` is what `audience serve` and the end-to-end tests run.

import { mkdir } from 'node:fs/promises';
import { createHttpServer } from './http/index.js';
import { openLevelStore } from './store/level.js';
import { Tenancy } from './domain/tenancy/index.js';
import { registerAdminRoutes } from './routes/admin.js';

export interface ServiceOptions {
  dataDir: string;
  host: string;
  port: number;
  bodyLimit?: number;
  threads?: number;
  trustProxy?: boolean;
  docsUrl?: string;
  tls?: { certFile: string; keyFile: string };
  log?: (line: string) => void;
}

export interface RunningService {
  readonly url: string;
  readonly port: number;
  /** Graceful stop: no new requests, in-flight ones finish, then the store is flushed and closed. */
  close(): Promise<void>;
}

export async function startService(options: ServiceOptions): Promise<RunningService> {
  await mkdir(options.dataDir, { recursive: true });
  const store = await openLevelStore(options.dataDir);
  try {
    const tenancy = await Tenancy.open(store);
    const http = createHttpServer({
      host: options.host,
      port: options.port,
      tls: options.tls,
      trustProxy: options.trustProxy,
      docsUrl: options.docsUrl,
      bodyLimit: options.bodyLimit,
      log: options.log,
    });
    registerAdminRoutes(http, { tenancy });
    const { url, port } = await http.listen();
    return {
      url,
      port,
      close: async () => {
        await http.close();
        await store.close();
      },
    };
  } catch (error) {
    await store.close();
    throw error;
  }
}
