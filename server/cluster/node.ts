// A cluster node (issue 15, docs/cluster.md): the single-node service over its own data directory, joined to the
// cluster's NATS JetStream. Wiring only; each piece is its own module:
//   control-log.ts   the control plane, a stream of commands every node applies in order (command-store.ts, scope.ts)
//   event-log.ts     the event log, a stream with a subject per partition, acknowledged before a track answers
//   leases.ts        which node owns which partition (KV leases, rendezvous hashing, fencing)
//   owners.ts        the owned partitions read from the event log into this node's pipeline
//   owner-rpc.ts     reads of a user's data answered by the owner of the user's partition
//   node-tags.ts     delivery ids that name the node whose outbox holds them; node-rpc.ts asks that node
//   sizes.ts         audience sizes summed over the owners' published counters
//   transitions.ts   the owners' transitions copied to one stream that every node's live stream and charts follow
//   facades.ts       identity, schemas and pipeline as the data routes see them
//   routing.ts       where each route is answered

import { mkdir } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { Kvm } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { openLevelStore } from '../store/level.js';
import { key } from '../store/layout.js';
import type { Store } from '../store/contract.js';
import { collapseRepeats } from '../log.js';
import { openServices, type Services } from '../services.js';
import { createServers, type RunningService, type ServiceOptions } from '../app.js';
import { slotSetKey, stateSecretKey } from '../routes/segmentation/index.js';
import type { InitializedOrganization } from '../domain/tenancy/index.js';
import type { IngestPipeline } from '../ingest/types.js';
import { CommandStore } from './command-store.js';
import { ControlLog, type Command } from './control-log.js';
import { EventLog } from './event-log.js';
import { PartitionLeases } from './leases.js';
import { PartitionOwners, REACTED_BUCKET } from './owners.js';
import { OwnerRpc } from './owner-rpc.js';
import { NodeRpc } from './node-rpc.js';
import { claimNodeTag, nodeOfTag, startOutboxAtTag, TAGS_BUCKET } from './node-tags.js';
import { ClusterSizes, SIZES_BUCKET } from './sizes.js';
import { ClusterTransitions, TransitionPublisher } from './transitions.js';
import { clusterIdentity, clusterPipeline, clusterSchemas, overriding } from './facades.js';
import { partitionOf } from '../domain/events/index.js';
import { ClusterRouting } from './routing.js';
import { runSent, type SentRequest } from './requests.js';
import { connectCluster, retrying, waitForJetStream } from './nats.js';
import { scopedClock, scopedId, scopedRandomBytes } from './scope.js';

export interface ClusterOptions {
  /** NATS servers of the cluster (`nats://host:port`). */
  readonly servers: readonly string[];
  /** This node's name in the cluster; default one made at its data directory's first start and kept there. */
  readonly nodeId?: string;
  /** JetStream replicas of the streams and buckets (default 3 with three or more servers, else 1). */
  readonly replicas?: number;
  /** Partitions of a NEW cluster (default 16); a running cluster keeps its own. */
  readonly partitions?: number;
  /** Lease time of a partition (ms, default 10,000): a dead node's partitions move after at most this. */
  readonly leaseTtlMs?: number;
}

export interface ClusterNode extends RunningService {
  readonly nodeId: string;
  /** The keys of the cluster's first organization when this node created it (printed once, like `serve`'s). */
  readonly initialised: InitializedOrganization | undefined;
  /** The partitions this node owns now. */
  owned(): number[];
}

const NODE_ID_KEY = key('m', 'node-id');
const LEASES_BUCKET = 'audience_leases';
const NODES_BUCKET = 'audience_nodes';
const DAY = 24 * 3_600_000;

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took over ${ms} ms`)), ms);
    timer.unref();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

async function storedNodeId(store: Store): Promise<string> {
  const known = await store.get<string>(NODE_ID_KEY);
  if (typeof known === 'string') return known;
  const id = `node-${randomUUID().slice(0, 8)}`;
  await store.batch([{ type: 'put', key: NODE_ID_KEY, value: id }], { sync: true });
  return id;
}

/**
 * One line per burst of ownership changes ("node-2 gained 3, 8; lost 5; owns 1, 3, 8"), written to the plain log: they
 * are not failures, and the repeat-collapsing log would fold them into "N more failure(s) of the same kind".
 */
class OwnershipLog {
  private readonly changes = { gained: [] as number[], lost: [] as number[] };
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly node: string,
    private readonly owned: () => readonly number[],
    private readonly write: (line: string) => void,
  ) {}

  note(kind: 'gained' | 'lost', partition: number): void {
    this.changes[kind].push(partition);
    this.timer ??= setTimeout(() => this.flush(), 100);
    this.timer.unref();
  }

  private flush(): void {
    this.timer = undefined;
    const list = (partitions: number[]) => partitions.splice(0).sort((a, b) => a - b).join(', ');
    const gained = this.changes.gained.length > 0 ? ` gained ${list(this.changes.gained)};` : '';
    const lost = this.changes.lost.length > 0 ? ` lost ${list(this.changes.lost)};` : '';
    this.write(`cluster: ${this.node}${gained}${lost} owns ${this.owned().join(', ') || 'no partition'}`);
  }
}

interface Parts {
  nc: NatsConnection;
  eventLog: EventLog;
  control: ControlLog;
  owners: PartitionOwners | undefined;
  rpc: OwnerRpc | undefined;
  sizes: ClusterSizes | undefined;
  leases: PartitionLeases | undefined;
}

export async function startClusterNode(options: ServiceOptions & { readonly cluster: ClusterOptions }): Promise<ClusterNode> {
  const { cluster } = options;
  await mkdir(options.dataDir, { recursive: true });
  const log = options.log === undefined ? undefined : collapseRepeats(options.log);
  const report = (line: string) => log?.(line);
  const store = await openLevelStore(options.dataDir, { log, compression: options.storeCompression });
  const nodeId = cluster.nodeId ?? (await storedNodeId(store));
  const replicas = cluster.replicas ?? (cluster.servers.length >= 3 ? 3 : 1);
  const ttlMs = cluster.leaseTtlMs ?? 10_000;
  let nc: NatsConnection | undefined;
  try {
    nc = await connectCluster(cluster.servers, `audience ${nodeId}`);
    await waitForJetStream(nc);
    const joined = nc;
    const eventLog = await retrying('opening the event log', () => EventLog.open(joined, { partitions: cluster.partitions ?? 16, replicas }));
    const control = await retrying('opening the control log', () => ControlLog.open(joined, { replicas }));
    const transitions = await retrying('opening the transitions stream', () =>
      ClusterTransitions.open(joined, { replicas, retentionMs: options.stream?.retentionMs ?? 2 * DAY }),
    );
    const publisher = new TransitionPublisher(transitions.js, store, report);
    const kvm = new Kvm(nc);
    const bucket = (name: string, ttl?: number) => retrying(`opening the bucket ${name}`, () => kvm.create(name, { history: 1, replicas, ...(ttl === undefined ? {} : { ttl }) }));
    const leasesKv = await bucket(LEASES_BUCKET, ttlMs);
    const nodesKv = await bucket(NODES_BUCKET, ttlMs);
    const sizesKv = await bucket(SIZES_BUCKET);
    const reactedKv = await bucket(REACTED_BUCKET);
    const tagsKv = await bucket(TAGS_BUCKET);
    const tag = await retrying('claiming a node tag', () => claimNodeTag(store, tagsKv, nodeId));
    await startOutboxAtTag(store, tag);
    const commandStore = new CommandStore(store);
    const parts: Parts = { nc, eventLog, control, owners: undefined, rpc: undefined, sizes: undefined, leases: undefined };
    const routing: ClusterRouting = new ClusterRouting({
      control,
      get tenancy() {
        return services.tenancy;
      },
      get owners() {
        return parts.owners as PartitionOwners;
      },
      get rpc() {
        return parts.rpc as OwnerRpc;
      },
      partitions: eventLog.partitions,
      get nodes(): NodeRpc {
        return nodeRpc;
      },
      self: nodeId,
      selfTag: tag,
      liveNodes: async () => (parts.leases === undefined ? [nodeId] : parts.leases.liveNodes()),
      nodeOfTag: (other) => nodeOfTag(tagsKv, other),
    });
    const connection = nc;
    const nodeRpc: NodeRpc = new NodeRpc(nc, routing.handlers, () => control.sync());
    const services: Services = await openServices(store, {
      controlStore: commandStore,
      threads: options.threads,
      fsync: options.fsync,
      clock: options.clock ?? scopedClock,
      newId: options.newId ?? scopedId,
      randomBytes: scopedRandomBytes,
      log,
      offlineEveryMinutes: options.offlineEveryMinutes ?? 60,
      limits: options.limits,
      delivery: options.delivery,
      stream: options.stream,
      owns: (partition) => parts.owners?.owns(partition) ?? false,
      tuning: { partitions: eventLog.partitions, ...(options.foldEvery === undefined ? {} : { foldEvery: options.foldEvery }) },
      transitions,
      // D20 over the cluster: each node computes the users of the partitions it owns; sizes.ts sums the counts.
      offlineScope: {
        partitionOf: (org, user) => {
          const partition = partitionOf(org, user, eventLog.partitions);
          return parts.owners?.owns(partition) === true ? partition : undefined;
        },
        partitions: () => parts.owners?.owned() ?? [],
        computed: (cohort, counts, at) => (parts.sizes as ClusterSizes).publishOffline(cohort.organization_id, cohort.code, counts, at),
      },
      wrapPipeline: (local: IngestPipeline) => {
        const owners = new PartitionOwners({
          log: eventLog,
          pipeline: local,
          store,
          reacted: reactedKv,
          published: (ms) => within(publisher.flushed(), ms, 'publishing the transitions'),
          organizations: () => services.tenancy.organizationIds(),
          report,
        });
        const rpc = new OwnerRpc(connection, routing.handlers, owners, local, () => control.sync());
        const sizes = new ClusterSizes(sizesKv, local, () => owners.owned(), report);
        Object.assign(parts, { owners, rpc, sizes });
        return clusterPipeline({
          local,
          log: eventLog,
          owners,
          sizes,
          askOwner: async (org, user, partition) => (await rpc.ask(partition, { kind: 'memberships', org, user })) as readonly number[],
        });
      },
    });
    if (services.pipeline.partitions !== eventLog.partitions) {
      throw new Error(`the data directory ${options.dataDir} has ${services.pipeline.partitions} partitions and the cluster ${eventLog.partitions}: give this node a new data directory`);
    }
    const { owners, rpc, sizes } = parts;
    if (owners === undefined || rpc === undefined || sizes === undefined) throw new Error('the pipeline was not wrapped');
    const routeServices: Services = {
      ...services,
      identity: clusterIdentity(services.identity, control),
      schemas: clusterSchemas(services.schemas, control),
      backfill: overriding(services.backfill, { offlineResultOf: (cohort) => sizes.offlineResult(cohort.organization_id, cohort.code) }),
    };
    const { http, legacy, segmentation } = createServers(options, routeServices, log, {
      wrap: (server) => routing.wrap(server),
      segmentation: {
        createStateSecret: async (org) => void (await control.submit('state-secret', { org })),
        persistSlotSet: async (org, fingerprint, ids) => void (await control.submit('slot-set', { org, fingerprint, ids })),
      },
    });

    const apply = async (command: Command): Promise<unknown> => {
      const body = command.body as Record<string, unknown>;
      switch (command.kind) {
        case 'http':
          return runSent(routing.handlers, command.body as SentRequest);
        case 'resolve':
          return services.identity.resolveForTrack(body['org'] as string, body['ident'] as never);
        case 'schema': {
          const ops = await services.schemas.check(body['org'] as string, body['name'] as string, body['properties'] as Record<string, unknown>);
          await commandStore.batch(ops);
          return [];
        }
        case 'state-secret': {
          const org = body['org'] as string;
          if ((await commandStore.get(stateSecretKey(org))) === undefined) {
            await commandStore.batch([{ type: 'put', key: stateSecretKey(org), value: scopedRandomBytes(32).toString('hex') }], { sync: true });
          }
          return undefined;
        }
        case 'slot-set': {
          const at = slotSetKey(body['org'] as string, body['fingerprint'] as number);
          if ((await commandStore.get(at)) === undefined) await commandStore.batch([{ type: 'put', key: at, value: body['ids'] }], { sync: true });
          return undefined;
        }
        case 'bootstrap':
          if (services.tenancy.isInitialised()) return undefined;
          return services.tenancy.initOrganization({ name: body['name'] as string, now: scopedClock.now(), newId: scopedId, newKey: scopedId });
        default:
          throw new Error(`unknown control command ${command.kind}`);
      }
    };
    await control.start(commandStore, apply, report);
    services.pipeline.onCommitted((outcome) => publisher.notify(outcome.log));
    await publisher.start();
    const clock = options.clock ?? scopedClock;
    await transitions.follow(({ cursor, entry }) => {
      if (entry.at >= clock.now().getTime() - DAY) services.series.add(entry);
      services.stream.publish([{ cursor, entry }]);
    }, report);
    const initialised = services.tenancy.isInitialised()
      ? undefined
      : ((await control.submit('bootstrap', { name: 'Default organization' })) as InitializedOrganization | undefined);

    nodeRpc.serve(nodeId);
    const ownership = new OwnershipLog(nodeId, () => owners.owned(), (line) => options.log?.(line));
    const leases = new PartitionLeases({
      leases: leasesKv,
      nodes: nodesKv,
      nodesBucket: NODES_BUCKET,
      jsm: await waitForJetStream(connection),
      node: nodeId,
      partitions: eventLog.partitions,
      ttlMs,
      log: report,
      onGain: async (partition) => {
        ownership.note('gained', partition);
        await owners.gain(partition);
        rpc.serve(partition);
      },
      onLoss: async (partition) => {
        ownership.note('lost', partition);
        rpc.unserve(partition);
        await owners.lose(partition);
      },
    });
    parts.leases = leases;
    await retrying('watching the sizes', () => sizes.start());
    await retrying('claiming partitions', () => leases.start());

    let listening: { url: string; port: number };
    let legacyUrl: string | undefined;
    const stop = async () => {
      await leases.stop(true);
      rpc.stop();
      nodeRpc.stop();
      await sizes.stop();
      await segmentation.published();
      services.backfill.stop();
      await owners.stopAll();
      await publisher.stop();
      await transitions.stop();
      await control.stop();
      await services.pipeline.close();
      await services.backfill.closed();
      await services.deliveries.stop();
      await services.stream.close();
      // Drained when NATS answers; closed in any case: a connection left reconnecting (NATS gone) keeps the process alive.
      await within(connection.drain(), 5000, 'draining the NATS connection').catch(() => undefined);
      await connection.close().catch(() => undefined);
      await store.close();
      log?.flush();
    };
    try {
      listening = await http.listen();
      if (legacy !== undefined) legacyUrl = (await legacy.listen()).url;
    } catch (error) {
      await http.close();
      await stop();
      throw error;
    }
    let closing: Promise<void> | undefined;
    return {
      ...listening,
      ...(legacyUrl === undefined ? {} : { legacyUrl }),
      services: routeServices,
      nodeId,
      initialised,
      owned: () => owners.owned(),
      close: () =>
        (closing ??= (async () => {
          await http.close();
          await legacy?.close();
          await stop();
        })()),
    };
  } catch (error) {
    await nc?.close().catch(() => undefined);
    await store.close();
    throw error;
  }
}
