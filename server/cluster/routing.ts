// Where a request is answered on a cluster node (issue 15). Every node serves every route; the route modules are the
// single-node ones, registered through `wrap`, which decides per route:
// - control-plane writes (every POST/PATCH/PUT/DELETE below): sent as a command to every node, applied in stream
//   order, answered with what applying it answered on this node (control-log.ts);
// - reads of the control plane (every other GET): answered here once this node applied every command published
//   before the request (read-your-writes across nodes);
// - reads of one user's data (their events, memberships, explanation): answered by the owner of the user's partition
//   (owner-rpc.ts), which first applies every event of it published before the request;
// - the data routes (track, stateful and stateless segmentation): run here, their writes sent through the facades
//   (facades.ts: events to the event log, identity and schema growth to the control plane);
// - a reaction's deliveries (each in the outbox of the node that logged it, node-tags.ts): the list merges every live
//   node's, newest first; a retry is run by the node whose tag the delivery id carries (node-rpc.ts);
// - node-local (a backup, of this node's store).
// A request whose key this node does not know yet is tried again once this node caught up with the control plane.

import type { Handler, HttpServer, Reply, RequestContext } from '../http/index.js';
import { ServiceError } from '../errors.js';
import type { Tenancy } from '../domain/tenancy/index.js';
import { isUuid } from '../domain/identity/index.js';
import { partitionOf } from '../domain/events/index.js';
import type { ControlLog } from './control-log.js';
import type { OwnerRpc } from './owner-rpc.js';
import type { PartitionOwners } from './owners.js';
import type { NodeRpc } from './node-rpc.js';
import { tagOfDelivery } from './node-tags.js';
import { replyOf, routeId, toSentRequest, type SentAnswer } from './requests.js';

/** Routes that read one user's data, with where the user id is. */
type UserOf = (ctx: RequestContext) => string | null | undefined;
const OWNER_READS: ReadonlyMap<string, UserOf> = new Map<string, UserOf>([
  ['GET /v2.0/events', (ctx: RequestContext) => ctx.query.get('user_id')],
  ['GET /cohorts-api/v2/users/:userId/cohorts', (ctx: RequestContext) => ctx.params['userId']],
  ['GET /cohorts-api/v2/cohorts/:cohortId/explain', (ctx: RequestContext) => ctx.query.get('user_id')],
]);

const DATA_ROUTES = new Set(['POST /v2.0/events', 'POST /ccs/v1/segmentation', 'POST /ccs/v1/segmentation/stateless']);

// A backup is of this node's store.
const NODE_LOCAL = new Set(['POST /admin/v1/backups']);
const DELIVERIES_LIST = 'GET /reactions-api/v1/reactions/:reactionId/deliveries';
const DELIVERY_RETRY = 'POST /reactions-api/v1/reactions/:reactionId/deliveries/:deliveryId/retry';

export type RouteKind = 'replicated' | 'control-read' | 'owner-read' | 'data' | 'node-local' | 'every-node' | 'delivery-holder';

export function routeKind(method: string, pattern: string): RouteKind {
  const id = routeId(method, pattern);
  if (DATA_ROUTES.has(id)) return 'data';
  if (OWNER_READS.has(id)) return 'owner-read';
  if (id === DELIVERIES_LIST) return 'every-node';
  if (id === DELIVERY_RETRY) return 'delivery-holder';
  if (NODE_LOCAL.has(id)) return 'node-local';
  return method === 'GET' ? 'control-read' : 'replicated';
}

export interface RoutingDeps {
  readonly control: ControlLog;
  readonly tenancy: Tenancy;
  readonly owners: PartitionOwners;
  readonly rpc: OwnerRpc;
  readonly partitions: number;
  /** Other nodes, by name (node-rpc.ts), and this node's name and delivery tag (node-tags.ts). */
  readonly nodes: NodeRpc;
  readonly self: string;
  readonly selfTag: number;
  /** The nodes alive now (heartbeats, leases.ts). */
  liveNodes(): Promise<readonly string[]>;
  /** The node that claimed a delivery tag. */
  nodeOfTag(tag: number): Promise<string | undefined>;
}

/** Deliveries of several nodes as one list: newest first (then by id), at most `limit`. */
export function mergeDeliveries(lists: readonly (readonly Record<string, unknown>[])[], limit: number): Record<string, unknown>[] {
  const key = (delivery: Record<string, unknown>): string => `${String(delivery['created_at'])} ${String(delivery['id'])}`;
  return lists
    .flat()
    .sort((x, y) => (key(x) < key(y) ? 1 : key(x) > key(y) ? -1 : 0))
    .slice(0, limit);
}

const isUnknownKey = (error: unknown): boolean => error instanceof ServiceError && error.status === 401;

export class ClusterRouting {
  /** The route modules' own handlers by `METHOD pattern`: what a command or an owner's read runs. */
  readonly handlers = new Map<string, Handler>();

  constructor(private readonly deps: RoutingDeps) {}

  /** `http` with every route registered through it answered as its kind says. */
  wrap(http: HttpServer): HttpServer {
    return {
      ...http,
      route: (method, pattern, area, handler, options) => {
        const id = routeId(method, pattern);
        this.handlers.set(id, handler);
        const kind = routeKind(method, pattern);
        http.route(method, pattern, area, (ctx) => this.handle(kind, id, handler, ctx), options);
      },
    };
  }

  private async handle(kind: RouteKind, id: string, handler: Handler, ctx: RequestContext): Promise<Reply> {
    const { control } = this.deps;
    switch (kind) {
      case 'data':
        return this.retryingUnknownKey(() => handler(ctx));
      case 'control-read':
      case 'node-local':
        await control.sync();
        return handler(ctx);
      case 'replicated':
        await this.retryingUnknownKey(async () => this.deps.tenancy.authenticate(ctx.apiKey));
        return (await control.submit('http', toSentRequest(id, ctx))) as Reply;
      case 'owner-read':
        return this.ownerRead(id, handler, ctx);
      case 'every-node':
        return this.fromEveryNode(id, handler, ctx);
      case 'delivery-holder':
        return this.byDeliveryHolder(id, handler, ctx);
    }
  }

  /** This node's list (which validates the request) merged with every other live node's. */
  private async fromEveryNode(id: string, handler: Handler, ctx: RequestContext): Promise<Reply> {
    const { control, nodes, self } = this.deps;
    await control.sync();
    const local = await handler(ctx);
    const others = (await this.deps.liveNodes()).filter((node) => node !== self);
    const sent = toSentRequest(id, ctx);
    const lists = [local.body, ...(await Promise.all(others.map(async (node) => replyOf(await nodes.ask(node, sent)).body)))];
    const limit = Number(ctx.query.get('limit') ?? 100);
    return { ...local, body: mergeDeliveries(lists as Record<string, unknown>[][], limit) };
  }

  /** Run where the delivery is: the node whose tag its id carries (this one for a malformed or unknown id: 404). */
  private async byDeliveryHolder(id: string, handler: Handler, ctx: RequestContext): Promise<Reply> {
    const { control, nodes, self, selfTag } = this.deps;
    await control.sync();
    const tag = tagOfDelivery(ctx.params['deliveryId'] ?? '');
    const holder = tag === undefined || tag === selfTag ? undefined : await this.deps.nodeOfTag(tag);
    if (holder === undefined || holder === self) return handler(ctx);
    this.deps.tenancy.authenticate(ctx.apiKey); // a bad key is 401 here, whether or not the holder is running
    return replyOf(await nodes.ask(holder, toSentRequest(id, ctx)));
  }

  private async ownerRead(id: string, handler: Handler, ctx: RequestContext): Promise<Reply> {
    const user = OWNER_READS.get(id)?.(ctx);
    await this.deps.control.sync();
    if (typeof user !== 'string' || !isUuid(user)) return handler(ctx); // the handler answers the 400 or 404
    let org: string;
    try {
      org = this.deps.tenancy.authenticate(ctx.apiKey).organizationId;
    } catch {
      return handler(ctx); // the handler answers the key's error in its own envelope
    }
    const partition = partitionOf(org, user, this.deps.partitions);
    if (this.deps.owners.owns(partition) && (await this.deps.owners.caughtUp(partition))) return handler(ctx);
    return replyOf((await this.deps.rpc.ask(partition, { kind: 'route', sent: toSentRequest(id, ctx) })) as SentAnswer);
  }

  private async retryingUnknownKey<T>(work: () => T | Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (!isUnknownKey(error)) throw error;
      await this.deps.control.sync();
      return work();
    }
  }
}
