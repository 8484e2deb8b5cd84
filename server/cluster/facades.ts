// What the data routes see of the domain on a cluster node (issue 15): the same interfaces as on one node, with
// the writes that must be shared sent where they belong.
// - identity: a track resolution that would write (a new user, an alias to bind) is a control-plane command, applied
//   by every node in one order; one that writes nothing is answered from this node's replica.
// - schemas: an event that grows its schema (D30) grows it through a control-plane command first.
// - pipeline: `append` publishes each event to its partition of the event log and answers once JetStream
//   acknowledged it; memberships are asked of the partition's owner; sizes are summed over the owners' counters;
//   catch-ups and re-evaluations run here only for the users of partitions this node owns (every node applies the
//   commands that cause them, each for its own users).

import type { Identity, TrackIdent, TrackResolution } from '../domain/identity/index.js';
import type { SchemaRegistry } from '../domain/schemas/index.js';
import type { IngestPipeline, AppendRequest, AppendResult, CatchUpOptions } from '../ingest/types.js';
import { partitionOf, toStoredEvent, type StoredEvent } from '../domain/events/index.js';
import type { BatchOp } from '../store/contract.js';
import type { ControlLog } from './control-log.js';
import type { EventLog } from './event-log.js';
import type { PartitionOwners } from './owners.js';
import type { ClusterSizes } from './sizes.js';
import { decodeLoggedEvent, encodeLoggedEvent, loggedEventId } from './event-message.js';
import { commandSeq } from './scope.js';

/** `target` with some of its methods replaced; every other method is called on `target` itself. */
export function overriding<T extends object>(target: T, overrides: Partial<T>): T {
  // Bound once per method: the pipeline's methods are called per event.
  const bound = new Map<PropertyKey, unknown>();
  return new Proxy(target, {
    get(object, property) {
      if (Object.prototype.hasOwnProperty.call(overrides, property)) return overrides[property as keyof T];
      const value = Reflect.get(object, property, object) as unknown;
      if (typeof value !== 'function') return value;
      let method = bound.get(property);
      if (method === undefined) bound.set(property, (method = (value as (...args: unknown[]) => unknown).bind(object)));
      return method;
    },
  });
}

const inCommand = (): boolean => commandSeq() !== undefined;

export function clusterIdentity(identity: Identity, control: ControlLog): Identity {
  return overriding(identity, {
    async resolveForTrack(org: string, ident: TrackIdent): Promise<TrackResolution> {
      if (inCommand()) return identity.resolveForTrack(org, ident);
      const known = await identity.resolveForTrackReadOnly(org, ident);
      if (known !== undefined) return known;
      return (await control.submit('resolve', { org, ident })) as TrackResolution;
    },
  });
}

export function clusterSchemas(schemas: SchemaRegistry, control: ControlLog): SchemaRegistry {
  return overriding(schemas, {
    async check(org: string, name: string, properties: Readonly<Record<string, unknown>>): Promise<BatchOp[]> {
      if (inCommand()) return schemas.check(org, name, properties);
      // Refusals (D30 mismatch, D40 limits) are answered from this node's replica, before anything is sent.
      const growth = await schemas.check(org, name, properties);
      if (growth.length === 0) return [];
      schemas.invalidate(org, name);
      await control.submit('schema', { org, name, properties });
      return [];
    },
  });
}

/** Asks the owner of a user's partition for the user's memberships once it applied the partition through `seq`. */
export type MembershipsAsk = (org: string, user: string, partition: number) => Promise<readonly number[]>;

export interface ClusterPipelineDeps {
  readonly local: IngestPipeline;
  readonly log: EventLog;
  readonly owners: PartitionOwners;
  readonly sizes: ClusterSizes;
  readonly askOwner: MembershipsAsk;
}

export function clusterPipeline({ local, log, owners, sizes, askOwner }: ClusterPipelineDeps): IngestPipeline {
  const partitionOfUser = (org: string, user: string) => partitionOf(org, user, local.partitions);
  const owned = (org: string, users: readonly string[]) => users.filter((user) => owners.owns(partitionOfUser(org, user)));
  const membershipsOf = async (org: string, user: string): Promise<readonly number[]> => {
    const partition = partitionOfUser(org, user);
    if (owners.owns(partition) && (await owners.caughtUp(partition))) return local.membershipsOf(org, user);
    return askOwner(org, user, partition);
  };
  return overriding(local, {
    async append(request: AppendRequest): Promise<AppendResult> {
      if (request.extraOps !== undefined && request.extraOps.length > 0) {
        throw new Error('a cluster append carries no extra writes (schema growth and users go through the control plane)');
      }
      const { org, user } = request;
      const partition = partitionOfUser(org, user);
      // Sent in order on one connection (a user's events keep their order in the partition), acknowledged together.
      const published = await Promise.all(request.events.map((event) => log.publish(partition, encodeLoggedEvent(org, user, event), loggedEventId(org, user, event.id))));
      const events: StoredEvent[] = [];
      for (const [index, event] of request.events.entries()) {
        const { seq, duplicate } = published[index] as { seq: number; duplicate: boolean };
        // D29: a retry inside the stream's duplicate window answers the event first stored under its id.
        const first = duplicate ? await log.payloadAt(seq) : undefined;
        events.push(toStoredEvent(user, first === undefined ? event : decodeLoggedEvent(first).event, seq));
      }
      const memberships = request.memberships === true ? await membershipsOf(org, user) : [];
      return { events, memberships };
    },
    membershipsOf,
    audienceSize: (org: string, code: number) => sizes.total(org, code),
    catchUp: (org: string, users: readonly string[], options?: CatchUpOptions) => local.catchUp(org, owned(org, users), options),
    reevaluate: (org: string, users: readonly string[]) => local.reevaluate(org, owned(org, users)),
  });
}
