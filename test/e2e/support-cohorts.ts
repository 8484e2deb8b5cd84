// A real HTTP server with only the Cohorts API routes over real services (temp LevelDB, main-thread engine), for
// test/e2e/cohorts.test.ts, with its assertions and fixtures: organizations, workspaces and keys are made through
// the services directly.

import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHttpServer } from '../../server/http/index.js';
import { openLevelStore } from '../../server/store/level.js';
import { closeServices, openServices, type Services, type ServicesOptions } from '../../server/services.js';
import { registerCohortsRoutes } from '../../server/routes/cohorts.js';
import type { AccessLevel, InitializedOrganization, KeyType } from '../../server/domain/tenancy/index.js';
import type { Cohort } from '../../server/domain/cohorts/index.js';
import { validateQuery } from '../../engine/index.js';

export const COHORTS = '/cohorts-api/v2/cohorts';
export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const PAGEVIEWS = { event: 'Pageview' };
export const TWO_PAGEVIEWS = { event: 'Pageview', frequency: { greater_than_or_equal_to: 2 } };

export interface RequestOptions {
  /** The API key; null sends none. */
  readonly key?: string | null;
  /** Where the key goes: the X-API-Key header (default) or the `k` query parameter. */
  readonly keyIn?: 'header' | 'query';
  /** A JSON value (serialised) or a raw string body. */
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
}

export interface Answer {
  readonly status: number;
  readonly text: string;
  /** The parsed JSON body; undefined for an empty body. */
  readonly body: any;
  readonly headers: Headers;
}

export interface CohortsHarness {
  readonly url: string;
  readonly services: Services;
  /** A fresh organization (root workspace, private `descendants` key, public key). */
  newOrg(name?: string): Promise<InitializedOrganization>;
  newWorkspace(parentId: string, name?: string): Promise<string>;
  newKey(workspaceId: string, access: AccessLevel, type?: KeyType): Promise<string>;
  /** A lookalike cohort (only the admin CLI makes them, D16), created through the registry. */
  newLookalike(workspaceId: string, query: unknown): Promise<Cohort>;
  request(method: string, path: string, options?: RequestOptions): Promise<Answer>;
  close(): Promise<void>;
}

/** `options` (tests: backfill hooks) are passed to the services. */
export async function startCohortsHarness(options: ServicesOptions = {}): Promise<CohortsHarness> {
  const dir = await mkdtemp(join(tmpdir(), 'audience-cohorts-e2e-'));
  const store = await openLevelStore(join(dir, 'data'));
  const services = await openServices(store, { threads: 0, ...options });
  // trustProxy: a loopback request is secure unless it says `X-Forwarded-Proto: http` (D7).
  const http = createHttpServer({ host: '127.0.0.1', port: 0, trustProxy: true, log: () => undefined });
  registerCohortsRoutes(http, services);
  const { url } = await http.listen();
  const now = () => new Date();

  return {
    url,
    services,
    newOrg: (name = 'Cohorts test organization') =>
      services.tenancy.initOrganization({ name, now: now(), newId: randomUUID, newKey: randomUUID }),
    newWorkspace: async (parentId, name = 'workspace') =>
      (await services.tenancy.createWorkspace({ name, parentId, now: now(), newId: randomUUID })).id,
    newKey: async (workspaceId, access, type = 'private') =>
      (await services.tenancy.createKey({ workspaceId, type, access, now: now(), newId: randomUUID, newKey: randomUUID })).key,
    newLookalike: async (workspaceId, query) => {
      const validated = validateQuery(query);
      if (!validated.ok) throw new Error('the lookalike query must be valid');
      const cohort = await services.cohorts.create({
        workspaceId,
        name: 'Lookalike',
        query,
        ast: validated.query,
        references: validated.references,
        lookalike: true,
        now: now(),
        newId: randomUUID,
      });
      services.pipeline.planChanged(cohort.organization_id);
      return cohort;
    },
    request: async (method, path, options = {}) => {
      const headers: Record<string, string> = { ...options.headers };
      let target = `${url}${path}`;
      if (options.key !== undefined && options.key !== null) {
        if (options.keyIn === 'query') target += `${path.includes('?') ? '&' : '?'}k=${encodeURIComponent(options.key)}`;
        else headers['X-API-Key'] = options.key;
      }
      let body: string | undefined;
      if (options.body !== undefined) {
        headers['Content-Type'] = 'application/json';
        body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
      }
      const response = await fetch(target, { method, headers, body });
      const text = await response.text();
      return { status: response.status, text, body: text === '' ? undefined : JSON.parse(text), headers: response.headers };
    },
    close: async () => {
      await http.close();
      await closeServices(services);
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** D10: the cohort envelope, with the status and subcode asserted. */
export function expectError(answer: Answer, status: number, code: number): void {
  expect({ status: answer.status, code: answer.body?.error?.code }).toEqual({ status, code });
  expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
  expect(answer.body.request_id).toMatch(UUID);
  expect(answer.body.request_id).toBe(answer.headers.get('x-request-id'));
  const { type, status_code, status: phrase, message, docs } = answer.body.error;
  expect(type).toMatch(/^https:\/\/tools\.ietf\.org\/html\/rfc72(31|35)#section-/);
  expect(status_code).toBe(status);
  expect([typeof phrase, typeof message, typeof docs]).toEqual(['string', 'string', 'string']);
  expect(docs).toMatch(new RegExp(`/errors/${status}/${code}$`));
}

/** D18: a 400 1002 whose cause starts with the JSON path of the first problem. */
export function expectBadBody(answer: Answer, pathPrefix: string): void {
  expectError(answer, 400, 1002);
  expect(answer.body.error.cause).toMatch(new RegExp(`^${pathPrefix.replace(/[.[\]]/g, '\\$&')}[.:\\[]`));
}

/** POST a cohort; asserts 201 and answers the created cohort. */
export async function createCohort(h: CohortsHarness, key: string, body: Record<string, unknown>): Promise<any> {
  const answer = await h.request('POST', COHORTS, { key, body });
  expect(answer.status).toBe(201);
  return answer.body;
}

/** One event for a user, through the ingest pipeline (acknowledged once durable). */
export async function trackEvent(h: CohortsHarness, org: string, user: string, name: string): Promise<void> {
  await h.services.pipeline.append({
    org,
    user,
    events: [{ id: randomUUID(), name, time: new Date().toISOString(), timeMs: Date.now(), properties: {} }],
  });
}

/** An organization with root → a → a1 and root → b, a key of `a` per access level, and one cohort per workspace. */
export async function makeHierarchy(h: CohortsHarness) {
  const org = await h.newOrg();
  const a = await h.newWorkspace(org.workspace_id, 'a');
  const a1 = await h.newWorkspace(a, 'a1');
  const b = await h.newWorkspace(org.workspace_id, 'b');
  const aKey = await h.newKey(a, 'workspace');
  const aDescKey = await h.newKey(a, 'descendants');
  const rootKey = org.private_key;
  const make = (workspace_id: string, name: string) => createCohort(h, rootKey, { name, query: PAGEVIEWS, workspace_id });
  const cohorts = { root: await make(org.workspace_id, 'root'), a: await make(a, 'a'), a1: await make(a1, 'a1'), b: await make(b, 'b') };
  return { org, ws: { a, a1, b }, aKey, aDescKey, rootKey, cohorts };
}

/** The sorted names of a list answer. */
export const names = (answer: Answer) => (answer.body as Array<{ name: string }>).map((c) => c.name).sort();
