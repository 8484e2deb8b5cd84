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
// - node-local (a delivery retry, of the deliveries this node's outbox holds).
// A request whose key this node does not know yet is tried again once this node caught up with the control plane.

import type { Handler, HttpServer, Reply, RequestContext } from '../http/index.js';
import { ServiceError } from '../errors.js';
import type { Tenancy } from '../domain/tenancy/index.js';
import { isUuid } from '../domain/identity/index.js';
import { partitionOf } from '../domain/events/index.js';
import type { ControlLog } from './control-log.js';
import type { OwnerRpc } from './owner-rpc.js';
import type { PartitionOwners } from './owners.js';
import { replyOf, routeId, toSentRequest, type SentAnswer } from './requests.js';

/** Routes that read one user's data, with where the user id is. */
type UserOf = (ctx: RequestContext) => string | null | undefined;
const OWNER_READS: ReadonlyMap<string, UserOf> = new Map<string, UserOf>([
  ['GET /v2.0/events', (ctx: RequestContext) => ctx.query.get('user_id')],
  ['GET /cohorts-api/v2/users/:userId/cohorts', (ctx: RequestContext) => ctx.params['userId']],
  ['GET /cohorts-api/v2/cohorts/:cohortId/explain', (ctx: RequestContext) => ctx.query.get('user_id')],
]);

const DATA_ROUTES = new Set(['POST /v2.0/events', 'POST /ccs/v1/segmentation', 'POST /ccs/v1/segmentation/stateless']);

// A backup is of this node's store; a delivery retry, of this node's outbox.
const NODE_LOCAL = new Set(['POST /reactions-api/v1/reactions/:reactionId/deliveries/:deliveryId/retry', 'POST /admin/v1/backups']);

export type RouteKind = 'replicated' | 'control-read' | 'owner-read' | 'data' | 'node-local';

export function routeKind(method: string, pattern: string): RouteKind {
  const id = routeId(method, pattern);
  if (DATA_ROUTES.has(id)) return 'data';
  if (OWNER_READS.has(id)) return 'owner-read';
  if (NODE_LOCAL.has(id)) return 'node-local';
  return method === 'GET' ? 'control-read' : 'replicated';
}

export interface RoutingDeps {
  readonly control: ControlLog;
  readonly tenancy: Tenancy;
  readonly owners: PartitionOwners;
  readonly rpc: OwnerRpc;
  readonly partitions: number;
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
    }
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
