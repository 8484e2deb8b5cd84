// The domain services of one running instance, built over one store: what route modules receive.
// Route modules take the subset they use (Pick<Services, ...>) so their dependencies stay visible.

import { randomUUID } from 'node:crypto';
import type { Store } from './store/contract.js';
import { Tenancy } from './domain/tenancy/index.js';
import { CohortRegistry } from './domain/cohorts/index.js';
import { Identity } from './domain/identity/index.js';
import { SchemaRegistry } from './domain/schemas/index.js';
import { Imports } from './domain/imports/index.js';
import type { IngestPipeline } from './ingest/types.js';
import { openIngestPipeline, type IngestOptions } from './ingest/index.js';
import { Backfill } from './backfill/index.js';
import { ReactionRegistry } from './domain/reactions/registry.js';
import { DeliveryLoop, type DeliveryLoopOptions } from './reactions/delivery/loop.js';
import type { OfflineScope } from './backfill/index.js';
import { StreamHub, type StreamHubOptions, type TransitionSource } from './reactions/stream/hub.js';
import { CohortSeries } from './domain/cohorts/series.js';
import { readTransitionLog } from './domain/reactions/log.js';

const DAY = 24 * 3_600_000;

/** The series' last day from the stored log, through the cursor committed before the live feed began. */
async function loadSeries(store: Store, series: CohortSeries, through: number, since: number): Promise<void> {
  for await (const { cursor, entry } of readTransitionLog(store)) {
    if (cursor > through) break;
    if (entry.at >= since) series.add(entry);
  }
}

export interface Clock {
  /** Wall-clock time; injected so tests can fix it. */
  now(): Date;
}

export interface Services {
  readonly store: Store;
  readonly tenancy: Tenancy;
  readonly cohorts: CohortRegistry;
  readonly identity: Identity;
  readonly schemas: SchemaRegistry;
  readonly imports: Imports;
  readonly pipeline: IngestPipeline;
  /** Cohort changes applied to history: sweeps, offline cohorts (D19, D20). Stop it before closing the pipeline. */
  readonly backfill: Backfill;
  /** D37: reactions, and the loop delivering their webhooks from the outbox (stop it before closing the store). */
  readonly reactions: ReactionRegistry;
  readonly deliveries: DeliveryLoop;
  /** D38: the live stream's subscribers of the transitions log (close it before the store). */
  readonly stream: StreamHub;
  /** Each cohort's last day by minute (the dashboard's charts): sizes, entries and exits, from the transitions log. */
  readonly series: CohortSeries;
  readonly clock: Clock;
  readonly newId: () => string;
}

/** D40: what one organization's data may hold, and the memory the caches may use. */
export interface ServiceLimits {
  /** Property paths per event schema and per event (default 1,000). */
  readonly maxSchemaPaths?: number;
  /** Bytes the ingest pipeline's cache of users' states may hold (default an eighth of the memory, 64 MiB-4 GiB). */
  readonly stateCacheBytes?: number;
  /** States each partition owner keeps decoded; the other resident ones it holds encoded (default: no limit). */
  readonly decodedStates?: number;
  /** Bytes the cache of users' imported-data contexts may hold (default a sixty-fourth of the memory, 16-512 MiB). */
  readonly contextCacheBytes?: number;
  /**
   * Bytes the stateless route's recently sealed states may hold decoded (routes/segmentation/recent-states.ts; default
   * a 256th of the memory, 16-256 MiB; 0 disables it).
   */
  readonly statelessCacheBytes?: number;
  /** Distinct event names per organization (default 10,000). */
  readonly maxEventNames?: number;
  /** Bytes the cache of event schemas may hold (default 64 MiB). */
  readonly schemaCacheBytes?: number;
}

export interface ServicesOptions {
  /** Engine worker threads; 0 evaluates in the main thread. */
  readonly threads?: number;
  /** fsync every group commit (power-loss durability). */
  readonly fsync?: boolean;
  readonly clock?: Clock;
  readonly newId?: () => string;
  /** Where secrets' bytes come from (default crypto's); a cluster node takes a replicated request's own. */
  readonly randomBytes?: (size: number) => Buffer;
  /**
   * The store the control plane's registries (tenancy, cohorts, reactions, identity, schemas, imports) write through;
   * default `store`. A cluster node passes one that records, in each of their batches, the command applied.
   */
  readonly controlStore?: Store;
  /** A cluster node's partitions (issue 15): its pipeline evaluates deadlines only for these. */
  readonly owns?: (partition: number) => boolean;
  /**
   * What the other services and the routes use instead of the ingest pipeline itself (a cluster node's facade, which
   * publishes appends to the event log and catches up only its own users: server/cluster/facades.ts).
   */
  readonly wrapPipeline?: (pipeline: IngestPipeline) => IngestPipeline;
  /**
   * Where the live stream and the charts read transitions (a cluster node: the cluster's stream, which the node feeds
   * to `stream.publish` and `series.add` itself); default this store's log, fed on each commit.
   */
  readonly transitions?: TransitionSource;
  readonly log?: (line: string) => void;
  /** Minutes between scheduled computations of offline cohorts (D20); 0 or absent: never. */
  readonly offlineEveryMinutes?: number;
  /** A cluster node's share of offline computations (server/backfill/offline.ts). */
  readonly offlineScope?: OfflineScope;
  /** Tuning of the pipeline's partitions and catch-ups, and of the sweep's batches (tests and benchmarks). */
  /** Called after each batch of a sweep is durable (tests: stop a service in the middle of a sweep). */
  readonly onSwept?: (org: string, usersDone: number) => void;
  /** Awaited before each sweep starts reading or writing (tests: hold a sweep before its record is saved). */
  readonly beforeSweep?: (org: string) => Promise<void>;
  /** D40 limits (defaults in the areas that enforce them). */
  readonly limits?: ServiceLimits;
  /** D37 delivery tuning (retry timing, horizon, timeouts; tests shorten them). */
  readonly delivery?: Pick<DeliveryLoopOptions, 'timeoutMs' | 'firstRetryMs' | 'maxRetryMs' | 'horizonMs' | 'perEndpoint'>;
  /** D38 stream tuning (retention of the transitions log, the slow-client bound). */
  readonly stream?: Pick<StreamHubOptions, 'retentionMs' | 'maxBufferedBytes'>;
  readonly tuning?: Pick<IngestOptions, 'partitions' | 'catchUpInline' | 'catchUpBudget' | 'catchUpsPerTick' | 'taskEvents' | 'historyChunk' | 'deadlines' | 'foldEvery'> & {
    readonly sweepBatch?: number;
  };
}

export async function openServices(store: Store, options: ServicesOptions = {}): Promise<Services> {
  const clock = options.clock ?? { now: () => new Date() };
  const newId = options.newId ?? randomUUID;
  const control = options.controlStore ?? store;
  const tenancy = await Tenancy.open(control);
  const cohorts = await CohortRegistry.open(control, tenancy);
  const reactions = await ReactionRegistry.open(control, tenancy, (org, code) => cohorts.getByCode(org, code)?.name, options.randomBytes);
  const identity = new Identity(control, { newId });
  const schemas = new SchemaRegistry(control, {
    maxPaths: options.limits?.maxSchemaPaths,
    maxEventNames: options.limits?.maxEventNames,
    cacheBytes: options.limits?.schemaCacheBytes,
  });
  // Imports is opened before the pipeline it notifies: deleting a segment re-evaluates its former members (D27).
  let pipeline: IngestPipeline | undefined;
  const imports = Imports.open(control, {
    newId,
    now: () => clock.now().getTime(),
    onMembersRemoved: (org, users) => pipeline?.reevaluate(org, users),
    ...(options.limits?.contextCacheBytes === undefined ? {} : { contextCacheBytes: options.limits.contextCacheBytes }),
  });
  const local = await openIngestPipeline({
    store,
    threads: options.threads ?? 0,
    fsync: options.fsync ?? false,
    now: () => clock.now().getTime(),
    newId,
    plans: {
      planFor: (org) => ({
        version: cohorts.planVersion(org),
        cohorts: cohorts.enabledRealTime(org).map((cohort) => ({ code: cohort.code, query: cohort.ast as never })),
        inactive: cohorts.inactiveCodes(org),
        generations: cohorts.generationsOf(org),
      }),
    },
    contexts: { contextFor: (org, user) => imports.contextFor(org, user), contextEpoch: () => imports.contextEpoch() },
    log: options.log,
    reactions,
    cacheBytes: options.limits?.stateCacheBytes,
    decodedStates: options.limits?.decodedStates,
    ...(options.owns === undefined ? {} : { owns: options.owns }),
    ...options.tuning,
  });
  pipeline = options.wrapPipeline?.(local) ?? local;
  const backfill = await Backfill.open({
    store,
    pipeline,
    cohorts,
    now: () => clock.now(),
    log: options.log,
    offlineEveryMinutes: options.offlineEveryMinutes,
    offlineScope: options.offlineScope,
    sweepBatch: options.tuning?.sweepBatch,
    onSwept: options.onSwept,
    beforeSweep: options.beforeSweep,
  });
  const deliveries = new DeliveryLoop({
    store,
    target: (id) => reactions.target(id),
    reactionIds: () => reactions.ids(),
    now: () => clock.now().getTime(),
    log: options.log,
    ...options.delivery,
  });
  const source = options.transitions;
  const stream = await StreamHub.open({ store, now: () => clock.now().getTime(), log: options.log, ...options.stream, ...(source === undefined ? {} : { source }) });
  const series = new CohortSeries();
  const loadedThrough = stream.lastCursor();
  pipeline.onCommitted((outcome) => {
    if (source === undefined) {
      for (const { entry } of outcome.log) series.add(entry);
      stream.publish(outcome.log);
    }
    deliveries.notify(outcome.reactions);
  });
  reactions.onChange((reaction) => deliveries.notify([reaction.id]));
  deliveries.start();
  if (source === undefined) await loadSeries(store, series, loadedThrough, clock.now().getTime() - DAY);
  return { store, tenancy, cohorts, identity, schemas, imports, pipeline, backfill, reactions, deliveries, stream, series, clock, newId };
}

/**
 * Stops what `openServices` started, in the order they depend on each other: sweeps stop between batches, the
 * pipeline finishes its groups, the sweeps end, the webhook deliveries and the live stream stop (the stream's timer
 * prunes the transitions log: left running, it would find the store closed). The store stays open: its owner closes
 * it after. A cluster node stops its own parts between these (server/cluster/node.ts).
 */
export async function closeServices(services: Services): Promise<void> {
  services.backfill.stop();
  await services.pipeline.close();
  await services.backfill.closed();
  await services.deliveries.stop();
  await services.stream.close();
}
