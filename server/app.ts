// Wiring only: opens the store and the domain, registers every area's routes on the HTTP layer, listens.
// `startService` is what `audience serve` and the end-to-end tests run.

import { mkdir } from 'node:fs/promises';
import { createHttpServer, type HttpServer, type ResponseInfo } from './http/index.js';
import { openLevelStore } from './store/level.js';
import { collapseRepeats } from './log.js';
import { closeServices, openServices, type Clock, type ServiceLimits, type Services, type ServicesOptions } from './services.js';
import { registerAdminRoutes } from './routes/admin.js';
import { registerCohortsRoutes } from './routes/cohorts.js';
import { registerAliasLookupRoute, registerIdentityRoutes } from './routes/identity.js';
import { registerEventsRoutes } from './routes/events.js';
import { registerSegmentationRoutes, type SegmentationHandle, type SegmentationOptions } from './routes/segmentation/index.js';
import { registerTaxonomyRoutes } from './routes/taxonomy/index.js';
import { registerReactionsRoutes } from './routes/reactions.js';
import { registerStreamRoute } from './routes/stream.js';
import { registerBackupRoute } from './routes/backups.js';
import { registerOpenApiRoute } from './routes/openapi.js';
import { registerDashboardRoutes } from './routes/dashboard.js';
import { registerCohortInsightsRoutes } from './routes/cohort-insights.js';
import { packageVersion } from './version.js';
import { createMetrics, type ServiceMetrics } from './metrics.js';

export interface ServiceOptions {
  dataDir: string;
  host: string;
  port: number;
  bodyLimit?: number;
  threads?: number;
  trustProxy?: boolean;
  docsUrl?: string;
  /** D43: origins allowed to read responses from browsers (`audience serve --cors-origins`); see HttpServerOptions. */
  corsOrigins?: readonly string[];
  tls?: { certFile: string; keyFile: string };
  fsync?: boolean;
  /** Snappy-compress the store's tables (`audience serve --store-compression`; server/store/level.ts LEVEL_OPTIONS); default off. */
  storeCompression?: boolean;
  log?: (line: string) => void;
  /** Minutes between scheduled computations of offline cohorts (D20; `audience serve --offline-every`); default 60. */
  offlineEveryMinutes?: number;
  /** D40 limits (`audience serve --max-schema-paths` ...); absent ones take their defaults. */
  limits?: ServiceLimits;
  /** D37/D38 tuning (tests and benchmarks): webhook retries and timeouts, the stream's retention and slow-client bound. */
  delivery?: ServicesOptions['delivery'];
  stream?: ServicesOptions['stream'];
  /** Fold a user's single event records into blocks each time its event count passes a multiple of this (`serve --fold-every`; default 32, 0 never). */
  foldEvery?: number;
  /** D47: also serve the identity and events routes (only those) on this port (0: a free one) and host. */
  legacyPort?: number;
  legacyHost?: string;
  /** Each answered request (the access log). */
  onResponse?: (info: ResponseInfo) => void;
  /** `GET /metrics` (Prometheus text, no key); default on (`serve --metrics off` turns it off). */
  metrics?: boolean;
  /** Tests fix the clock and ids; a served instance uses the wall clock and random UUIDs. */
  clock?: Clock;
  newId?: () => string;
}

export interface RunningService {
  readonly url: string;
  readonly port: number;
  /** D47: the legacy base address, when `legacyPort` was given. */
  readonly legacyUrl?: string;
  /** The domain services behind the routes (for tests and embedding). */
  readonly services: Services;
  /** Graceful stop: no new requests, in-flight ones finish, then the store is flushed and closed. */
  close(): Promise<void>;
}

/** The HTTP servers of an instance with every route registered: the API, and the D47 legacy one when asked for. */
export interface Servers {
  readonly http: HttpServer;
  readonly legacy: HttpServer | undefined;
  readonly segmentation: SegmentationHandle;
}

/**
 * Creates the servers and registers every area's routes on them, through `wrap` when given (a cluster node decides
 * there where each route is answered, server/cluster/routing.ts).
 */
export function createServers(
  options: ServiceOptions,
  services: Services,
  log: ((line: string) => void) | undefined,
  extra: { readonly wrap?: (http: HttpServer) => HttpServer; readonly segmentation?: SegmentationOptions } = {},
): Servers {
  let metrics: ServiceMetrics | undefined;
  const httpOptions = {
    host: options.host,
    port: options.port,
    tls: options.tls,
    trustProxy: options.trustProxy,
    docsUrl: options.docsUrl,
    bodyLimit: options.bodyLimit,
    corsOrigins: options.corsOrigins,
    log,
    onResponse: (info: ResponseInfo) => {
      metrics?.observeResponse(info);
      options.onResponse?.(info);
    },
  };
  const wrap = extra.wrap ?? ((server: HttpServer) => server);
  const rawHttp = createHttpServer(httpOptions);
  const http = wrap(rawHttp);
  // D47: the spec's {legacy_base_url}: the identity and events routes, and only those, with the same rules.
  const rawLegacy = options.legacyPort === undefined ? undefined : createHttpServer({ ...httpOptions, host: options.legacyHost ?? options.host, port: options.legacyPort });
  if (rawLegacy !== undefined) {
    const legacy = wrap(rawLegacy);
    registerIdentityRoutes(legacy, services);
    registerEventsRoutes(legacy, services);
  }
  registerAdminRoutes(http, services);
  registerCohortsRoutes(http, services);
  registerIdentityRoutes(http, services);
  registerAliasLookupRoute(http, services);
  registerEventsRoutes(http, services);
  registerCohortInsightsRoutes(http, services);
  const segmentation = registerSegmentationRoutes(http, services, {
    log,
    ...(options.limits?.statelessCacheBytes === undefined ? {} : { recentStateBytes: options.limits.statelessCacheBytes }),
    ...extra.segmentation,
  });
  registerTaxonomyRoutes(http, services);
  registerReactionsRoutes(http, services);
  registerStreamRoute(http, services);
  registerBackupRoute(http, services, options.dataDir);
  registerOpenApiRoute(http, packageVersion());
  registerDashboardRoutes(http);
  if (options.metrics !== false) {
    const created = createMetrics(services, options.dataDir, { dropped: () => segmentation.totals().dropped, recentStates: () => segmentation.recentStates() });
    metrics = created;
    http.route('GET', '/metrics', 'plain', async () => ({ status: 200, text: await created.registry.metrics(), contentType: created.registry.contentType }), { body: 'none' });
  }
  return { http: rawHttp, legacy: rawLegacy, segmentation };
}

export async function startService(options: ServiceOptions): Promise<RunningService> {
  await mkdir(options.dataDir, { recursive: true });
  // A failure that repeats (every tick while the disk is full) is logged once per burst, with a count.
  const log = options.log === undefined ? undefined : collapseRepeats(options.log);
  const store = await openLevelStore(options.dataDir, { log, compression: options.storeCompression });
  try {
    const services = await openServices(store, {
      threads: options.threads,
      fsync: options.fsync,
      clock: options.clock,
      newId: options.newId,
      log,
      offlineEveryMinutes: options.offlineEveryMinutes ?? 60,
      limits: options.limits,
      delivery: options.delivery,
      stream: options.stream,
      ...(options.foldEvery === undefined ? {} : { tuning: { foldEvery: options.foldEvery } }),
    });
    const { http, legacy, segmentation } = createServers(options, services, log);
    let listening: { url: string; port: number };
    let legacyUrl: string | undefined;
    try {
      listening = await http.listen();
      if (legacy !== undefined) legacyUrl = (await legacy.listen()).url;
    } catch (error) {
      await http.close();
      await closeServices(services);
      throw error;
    }
    let closing: Promise<void> | undefined;
    return {
      ...listening,
      ...(legacyUrl === undefined ? {} : { legacyUrl }),
      services,
      close: () =>
        (closing ??= (async () => {
          await http.close();
          await legacy?.close();
          // Stateless calls publish their events after replying (D24): let those land before the pipeline stops.
          await segmentation.published();
          // Sweeps and offline computations stop between batches (a sweep resumes from its cursor at the next start).
          await closeServices(services);
          await store.close();
          log?.flush();
        })()),
    };
  } catch (error) {
    await store.close();
    throw error;
  }
}
