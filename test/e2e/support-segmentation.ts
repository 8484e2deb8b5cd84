// The segmentation tests' own server: the real services over a temp LevelDB, an organization with a child workspace
// and keys of each kind, sample cohorts, a second organization, and a `call` helper speaking JSON over HTTP.

import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { createHttpServer } from '../../server/http/index.js';
import { openLevelStore } from '../../server/store/level.js';
import type { Store } from '../../server/store/contract.js';
import { closeServices, openServices, type Services } from '../../server/services.js';
import { validateQuery } from '../../engine/index.js';
import { registerSegmentationRoutes, type SegmentationHandle } from '../../server/routes/segmentation/index.js';

export const STATELESS = '/ccs/v1/segmentation/stateless';
export const STATEFUL = '/ccs/v1/segmentation';

export interface SegmentationKeys {
  readonly org: string;
  /** The root workspace's private key, `descendants` access. */
  readonly rootPrivate: string;
  /** The root workspace's public key, `workspace` access. */
  readonly rootPublic: string;
  /** A public key of the child workspace, `workspace` access. */
  readonly childPublic: string;
}

export interface CallOptions {
  /** Default: the root public key; null sends none. */
  key?: string | null;
  /** Send the key as `k` instead of the header. */
  keyInQuery?: boolean;
  query?: string;
  headers?: Record<string, string>;
  /** A raw body instead of JSON.stringify(body). */
  raw?: string;
}

export interface CallResult {
  status: number;
  body: any;
}

export interface SegmentationHarness {
  readonly url: string;
  readonly store: Store;
  readonly services: Services;
  /** Publication counters of the stateless route, and a way to wait for its publications (D24). */
  readonly segmentation: SegmentationHandle;
  readonly keys: SegmentationKeys;
  readonly otherOrg: { readonly org: string; readonly key: string };
  /** Codes of the sample cohorts: >= 3 Pageviews and a Click this session (root), any Pageview (child workspace). */
  readonly codes: { readonly pageviews3: number; readonly clickSession: number; readonly childPageview: number };
  call(path: string, body: unknown, options?: CallOptions): Promise<CallResult>;
  /** Creates a cohort in the root workspace (the plan changes); its code. */
  addCohort(name: string, query: unknown): Promise<number>;
  close(): Promise<void>;
}

async function createCohort(services: Services, workspaceId: string, name: string, query: unknown): Promise<number> {
  const validated = validateQuery(query);
  if (!validated.ok) throw new Error(`bad test query: ${JSON.stringify(validated.problems)}`);
  const cohort = await services.cohorts.create({
    workspaceId,
    name,
    query,
    ast: validated.query,
    references: validated.references,
    now: new Date(),
    newId: randomUUID,
  });
  services.pipeline.planChanged(cohort.organization_id);
  return cohort.code;
}

/** `recentStateBytes`: the route's recently sealed states (default its own default; 0 opens every state sent back). */
export async function startSegmentationHarness(options: { readonly recentStateBytes?: number } = {}): Promise<SegmentationHarness> {
  const dir = await mkdtemp(join(tmpdir(), 'audience-segmentation-'));
  const store = await openLevelStore(join(dir, 'data'));
  const services = await openServices(store, { threads: 0 });
  const now = new Date();
  const ids = { now, newId: randomUUID, newKey: randomUUID };
  const init = await services.tenancy.initOrganization({ name: 'Org', ...ids });
  const child = await services.tenancy.createWorkspace({ name: 'Child', parentId: init.workspace_id, now, newId: randomUUID });
  const childKey = await services.tenancy.createKey({ workspaceId: child.id, type: 'public', ...ids });
  const other = await services.tenancy.initOrganization({ name: 'Other', ...ids });
  const keys = { org: init.organization_id, rootPrivate: init.private_key, rootPublic: init.public_key, childPublic: childKey.key };

  const codes = {
    pageviews3: await createCohort(services, init.workspace_id, '3 pageviews', { event: 'Pageview', frequency: { greater_than_or_equal_to: 3 } }),
    clickSession: await createCohort(services, init.workspace_id, 'clicked this session', { event: 'Click', during: 'this_session' }),
    childPageview: await createCohort(services, child.id, 'child: any pageview', { event: 'Pageview' }),
  };

  const log = process.env['SEGMENTATION_TEST_LOG'] === '1' ? (line: string) => console.error(line) : () => undefined;
  const http = createHttpServer({ host: '127.0.0.1', port: 0, trustProxy: true, log });
  const segmentation = registerSegmentationRoutes(http, services, { log, ...options });
  const { url } = await http.listen();

  const call = async (path: string, body: unknown, options: CallOptions = {}): Promise<CallResult> => {
    const key = options.key === undefined ? keys.rootPublic : options.key;
    const params = new URLSearchParams(options.query ?? '');
    const headers: Record<string, string> = { 'Content-Type': 'application/json', ...options.headers };
    if (key !== null) {
      if (options.keyInQuery === true) params.set('k', key);
      else headers['X-API-Key'] = key;
    }
    const search = params.toString();
    const response = await fetch(`${url}${path}${search === '' ? '' : `?${search}`}`, {
      method: 'POST',
      headers,
      body: options.raw ?? (body === undefined ? undefined : JSON.stringify(body)),
    });
    const text = await response.text();
    return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
  };

  return {
    url,
    store,
    services,
    segmentation,
    keys,
    otherOrg: { org: other.organization_id, key: other.public_key },
    codes,
    call,
    addCohort: (name, query) => createCohort(services, init.workspace_id, name, query),
    close: async () => {
      await http.close();
      await closeServices(services);
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** D10: an error in the segmentation (cohort) envelope, with `type` and `status_code`. */
export function expectError(response: CallResult, status: number, code: number): void {
  expect(response.status).toBe(status);
  expect(response.body.error.code).toBe(code);
  expect(response.body.error.status_code).toBe(status);
  expect(typeof response.body.error.type).toBe('string');
  expect(typeof response.body.request_id).toBe('string');
}

let minute = 0;
/** Distinct, increasing event times in the past (D29: at most 5 minutes ahead of the server clock). */
export function at(): string {
  minute += 1;
  return new Date(Date.UTC(2025, 0, 1, 0, minute)).toISOString();
}

export const pageview = (extra: Record<string, unknown> = {}) => ({ name: 'Pageview', time: at(), properties: {}, ...extra });
