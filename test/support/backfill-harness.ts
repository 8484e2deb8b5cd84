// Test support of the backfill tests: real services over a temp LevelDB directory with one organization, cohorts
// changed the way the Cohorts API changes them (registry, then pipeline and backfill told), users' random histories
// appended through the pipeline, and the reference evaluator's memberships over each user's stored history.

import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EMPTY_CONTEXT, validateQuery } from '../../engine/index.js';
import type { EngineEvent } from '../../engine/api.js';
import { replayUserEvents, toEngineEvent } from '../../server/domain/events/index.js';
import type { Cohort, CohortPatch } from '../../server/domain/cohorts/index.js';
import type { NewEvent } from '../../server/ingest/index.js';
import { closeServices, openServices, type Services, type ServicesOptions } from '../../server/services.js';
import { openLevelStore } from '../../server/store/level.js';
import type { Store } from '../../server/store/contract.js';
import { evaluateReference, type ReferenceCohort } from '../reference/index.js';

export interface Harness {
  readonly services: Services;
  readonly store: Store;
  readonly org: string;
  readonly workspace: string;
  create(query: unknown, options?: { segment_type?: 'real_time' | 'offline' }): Promise<Cohort>;
  update(cohort: Cohort, patch: { query?: unknown; state?: 'Enabled' | 'Disabled' }): Promise<Cohort>;
  remove(cohort: Cohort): Promise<void>;
  /** Appends the events in requests of `perRequest` events. */
  append(user: string, events: readonly EngineEvent[], perRequest?: number): Promise<void>;
  /** Stops the service like `audience serve` does (store closed); the directory stays. */
  close(): Promise<void>;
}

export interface HarnessDir {
  readonly path: string;
  remove(): Promise<void>;
}

export async function harnessDir(): Promise<HarnessDir> {
  const path = await mkdtemp(join(tmpdir(), 'audience-backfill-'));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}

let eventIds = 0;

/** Opens services over `dir` (LevelDB); the first open of a directory creates the organization. */
export async function openHarness(dir: string, options: ServicesOptions = {}, existing?: { org: string; workspace: string }): Promise<Harness> {
  const store = await openLevelStore(dir);
  // Histories are timed in the past and compared with the reference at each user's last event: no D36 deadlines
  // (server/ingest/deadlines/ tests those).
  const services = await openServices(store, { threads: 0, log: () => undefined, ...options, tuning: { deadlines: false, ...options.tuning } });
  const now = () => new Date();
  const ids = existing ?? (await (async () => {
    const made = await services.tenancy.initOrganization({ name: 'Backfill', now: now(), newId: randomUUID, newKey: randomUUID });
    return { org: made.organization_id, workspace: made.workspace_id };
  })());
  const told = (org: string): void => {
    services.pipeline.planChanged(org);
    services.backfill.planChanged(org);
  };
  return {
    services,
    store,
    org: ids.org,
    workspace: ids.workspace,
    create: async (query, opts = {}) => {
      const validated = validateQuery(query);
      if (!validated.ok) throw new Error(`invalid test query: ${JSON.stringify(validated.problems)}`);
      const cohort = await services.cohorts.create({
        workspaceId: ids.workspace,
        name: 'c',
        query,
        ast: validated.query,
        references: validated.references,
        segment_type: opts.segment_type,
        now: now(),
        newId: randomUUID,
      });
      told(cohort.organization_id);
      return cohort;
    },
    update: async (cohort, patch) => {
      const change: { -readonly [K in keyof CohortPatch]: CohortPatch[K] } = {};
      if (patch.query !== undefined) {
        const validated = validateQuery(patch.query);
        if (!validated.ok) throw new Error(`invalid test query: ${JSON.stringify(validated.problems)}`);
        Object.assign(change, { query: patch.query, ast: validated.query, references: validated.references });
      }
      if (patch.state !== undefined) change.state = patch.state;
      const updated = await services.cohorts.update(cohort.id, change, now());
      told(updated.organization_id);
      return updated;
    },
    remove: async (cohort) => {
      await services.cohorts.delete(cohort.id);
      told(cohort.organization_id);
    },
    append: async (user, events, perRequest = 25) => {
      for (let i = 0; i < events.length; i += perRequest) {
        const batch = events.slice(i, i + perRequest).map((event): NewEvent => {
          const out: { -readonly [K in keyof NewEvent]: NewEvent[K] } = {
            id: `ev-${++eventIds}-${randomUUID()}`,
            name: event.name,
            time: new Date(event.time).toISOString(),
            timeMs: event.time,
            properties: event.properties,
          };
          if (typeof event.session_id === 'string') out.session_id = event.session_id;
          if (typeof event.view_id === 'string') out.view_id = event.view_id;
          return out;
        });
        await services.pipeline.append({ org: ids.org, user, events: batch });
      }
    },
    close: async () => {
      await closeServices(services);
      await store.close();
    },
  };
}

/** A user's stored history as the engine sees it (arrival order). */
export async function storedHistory(store: Store, org: string, user: string): Promise<EngineEvent[]> {
  const events: EngineEvent[] = [];
  for await (const stored of replayUserEvents(store, org, user)) events.push(toEngineEvent(stored));
  return events;
}

/** The reference memberships of every user over its full stored history, and the sizes they add up to. */
export async function referenceAudiences(
  store: Store,
  org: string,
  users: readonly string[],
  cohorts: readonly ReferenceCohort[],
): Promise<{ memberships: Map<string, number[]>; sizes: Map<number, number> }> {
  const memberships = new Map<string, number[]>();
  const sizes = new Map<number, number>(cohorts.map((cohort) => [cohort.code, 0]));
  for (const user of users) {
    const history = await storedHistory(store, org, user);
    const steps = evaluateReference(cohorts, history, EMPTY_CONTEXT);
    const last = steps[steps.length - 1]?.memberships ?? [];
    memberships.set(user, last);
    for (const code of last) sizes.set(code, (sizes.get(code) ?? 0) + 1);
  }
  return { memberships, sizes };
}
