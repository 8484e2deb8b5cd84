// A harness for the taxonomy routes alone: the real services over a temp LevelDB, an HTTP server (trusting
// X-Forwarded-Proto so tests can simulate plain HTTP, D7) with only registerTaxonomyRoutes, and an organization
// with a child and a sibling workspace and their keys (D9); plus the assertions and fixtures both test files use.

import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { createHttpServer } from '../../server/http/index.js';
import { openLevelStore } from '../../server/store/level.js';
import { closeServices, openServices, type Services } from '../../server/services.js';
import { registerTaxonomyRoutes } from '../../server/routes/taxonomy/index.js';
import { tempDir } from '../support/processes.js';

export const V1 = '/audience-api/v1';
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export interface Keys {
  /** Root workspace, private, `descendants` access (init's key). */
  readonly root: string;
  /** Root workspace, public. */
  readonly rootPublic: string;
  /** Root workspace, private, `workspace` access: does not see the child's imports. */
  readonly rootWorkspaceOnly: string;
  /** Child workspace (below the root), private, `workspace` access: sees the root's imports read-only. */
  readonly child: string;
  /** Sibling workspace (below the root, beside the child), private. */
  readonly sibling: string;
}

export interface CallOptions {
  /** Sent as X-API-Key; `null` sends none. Default the root private key. */
  readonly key?: string | null;
  /** Sent only as query `k` (a PermutiveAPI-style client). */
  readonly queryKey?: string;
  readonly body?: unknown;
  /** Content-Type: application/json with no body (GET/DELETE habit). */
  readonly jsonHeaderOnly?: boolean;
  readonly headers?: Record<string, string>;
}

export interface Reply<T = any> {
  readonly status: number;
  readonly body: T;
}

export interface TaxonomyHarness {
  readonly services: Services;
  readonly org: string;
  readonly workspaces: { readonly root: string; readonly child: string; readonly sibling: string };
  readonly keys: Keys;
  call<T = any>(method: string, path: string, options?: CallOptions): Promise<Reply<T>>;
  /** POST /imports (default a 3rd-party segments import with a fresh code), expecting 200; answers the import. */
  createImport(fields?: Record<string, unknown>, key?: string): Promise<any>;
  /** POST .../segments, expecting 200; answers the created segment. */
  createSegment(importId: string, code: string, extra?: Record<string, unknown>): Promise<any>;
  close(): Promise<void>;
}

export async function startTaxonomyHarness(): Promise<TaxonomyHarness> {
  const dir = await tempDir('audience-taxonomy-');
  const store = await openLevelStore(dir.path);
  const services = await openServices(store, { threads: 0, log: () => undefined });
  const now = new Date();
  const ids = { now, newId: randomUUID, newKey: randomUUID };
  const { tenancy } = services;
  const init = await tenancy.initOrganization({ name: 'Taxonomy org', ...ids });
  const root = init.workspace_id;
  const child = (await tenancy.createWorkspace({ name: 'child', parentId: root, now, newId: randomUUID })).id;
  const sibling = (await tenancy.createWorkspace({ name: 'sibling', parentId: root, now, newId: randomUUID })).id;
  const key = async (workspaceId: string, access: 'workspace' | 'descendants') =>
    (await tenancy.createKey({ workspaceId, type: 'private', access, ...ids })).key;
  const keys: Keys = {
    root: init.private_key,
    rootPublic: init.public_key,
    rootWorkspaceOnly: await key(root, 'workspace'),
    child: await key(child, 'workspace'),
    sibling: await key(sibling, 'descendants'),
  };
  const http = createHttpServer({ host: '127.0.0.1', port: 0, trustProxy: true, log: () => undefined });
  registerTaxonomyRoutes(http, services);
  const { url } = await http.listen();

  const call = async (method: string, path: string, options: CallOptions = {}): Promise<Reply> => {
    const headers: Record<string, string> = { ...options.headers };
    const apiKey = options.key === undefined ? (options.queryKey === undefined ? keys.root : null) : options.key;
    if (apiKey !== null) headers['X-API-Key'] = apiKey;
    let target = `${url}${path}`;
    if (options.queryKey !== undefined) target += `${path.includes('?') ? '&' : '?'}k=${options.queryKey}`;
    let body: string | undefined;
    if (options.body !== undefined || options.jsonHeaderOnly === true) headers['Content-Type'] = 'application/json';
    if (options.body !== undefined) body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
    const response = await fetch(target, { method, headers, body });
    const text = await response.text();
    return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
  };

  let importSeq = 0;
  const createImport = async (fields: Record<string, unknown> = {}, key?: string): Promise<any> => {
    importSeq += 1;
    const reply = await call('POST', `${V1}/imports`, {
      key,
      body: { name: `Import ${importSeq}`, code: `imp${importSeq}`, relation: '3rd', kind: 'segments', ...fields },
    });
    expect(reply.status).toBe(200);
    return reply.body;
  };
  const createSegment = async (importId: string, code: string, extra: Record<string, unknown> = {}): Promise<any> => {
    const reply = await call('POST', `${V1}/imports/${importId}/segments`, { body: { name: `Segment ${code}`, code, ...extra } });
    expect(reply.status).toBe(200);
    return reply.body;
  };

  return {
    services,
    org: init.organization_id,
    workspaces: { root, child, sibling },
    keys,
    call,
    createImport,
    createSegment,
    close: async () => {
      await http.close();
      await closeServices(services);
      await store.close();
      await dir.remove();
    },
  };
}

/** D13: `{requestId, error: {c, d}}` with `d.message` and the subcode in `d.code`. */
export function expectTaxonomyError(reply: Reply, status: number, c: string, code: number): void {
  expect(reply.status).toBe(status);
  expect(Object.keys(reply.body as object).sort()).toEqual(['error', 'requestId']);
  expect(reply.body).toMatchObject({ requestId: expect.stringMatching(UUID), error: { c, d: { message: expect.any(String), code } } });
}
