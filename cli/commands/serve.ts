// `audience serve --data DIR`: initialises an empty DIR, serves the API, and stops cleanly on SIGINT/SIGTERM
// (stop accepting, finish in-flight requests, flush, close the store, exit 0), as operations.md describes.

import { availableParallelism } from 'node:os';
import { Option, type Command } from 'commander';
import { CliError, type CliIo } from '../io.js';
import { startService, type RunningService, type ServiceOptions } from '../../server/app.js';
import { startClusterNode, type ClusterOptions } from '../../server/cluster/node.js';
import { parseCorsOrigin } from '../../server/http/cors.js';
import { initialiseDataDir } from '../../server/bootstrap.js';
import { defaultStateCacheBytes } from '../../server/ingest/index.js';
import { defaultContextCacheBytes } from '../../server/domain/imports/index.js';
import { defaultRecentStateBytes } from '../../server/routes/segmentation/recent-states.js';
import { describeKeys, serveUrl } from './init.js';
import { LOG_LEVELS, createLogger, type LogLevel } from '../../server/logger.js';
import { coalesceLines } from '../../server/log.js';
import { DEFAULT_HELPER_NICE, lowerHelperThreads } from '../../server/thread-priority.js';
import { DEFAULT_MALLOC_TRIM_SECONDS, startMallocTrimmer } from '../../server/malloc-trim.js';
import { DEFAULT_HEAP_COMPACTION_SECONDS, startHeapCompactor } from '../../server/heap-compaction.js';

interface ServeOptions {
  data: string;
  port: string;
  host: string;
  threads?: string;
  helperNice: string;
  mallocTrimEvery: string;
  compactHeapEvery: string;
  tlsCert?: string;
  tlsKey?: string;
  trustProxy?: boolean;
  fsync?: boolean;
  storeCompression?: boolean;
  docsUrl?: string;
  corsOrigins?: string;
  bodyLimit: string;
  offlineEvery: string;
  maxSchemaPaths: string;
  stateCacheBytes?: string;
  decodedStates?: string;
  foldEvery: string;
  contextCacheBytes?: string;
  statelessCacheBytes?: string;
  maxEventNames: string;
  schemaCacheBytes: string;
  deliveryHorizon: string;
  streamRetention: string;
  metrics: string;
  logLevel: string;
  legacyPort?: string;
  legacyHost?: string;
  cluster?: string;
  nodeId?: string;
  clusterReplicas?: string;
  clusterPartitions?: string;
  clusterLeaseMs?: string;
}

/**
 * operations.md (second round): every `serve` flag also reads an environment variable, AUDIENCE_ + the flag's name in
 * capitals with underscores (`--state-cache-bytes` ← AUDIENCE_STATE_CACHE_BYTES); the flag wins; `--help` shows it.
 */
function envOption(flags: string, description: string, defaultValue?: string): Option {
  const name = (/--([a-z-]+)/.exec(flags) as RegExpExecArray)[1] as string;
  const option = new Option(flags, description).env(`AUDIENCE_${name.toUpperCase().replace(/-/g, '_')}`);
  return defaultValue === undefined ? option : option.default(defaultValue);
}

export function registerServeCommand(program: Command, io: CliIo): void {
  program
    .command('serve')
    .description('serve the HTTP API over a data directory (initialising it when empty)')
    .addOption(envOption('--data <dir>', 'data directory').makeOptionMandatory())
    .addOption(envOption('--port <port>', 'port to listen on (0 picks a free one)', '8080'))
    .addOption(envOption('--host <host>', 'address to listen on', '127.0.0.1'))
    .addOption(envOption('--threads <n>', `partition owners: piscina worker threads keeping users' states resident; 0 evaluates in the main thread (default ${defaultThreads()}: one per core beyond the first, at least one)`))
    .addOption(envOption('--helper-nice <n>', "added to the nice value of every thread but the main one (partition owners, LevelDB's and V8's helpers): the main thread, which serves HTTP and builds every ingest group, wins a contended core; 0 leaves them equal (Linux)", String(DEFAULT_HELPER_NICE)))
    .addOption(envOption('--malloc-trim-every <seconds>', "hand the C allocator's free memory (freed by LevelDB, the owners, the HTTP layer) back to the system every this many seconds unless the process used half a core or more since the last look (under load that memory is reused at once), off the event loop (glibc's malloc_trim; Linux); 0 never", String(DEFAULT_MALLOC_TRIM_SECONDS)))
    .addOption(envOption('--compact-heap-every <seconds>', "at a look this often that finds the process idle since the last one (under 5 % of a core), compact each thread's V8 heap (the main thread's, then each partition owner's) whose old space is a quarter or more free pages (at least 32 MiB): one full collection that moves the live objects together and gives the free pages back, pausing that thread (~0.7 s for 100,000 resident users, longer with more); 0 never", String(DEFAULT_HEAP_COMPACTION_SECONDS)))
    .addOption(envOption('--tls-cert <file>', 'TLS certificate (PEM); serves HTTPS with --tls-key'))
    .addOption(envOption('--tls-key <file>', 'TLS private key (PEM)'))
    .addOption(envOption('--trust-proxy', 'trust X-Forwarded-Proto from a proxy in front (D7)'))
    .addOption(envOption('--fsync', 'fsync every group commit: acknowledged writes survive power loss, not only a crash'))
    .addOption(envOption('--store-compression', "Snappy-compress the tables LevelDB writes from now on: about 40 % less disk for more CPU per stored and read event (default off; data written either way reads the same)"))
    .addOption(envOption('--docs-url <url>', 'base address of the error documentation pages'))
    .addOption(envOption('--cors-origins <origins>', 'comma-separated origins (https://example.com) browsers may call from; narrows public routes, opens private ones (D43)'))
    .addOption(envOption('--body-limit <bytes>', 'largest accepted request body (D2)', String(1024 * 1024)))
    .addOption(envOption('--offline-every <minutes>', 'minutes between computations of every offline cohort (D20); 0 never', '60'))
    .addOption(envOption('--max-schema-paths <n>', 'property paths allowed in one event schema and in one event (D40)', '1000'))
    .addOption(envOption('--state-cache-bytes <bytes>', `memory for users' resident engine states, all owners together; least recently used ones are snapshotted and forgotten (D40; default ${defaultStateCacheBytes()}: an eighth of this machine's memory, 64 MiB to 4 GiB)`))
    .addOption(envOption('--decoded-states <n>', "users' states each partition owner keeps decoded (an event costs the engine step alone); the owner holds its other resident states packed (only what differs from an empty state, its flags two to a byte), unpacking one when its user is next computed (default: no limit, all decoded)"))
    .addOption(envOption('--fold-every <n>', "fold a user's single event records into one stored block each time the user's event count passes a multiple of n, behind the writes (a history then reads as a few values: backfills, recovery); 0 never", '32'))
    .addOption(envOption('--context-cache-bytes <bytes>', `memory for users' imported data (segment memberships, connections rows) read for the engine; least recently used ones are forgotten (D40; default ${defaultContextCacheBytes()}: a sixty-fourth of this machine's memory, 16 to 512 MiB)`))
    .addOption(envOption('--stateless-cache-bytes <bytes>', `memory for the states stateless segmentation sealed lately, kept decoded: a call sending one back starts from it without decrypting, decoding or binding it; least recently used ones are forgotten, 0 keeps none (D40; default ${defaultRecentStateBytes()}: a 256th of this machine's memory, 16 to 256 MiB)`))
    .addOption(envOption('--max-event-names <n>', 'distinct event names per organization (D40)', '10000'))
    .addOption(envOption('--schema-cache-bytes <bytes>', 'memory for cached event schemas; least recently used ones are evicted (D40)', String(64 * 1024 * 1024)))
    .addOption(envOption('--delivery-horizon <hours>', 'how long a failing webhook delivery is retried before it is marked failed (D37)', '24'))
    .addOption(envOption('--stream-retention <hours>', 'how long the transitions log keeps transitions for stream cursors (D38; at least 24)', '48'))
    .addOption(envOption('--metrics <on|off>', 'serve GET /metrics (Prometheus text, no key)', 'on'))
    .addOption(envOption('--legacy-port <port>', "also serve the identity and events routes (only those) on this port: the spec's legacy base address (D47)"))
    .addOption(envOption('--legacy-host <host>', 'address of the legacy port (default: --host)'))
    .addOption(envOption('--cluster <urls>', 'join a cluster: comma-separated NATS servers (nats://host:4222,...) whose JetStream holds the shared state (docs/cluster.md)'))
    .addOption(envOption('--node-id <name>', 'this node\'s name in the cluster (default: one made at the first start and kept in the data directory)'))
    .addOption(envOption('--cluster-replicas <n>', 'JetStream replicas of the cluster\'s streams and buckets (default 3 with three or more NATS servers, else 1)'))
    .addOption(envOption('--cluster-partitions <n>', 'partitions of a NEW cluster (a running cluster keeps its own)', '16'))
    .addOption(envOption('--cluster-lease-ms <ms>', 'lease time of a partition: a dead node\'s partitions move to the others after at most this', '10000'))
    .addOption(envOption('--log-level <level>', `JSON-line logs on stdout from this level: ${LOG_LEVELS.join(', ')} (info: one line per request)`, 'info'))
    .addHelpText('after', '\nExample:\n  $ audience serve --data ./data --port 8080')
    .action(async (options: ServeOptions) => {
      const port = parseInteger(options.port, '--port', 0, 65535);
      const bodyLimit = parseInteger(options.bodyLimit, '--body-limit', 1, 2 ** 31);
      const threads = options.threads === undefined ? defaultThreads() : parseInteger(options.threads, '--threads', 0, 256);
      const helperNice = parseInteger(options.helperNice, '--helper-nice', 0, 19);
      const mallocTrimMs = parseInteger(options.mallocTrimEvery, '--malloc-trim-every', 0, 86_400) * 1000;
      const heapCompactionMs = parseInteger(options.compactHeapEvery, '--compact-heap-every', 0, 86_400) * 1000;
      const corsOrigins = parseCorsOrigins(options.corsOrigins);
      const legacyPort = options.legacyPort === undefined ? undefined : parseInteger(options.legacyPort, '--legacy-port', 0, 65535);
      if (options.metrics !== 'on' && options.metrics !== 'off') throw new CliError(`--metrics must be on or off, not "${options.metrics}"`, 2);
      if (!(LOG_LEVELS as readonly string[]).includes(options.logLevel)) throw new CliError(`--log-level must be one of ${LOG_LEVELS.join(', ')}, not "${options.logLevel}"`, 2);
      if (Boolean(options.tlsCert) !== Boolean(options.tlsKey)) throw new CliError('--tls-cert and --tls-key go together', 2);

      const cluster = parseCluster(options);
      // Every line of the running service goes through one coalescing writer (server/log.ts): the access log's lines
      // of a turn leave in one write, in order with the announcements; held lines are written at exit too.
      const stdout = coalesceLines((text) => io.stdout(text));
      process.once('exit', stdout.flush);
      const logger = createLogger(options.logLevel as LogLevel, stdout);
      try {
        const serviceOptions: ServiceOptions = {
          metrics: options.metrics === 'on',
          ...(legacyPort === undefined ? {} : { legacyPort }),
          ...(options.legacyHost === undefined ? {} : { legacyHost: options.legacyHost }),
          dataDir: options.data,
          host: options.host,
          port,
          bodyLimit,
          threads,
          trustProxy: Boolean(options.trustProxy),
          fsync: Boolean(options.fsync),
          storeCompression: Boolean(options.storeCompression),
          docsUrl: options.docsUrl,
          corsOrigins,
          tls: options.tlsCert && options.tlsKey ? { certFile: options.tlsCert, keyFile: options.tlsKey } : undefined,
          log: (line) => logger.message('warn', line),
          onResponse: (info) => logger.request(info),
          offlineEveryMinutes: parseInteger(options.offlineEvery, '--offline-every', 0, 525_600),
          limits: {
            maxSchemaPaths: parseInteger(options.maxSchemaPaths, '--max-schema-paths', 1, 60_000),
            stateCacheBytes: options.stateCacheBytes === undefined ? undefined : parseInteger(options.stateCacheBytes, '--state-cache-bytes', 1, Number.MAX_SAFE_INTEGER),
            decodedStates: options.decodedStates === undefined ? undefined : parseInteger(options.decodedStates, '--decoded-states', 1, 100_000_000),
            contextCacheBytes: options.contextCacheBytes === undefined ? undefined : parseInteger(options.contextCacheBytes, '--context-cache-bytes', 0, Number.MAX_SAFE_INTEGER),
            statelessCacheBytes: options.statelessCacheBytes === undefined ? undefined : parseInteger(options.statelessCacheBytes, '--stateless-cache-bytes', 0, Number.MAX_SAFE_INTEGER),
            maxEventNames: parseInteger(options.maxEventNames, '--max-event-names', 1, 100_000_000),
            schemaCacheBytes: parseInteger(options.schemaCacheBytes, '--schema-cache-bytes', 1, Number.MAX_SAFE_INTEGER),
          },
          delivery: { horizonMs: parseInteger(options.deliveryHorizon, '--delivery-horizon', 1, 24 * 365) * 3_600_000 },
          stream: { retentionMs: parseInteger(options.streamRetention, '--stream-retention', 24, 24 * 365) * 3_600_000 },
          foldEvery: parseInteger(options.foldEvery, '--fold-every', 0, 1_000_000_000),
        };
        // Every flag is checked above, before anything is written. A cluster's first organization is made once for the
        // whole cluster, through its control plane (node.ts).
        if (cluster === undefined) {
          const created = await initialiseDataDir(options.data, 'Default organization', serviceOptions.storeCompression);
          if (created !== 'already-initialised') stdout(describeKeys(created, serveUrl(options.host, port, serviceOptions.tls !== undefined)));
        }
        let service: RunningService;
        if (cluster === undefined) service = await startService(serviceOptions);
        else {
          const node = await startClusterNode({ ...serviceOptions, cluster });
          if (node.initialised !== undefined) stdout(describeKeys(node.initialised, node.url));
          stdout(`cluster node ${node.nodeId} joined ${cluster.servers.join(',')}\n`);
          service = node;
        }
        // The owners and the store's threads exist now; threads started later are lowered within a second.
        const priority = lowerHelperThreads(helperNice);
        // Handlers go in before the announcement: whoever reads "listening on" may signal at once.
        const stopped = waitForStopSignal();
        stdout(`listening on ${service.url}\n`);
        if (service.legacyUrl !== undefined) stdout(`legacy routes (D47) listening on ${service.legacyUrl}\n`);
        stdout.flush(); // the announcements leave now: whoever waits for them reads them at once
        const trimmer = await startMallocTrimmer(mallocTrimMs, (level, text) => logger.message(level, text));
        const pipeline = service.services.pipeline;
        const compactor = startHeapCompactor(heapCompactionMs, (settle) => pipeline.compactOwnerHeaps(settle), (level, text) => logger.message(level, text));
        await stopped;
        logger.message('info', 'stopping: finishing in-flight requests');
        await compactor?.stop();
        await service.close();
        priority.stop();
        await trimmer?.stop();
        logger.message('info', 'stopped');
      } finally {
        stdout.flush();
        process.removeListener('exit', stdout.flush);
      }
    });
}

/** `--cluster` and its companions; undefined without `--cluster` (the companions are then refused). */
function parseCluster(options: ServeOptions): ClusterOptions | undefined {
  if (options.cluster === undefined) {
    if (options.nodeId !== undefined || options.clusterReplicas !== undefined) throw new CliError('--node-id and --cluster-replicas need --cluster', 2);
    return undefined;
  }
  const servers = options.cluster.split(',').map((server) => server.trim());
  for (const server of servers) {
    if (!/^(nats|tls):\/\/[^\s/]+:\d+$/.test(server)) throw new CliError(`--cluster: expected nats://host:port entries, not "${server}"`, 2);
  }
  if (options.nodeId !== undefined && !/^[A-Za-z0-9_-]{1,64}$/.test(options.nodeId)) {
    throw new CliError(`--node-id must be 1 to 64 letters, digits, '-' or '_', not "${options.nodeId}"`, 2);
  }
  return {
    servers,
    ...(options.nodeId === undefined ? {} : { nodeId: options.nodeId }),
    ...(options.clusterReplicas === undefined ? {} : { replicas: parseInteger(options.clusterReplicas, '--cluster-replicas', 1, 5) }),
    partitions: parseInteger(options.clusterPartitions ?? '16', '--cluster-partitions', 1, 1024),
    leaseTtlMs: parseInteger(options.clusterLeaseMs ?? '10000', '--cluster-lease-ms', 1000, 600_000),
  };
}

function parseInteger(text: string, flag: string, min: number, max: number): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new CliError(`${flag} must be an integer from ${min} to ${max}, not "${text}"`, 2);
  }
  return value;
}

/** D43: `a,b` → canonical origins; a value that is not a bare http(s) origin exits 2 like other bad flags. */
function parseCorsOrigins(text: string | undefined): string[] | undefined {
  if (text === undefined) return undefined;
  const origins: string[] = [];
  for (const part of text.split(',')) {
    if (part.trim() === '') throw new CliError(`--cors-origins has an empty entry: "${text}"`, 2);
    try {
      origins.push(parseCorsOrigin(part));
    } catch (error) {
      throw new CliError(`--cors-origins: ${(error as Error).message}`, 2);
    }
  }
  return origins;
}

function waitForStopSignal(): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

/** The card's shape: piscina workers own the partitions, one per core beyond the first (the main thread's), at least one. */
export function defaultThreads(): number {
  return Math.max(1, availableParallelism() - 1);
}
