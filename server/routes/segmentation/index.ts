// The segmentation area (D21–D24): `POST /ccs/v1/segmentation/stateless` (events + signed prior state in, cohorts +
// new state out, events published to ingestion after the reply) and the stateful `POST /ccs/v1/segmentation`.
//
// Choices where the spec and decisions are silent:
// - Both routes take public and private keys (D6); a private key over an insecure transport is 403 2001 (D7).
// - `synchronous-validation` accepts `true` / `false` in any case; absent is false; anything else (an empty value
//   or the parameter repeated included) is 400 1000.
// - `events` absent or null counts as no events. Events follow the track rules (D29: name characters, property
//   keys, time with an offset and at most 5 minutes ahead of the server clock), because they are published to the
//   same ingestion; a problem is 400 1002 naming `events[i].<field>`. Unknown event fields are ignored (an event
//   `id` too: every published event gets a fresh id).
// - `state.internal_state` is `{v: 2, c}` (D42): `c` is base64 of a random 96-bit IV, the AES-256-GCM encryption of
//   the entry time (epoch ms) of each cohort the user is in and the engine state, and the 16-byte tag; the
//   additional data binds (v, organization, user). The per-organization key is HKDF-SHA256 of the organization's
//   32-byte secret (`m!state-secret!{org}`, the HMAC secret of D23), so it survives restarts. Nothing in it is
//   readable: not the codes of cohorts the key cannot see, nor entry times. A state sent back for another user,
//   another organization, modified in any way (a flipped bit, truncated), or not an object is 400 1002. The
//   version-1 states of D23 (`{v: 1, s, e, sig}`, HMAC) handed out before are still accepted; only v2 is written.
//   `state.external_state` and `state.cohorts` sent back are ignored (only `internal_state` is read). A state whose cohorts were disabled or deleted since
//   just loses those memberships; a cohort created since starts from the events of this call on (no history).
// - `external_state` is `{"<code>": {"entered_at": ISO}}` for each VISIBLE cohort the user is in: when the user
//   (last) entered it, i.e. the effective time (E1) of the event that caused the entry.
// - `cohorts` and the stateful answer list visible codes only (D9 visibility of the key), as strings, ascending.
// - With `synchronous-validation=true` the schema check (1007, `events[i].properties...`) runs before identity,
//   state or segmentation; the events are still published after the reply.
// - Published events are appended for the resolved user (for an unknown alias, the D22 UUID v5 user), which
//   records that user (`u!`) like tracking does; alias bindings are never written by the stateless route (D22).
//   Non-conforming events are dropped and counted (`SegmentationHandle.stats`); a failed append is logged and counted.
//   The publication backlog is bounded (publish.ts, PUBLISH_BACKLOG events): past it, a call waits for room before it
//   is handled, so a sustained load beyond what ingestion absorbs slows the route instead of growing memory.
// - The engine state inside `internal_state` holds only the slots the user touched (engine/state/codec.ts, format 2).
// - Stateful route: the schema of every event is verified first (1007 before anything is written), then the user is
//   resolved as for tracking (D29: `alias` is one alias of priority 0; a new alias creates and binds a user), then
//   the events are appended and the answer waits for durability. With no events nothing is appended and the
//   user's current memberships are answered.

import type { HttpServer, RequestContext } from '../../http/index.js';
import type { Services } from '../../services.js';
import type { Principal } from '../../domain/tenancy/index.js';
import { authenticateClient } from '../auth.js';
import type { StatelessIdent, TrackIdent } from '../../domain/identity/index.js';
import { ServiceError, badParameter, schemaMismatch } from '../../errors.js';
import type { BatchOp } from '../../store/contract.js';
import { newUserState, segment, type Transition } from '../../../engine/index.js';
import { parseSegmentationBody, toEngineEvents, toNewEvents, type SegmentationEvent } from './body.js';
import { PlanCache } from './plans.js';
import { Publisher, type SegmentationStats } from './publish.js';
import { StateSigner, type PersistSlotSet } from './state.js';
import { RecentStates, defaultRecentStateBytes } from './recent-states.js';

export type { SegmentationStats } from './publish.js';

/** What the segmentation routes expose to their owner: publication counters and a way to wait for them. */
export interface SegmentationHandle {
  stats(org: string): SegmentationStats;
  /** Summed over every organization (metrics). */
  totals(): SegmentationStats;
  published(org?: string): Promise<void>;
  /** The states sealed lately and kept decoded: calls that started from one, calls that opened theirs, bytes held. */
  recentStates(): ReturnType<RecentStates['stats']>;
}
export { stateSecretKey, slotSetKey, type InternalState } from './state.js';
export { MAX_SEGMENTATION_EVENTS } from './body.js';

export type SegmentationDeps = Pick<
  Services,
  'store' | 'tenancy' | 'cohorts' | 'identity' | 'schemas' | 'imports' | 'pipeline' | 'clock' | 'newId'
>;

export interface SegmentationOptions {
  /** Where failures of the publication after the reply are logged; default stderr. */
  readonly log?: (line: string) => void;
  /**
   * Creates an organization's state secret where none is stored (default: 32 random bytes written here). A cluster
   * node creates it through the control plane, so that every node seals and opens states with the same key.
   */
  readonly createStateSecret?: (org: string) => Promise<void>;
  /**
   * Makes a plan's slot set durable where every node reads it (default: this store). A cluster node writes it
   * through the control plane, so that a state sealed on one node opens on every other after a plan change.
   */
  readonly persistSlotSet?: PersistSlotSet;
  /** Bytes the states sealed lately may hold decoded (recent-states.ts; default `defaultRecentStateBytes()`; 0: none). */
  readonly recentStateBytes?: number;
}

const SWITCH = 'synchronous-validation';

export function registerSegmentationRoutes(
  http: HttpServer,
  services: SegmentationDeps,
  options: SegmentationOptions = {},
): SegmentationHandle {
  const { tenancy, cohorts, identity, schemas, imports, pipeline, clock, newId } = services;
  const log = options.log ?? ((line: string) => void process.stderr.write(`${line}\n`));
  const plans = new PlanCache(cohorts);
  const signer = new StateSigner(services.store, options.createStateSecret, options.persistSlotSet);
  const publisher = new Publisher({ schemas, pipeline, log });
  const recent = new RecentStates(options.recentStateBytes ?? defaultRecentStateBytes());

  // D6: public keys may call both routes; D7: a private key still needs a secure transport.
  const authenticate = (ctx: RequestContext): Principal => authenticateClient(tenancy, ctx);

  /** D9/D23: the codes of the cohorts the key may see, as strings, ascending. */
  const visibleCodes = (principal: Principal, codes: readonly number[]): number[] =>
    [...codes]
      .sort((a, b) => a - b)
      .filter((code) => {
        const cohort = cohorts.getByCode(principal.organizationId, code);
        return cohort !== undefined && tenancy.canSeeWorkspace(principal, cohort.workspace_id);
      });

  http.route(
    'POST',
    '/ccs/v1/segmentation/stateless',
    'segmentation',
    async (ctx) => {
      // D24: the events are published after the reply; while the backlog is full, a call waits for room first.
      const room = publisher.room();
      if (room !== undefined) await room;
      const principal = authenticate(ctx);
      const synchronous = readSwitch(ctx.query);
      const body = parseSegmentationBody(ctx.body, clock.now(), true);
      const org = principal.organizationId;
      if (synchronous) await schemas.verify(org, body.events);

      const user = await identity.resolveStateless(org, body.ident);
      const plan = plans.planFor(org);
      let prior = body.internalState === undefined ? undefined : recent.take(org, user, body.internalState, plan);
      if (prior === undefined && body.internalState !== undefined) {
        prior = await signer.open(org, user, body.internalState, plan);
        recent.keepOpened(org, user, body.internalState, prior, plan);
      }
      const result = segment(plan, prior?.state ?? newUserState(), toEngineEvents(body.events), await imports.contextFor(org, user));
      const entries = entryTimes(prior?.entries, result.transitions, result.memberships, result.state.time);
      const internal = await signer.seal(org, user, result.state, entries);
      recent.remember(org, user, internal, result.state, entries);

      const visible = visibleCodes(principal, result.memberships);
      const external: Record<string, { entered_at: string }> = {};
      for (const code of visible) external[String(code)] = { entered_at: new Date(entries.get(code) as number).toISOString() };

      publisher.publishLater({ org, user, events: toNewEvents(body.events, newId) });
      return {
        status: 200,
        body: { user_id: user, state: { internal_state: internal, external_state: external, cohorts: visible.map(String) } },
      };
    },
    { body: 'required', cors: 'public' },
  );

  http.route(
    'POST',
    '/ccs/v1/segmentation',
    'segmentation',
    async (ctx) => {
      const principal = authenticate(ctx);
      const body = parseSegmentationBody(ctx.body, clock.now(), false);
      const org = principal.organizationId;
      await schemas.verify(org, body.events);
      const { userId: user } = await identity.resolveForTrack(org, toTrackIdent(body.ident));
      let memberships: readonly number[];
      if (body.events.length === 0) {
        memberships = await pipeline.membershipsOf(org, user);
      } else {
        const { ops, grown } = await checkSchemas(services, org, body.events);
        try {
          memberships = (await pipeline.append({ org, user, events: toNewEvents(body.events, newId), extraOps: ops, memberships: true })).memberships;
        } catch (error) {
          for (const name of grown) schemas.invalidate(org, name);
          throw error;
        }
      }
      return { status: 200, body: { user_id: user, cohorts: visibleCodes(principal, memberships).map(String) } };
    },
    { body: 'required', cors: 'public' },
  );
  return {
    stats: (org) => publisher.stats(org),
    totals: () => publisher.totals(),
    published: (org) => publisher.published(org),
    recentStates: () => recent.stats(),
  };
}

/** D21: the validation switch; absent is false. */
function readSwitch(query: URLSearchParams): boolean {
  const values = query.getAll(SWITCH);
  if (values.length === 0) return false;
  const value = (values[0] as string).toLowerCase();
  if (values.length > 1 || (value !== 'true' && value !== 'false')) {
    throw badParameter(`The value of ${SWITCH} is invalid.`, `${SWITCH}: expected true or false`);
  }
  return value === 'true';
}

/**
 * When the user entered each cohort they are in: carried over from the prior state, updated by this call's
 * transitions (E10), kept only for current memberships. A membership with no known entry (not expected) gets `now`.
 */
function entryTimes(
  prior: ReadonlyMap<number, number> | undefined,
  transitions: readonly Transition[],
  memberships: readonly number[],
  now: number,
): Map<number, number> {
  const entries = new Map(prior ?? []);
  for (const transition of transitions) {
    if (transition.kind === 'entered') entries.set(transition.cohort, transition.time);
    else entries.delete(transition.cohort);
  }
  const out = new Map<number, number>();
  for (const code of memberships) out.set(code, entries.get(code) ?? now);
  return out;
}

/** The stateful route resolves its user as tracking does (D29); `alias` is one alias of priority 0. */
function toTrackIdent(ident: StatelessIdent): TrackIdent {
  if ('user_id' in ident) return { user_id: ident.user_id };
  if ('alias' in ident) return { aliases: [{ tag: ident.alias.tag, id: ident.alias.id, priority: 0 }] };
  return { aliases: ident.aliases };
}

/** Checks (and grows) the schemas of the events in order; 1007 names `events[i]` (D11). */
async function checkSchemas(
  { schemas }: Pick<Services, 'schemas'>,
  org: string,
  events: readonly SegmentationEvent[],
): Promise<{ ops: BatchOp[]; grown: Set<string> }> {
  const ops: BatchOp[] = [];
  const grown = new Set<string>();
  for (const [index, event] of events.entries()) {
    try {
      const growth = await schemas.check(org, event.name, event.properties);
      if (growth.length > 0) grown.add(event.name);
      ops.push(...growth);
    } catch (error) {
      for (const name of grown) schemas.invalidate(org, name);
      if (error instanceof ServiceError && error.code === 1007) throw schemaMismatch(`events[${index}].${error.detail ?? 'properties'}`);
      throw error;
    }
  }
  return { ops, grown };
}
