// The tenancy registry: organizations, the workspace trees, API keys. Loaded whole into memory on open and written
// through to the store, so authenticating a request is a hash and a Map lookup (D5–D9).

import { ByteLru } from '../../byte-lru.js';
import { ServiceError, badBody, forbidden, malformedKey, noKey, notFound, unknownKey } from '../../errors.js';
import type { BatchOp, Store } from '../../store/contract.js';
import { prefixEnd } from '../../store/contract.js';
import { key, scanPrefix } from '../../store/layout.js';
import { hashKey, isUuid } from './keys.js';
import { checkName } from './names.js';
import { SerialQueue } from './serial.js';
import type {
  AccessLevel,
  CreatedKey,
  InitializedOrganization,
  KeyInfo,
  KeyType,
  Organization,
  Principal,
  Workspace,
} from './types.js';

export interface InitOrganizationInput {
  readonly name: string;
  readonly now: Date;
  /** A fresh UUID v4 for records. */
  readonly newId: () => string;
  /** A fresh UUID v4 for key values. */
  readonly newKey: () => string;
}

export interface CreateWorkspaceInput {
  readonly name: string;
  readonly parentId: string;
  readonly now: Date;
  readonly newId: () => string;
}

export interface CreateKeyInput {
  readonly workspaceId: string;
  readonly type: KeyType;
  readonly name?: string | null;
  readonly access?: AccessLevel;
  readonly now: Date;
  readonly newId: () => string;
  readonly newKey: () => string;
}

interface LiveKey {
  readonly hash: string;
  readonly info: KeyInfo;
  readonly principal: Principal;
}

const KEY_TYPES: readonly string[] = ['public', 'private'];
const ACCESS_LEVELS: readonly string[] = ['workspace', 'descendants'];

async function collect<T>(store: Store, prefix: string): Promise<Array<readonly [string, T]>> {
  const out: Array<readonly [string, T]> = [];
  for await (const entry of store.iterate<T>({ gte: prefix, lt: prefixEnd(prefix) })) out.push(entry);
  return out;
}

const byCreation = (a: { created_at: string; id: string }, b: { created_at: string; id: string }) =>
  a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;

/** Raw keys whose hash `authenticate` remembers (a deployment has a few keys), least recently used forgotten first. */
const RECENT_KEY_HASHES = 1024;

export class Tenancy {
  private readonly organizations = new Map<string, Organization>();
  private readonly workspaces = new Map<string, Workspace>();
  private readonly children = new Map<string, Set<string>>();
  private readonly keysByHash = new Map<string, LiveKey>();
  private readonly keysById = new Map<string, LiveKey>();
  /**
   * The hashes of raw keys that authenticated lately (D5), so a request does not hash its key again: SHA-256 was ~2 %
   * of the ingest main thread's time. In memory only, bounded, holding only keys that matched a live key (random
   * keys never enter it), and emptied when a key is revoked.
   */
  private readonly recentHashes = new ByteLru<string>(Infinity, () => 0, { maxEntries: RECENT_KEY_HASHES });
  private readonly queue = new SerialQueue();

  private constructor(private readonly store: Store) {}

  /** Loads every organization, workspace and key of the store into memory. */
  static async open(store: Store): Promise<Tenancy> {
    const tenancy = new Tenancy(store);
    for (const [, org] of await collect<Organization>(store, scanPrefix('o'))) {
      tenancy.organizations.set(org.id, Object.freeze(org));
    }
    for (const [, ws] of await collect<Workspace>(store, scanPrefix('w'))) tenancy.addWorkspace(ws);
    for (const [storedKey, info] of await collect<KeyInfo>(store, scanPrefix('k'))) {
      tenancy.addKey(storedKey.slice(scanPrefix('k').length), info);
    }
    return tenancy;
  }

  // ---- organizations

  /** True once any organization exists (`audience init` refuses to run again). */
  isInitialised(): boolean {
    return this.organizations.size > 0;
  }

  /** The ids of every organization. */
  organizationIds(): string[] {
    return [...this.organizations.keys()];
  }

  /** How many organizations the store holds (a whole-store backup over the API needs exactly one). */
  organizationCount(): number {
    return this.organizations.size;
  }

  getOrganization(id: string): Organization | undefined {
    return this.organizations.get(id);
  }

  /**
   * Creates an organization: its root workspace (whose id is the organization id), a private key with
   * `descendants` access and a public key. Creates another organization when one exists already; `init`
   * refuses re-initialisation through isInitialised().
   */
  async initOrganization(input: InitOrganizationInput): Promise<InitializedOrganization> {
    const name = checkName('name', input.name);
    return this.queue.run(async () => {
      const created_at = input.now.toISOString();
      const id = input.newId();
      const organization: Organization = { id, name, created_at };
      const root: Workspace = { id, name, parent_id: null, organization_id: id, created_at };
      const privateKey = this.prepareKey(root, 'private', 'initial private key', 'descendants', input);
      const publicKey = this.prepareKey(root, 'public', 'initial public key', 'workspace', input);
      await this.store.batch(
        [
          { type: 'put', key: key('o', id), value: organization },
          { type: 'put', key: key('w', id), value: root },
          ...privateKey.ops,
          ...publicKey.ops,
        ],
        { sync: true },
      );
      this.organizations.set(id, Object.freeze(organization));
      this.addWorkspace(root);
      this.addKey(privateKey.hash, privateKey.info);
      this.addKey(publicKey.hash, publicKey.info);
      return { organization_id: id, workspace_id: id, private_key: privateKey.key, public_key: publicKey.key };
    });
  }

  // ---- workspaces

  /** A workspace below `parentId` (404 3000 when the parent does not exist). */
  async createWorkspace(input: CreateWorkspaceInput): Promise<Workspace> {
    const name = checkName('name', input.name);
    return this.queue.run(async () => {
      const parent = this.workspaces.get(input.parentId);
      if (parent === undefined) throw notFound('workspace');
      const workspace: Workspace = {
        id: input.newId(),
        name,
        parent_id: parent.id,
        organization_id: parent.organization_id,
        created_at: input.now.toISOString(),
      };
      await this.store.batch(
        [
          { type: 'put', key: key('w', workspace.id), value: workspace },
          { type: 'put', key: key('wc', parent.id, workspace.id), value: true },
        ],
        { sync: true },
      );
      this.addWorkspace(workspace);
      return workspace;
    });
  }

  getWorkspace(id: string): Workspace | undefined {
    return this.workspaces.get(id);
  }

  /** The workspaces the key administers: its own, and with `descendants` access every one below it. */
  listWorkspaces(principal: Principal): Workspace[] {
    return this.reachedWorkspaceIds(principal)
      .map((id) => this.workspaces.get(id))
      .filter((ws): ws is Workspace => ws !== undefined)
      .sort(byCreation);
  }

  /** Ids of the workspaces above `id`, nearest first (the organization last); empty for a root or unknown id. */
  ancestorsOf(id: string): string[] {
    const out: string[] = [];
    let parent = this.workspaces.get(id)?.parent_id ?? null;
    while (parent !== null) {
      out.push(parent);
      parent = this.workspaces.get(parent)?.parent_id ?? null;
    }
    return out;
  }

  /** Ids of every workspace below `id`, breadth first; empty for a leaf or unknown id. */
  descendantsOf(id: string): string[] {
    const out: string[] = [];
    const pending = [id];
    for (let next = pending.shift(); next !== undefined; next = pending.shift()) {
      for (const child of this.children.get(next) ?? []) {
        out.push(child);
        pending.push(child);
      }
    }
    return out;
  }

  /** True when workspace `a` is `b` or lies below it. */
  isSameOrDescendant(a: string, b: string): boolean {
    if (!this.workspaces.has(a) || !this.workspaces.has(b)) return false;
    for (let at: string | null = a; at !== null; at = this.workspaces.get(at)?.parent_id ?? null) {
      if (at === b) return true;
    }
    return false;
  }

  // ---- keys

  /** Creates a key; the returned `key` is the only copy of its value (only its hash is stored, D5). */
  async createKey(input: CreateKeyInput): Promise<CreatedKey> {
    if (!KEY_TYPES.includes(input.type)) throw badBody('type: must be "public" or "private"');
    const access = input.access ?? 'workspace';
    if (!ACCESS_LEVELS.includes(access)) throw badBody('access: must be "workspace" or "descendants"');
    const name = input.name === undefined || input.name === null ? null : checkName('name', input.name);
    return this.queue.run(async () => {
      const workspace = this.workspaces.get(input.workspaceId);
      if (workspace === undefined) throw notFound('workspace');
      const prepared = this.prepareKey(workspace, input.type, name, access, input);
      await this.store.batch(prepared.ops, { sync: true });
      this.addKey(prepared.hash, prepared.info);
      const { info } = prepared;
      return {
        id: info.id,
        key: prepared.key,
        type: info.type,
        name: info.name,
        workspace_id: info.workspace_id,
        access: info.access,
        created_at: info.created_at,
      };
    });
  }

  getKey(id: string): KeyInfo | undefined {
    return this.keysById.get(id)?.info;
  }

  /** Every key of every organization, without key values (offline `audience keys list --data`). */
  allKeys(): KeyInfo[] {
    return [...this.keysById.values()].map((live) => live.info).sort(byCreation);
  }

  /** The keys of the workspaces the principal administers (see listWorkspaces), without key values. */
  listKeys(principal: Principal): KeyInfo[] {
    const reached = new Set(this.reachedWorkspaceIds(principal));
    return [...this.keysById.values()]
      .map((live) => live.info)
      .filter((info) => reached.has(info.workspace_id))
      .sort(byCreation);
  }

  /** Deletes a key (404 3000 when unknown); authentication with it fails (2000) once this resolves. */
  async revokeKey(id: string): Promise<void> {
    return this.queue.run(async () => {
      const live = this.keysById.get(id);
      if (live === undefined) throw notFound('key');
      await this.store.batch(
        [
          { type: 'del', key: key('k', live.hash) },
          { type: 'del', key: key('ki', id) },
        ],
        { sync: true },
      );
      this.keysById.delete(id);
      this.keysByHash.delete(live.hash);
      this.recentHashes.clear();
    });
  }

  /** D5: the principal of a raw key (header `X-API-Key` or query `k`); no key 2004, not a UUID 2005, unknown 2000. */
  authenticate(rawKey: string | undefined): Principal {
    if (rawKey === undefined || rawKey === '') throw noKey();
    if (!isUuid(rawKey)) throw malformedKey();
    const remembered = this.recentHashes.get(rawKey);
    const hash = remembered ?? hashKey(rawKey);
    const live = this.keysByHash.get(hash);
    if (live === undefined) throw unknownKey();
    if (remembered === undefined) this.recentHashes.set(rawKey, hash);
    return live.principal;
  }

  // ---- authorisation over the tree (D8, D9)

  /** D9: own workspace, its ancestors, and with `descendants` access the workspaces below; never another org's. */
  canSeeWorkspace(principal: Principal, workspaceId: string): boolean {
    const workspace = this.workspaces.get(workspaceId);
    if (workspace === undefined || workspace.organization_id !== principal.organizationId) return false;
    if (this.isSameOrDescendant(principal.workspaceId, workspaceId)) return true;
    return principal.access === 'descendants' && this.isSameOrDescendant(workspaceId, principal.workspaceId);
  }

  /** D9: own workspace, and with `descendants` access the ones below; ancestors' resources are read-only. */
  canWriteWorkspace(principal: Principal, workspaceId: string): boolean {
    const workspace = this.workspaces.get(workspaceId);
    if (workspace === undefined || workspace.organization_id !== principal.organizationId) return false;
    if (workspaceId === principal.workspaceId) return true;
    return principal.access === 'descendants' && this.isSameOrDescendant(workspaceId, principal.workspaceId);
  }

  /** The workspace if the principal may see it; else 404 3000 (D9: never 403 for what it may not see). */
  requireVisibleWorkspace(principal: Principal, workspaceId: string): Workspace {
    const workspace = this.workspaces.get(workspaceId);
    if (workspace === undefined || !this.canSeeWorkspace(principal, workspaceId)) throw notFound('workspace');
    return workspace;
  }

  /** The workspace if the principal may write in it; 404 3000 when hidden, 403 2001 when visible but read-only. */
  requireWritableWorkspace(principal: Principal, workspaceId: string): Workspace {
    const workspace = this.requireVisibleWorkspace(principal, workspaceId);
    if (!this.canWriteWorkspace(principal, workspaceId)) throw forbidden('The resources of this workspace are read-only for this key.');
    return workspace;
  }

  /** Admin API: a private key with `descendants` access (transport is checked by requirePrivate). */
  requireAdmin(principal: Principal): void {
    if (principal.type !== 'private' || principal.access !== 'descendants') {
      throw forbidden('The admin API needs a private key with descendants access.');
    }
  }

  /** Admin API over one workspace: requireAdmin, then the workspace must be the key's own or below it (D9 404/403). */
  requireAdminOver(principal: Principal, workspaceId: string): Workspace {
    const workspace = this.requireVisibleWorkspace(principal, workspaceId);
    this.requireAdmin(principal);
    if (!this.isSameOrDescendant(workspaceId, principal.workspaceId)) {
      throw forbidden('The admin API reaches only the key\u2019s workspace and the workspaces below it.');
    }
    return workspace;
  }

  // ---- internals

  private reachedWorkspaceIds(principal: Principal): string[] {
    if (!this.workspaces.has(principal.workspaceId)) return [];
    return principal.access === 'descendants'
      ? [principal.workspaceId, ...this.descendantsOf(principal.workspaceId)]
      : [principal.workspaceId];
  }

  private prepareKey(
    workspace: Workspace,
    type: KeyType,
    name: string | null,
    access: AccessLevel,
    ids: { readonly now: Date; readonly newId: () => string; readonly newKey: () => string },
  ): { key: string; hash: string; info: KeyInfo; ops: BatchOp[] } {
    const rawKey = ids.newKey().toLowerCase();
    if (!isUuid(rawKey)) throw new ServiceError(5000, 'A generated key is not a UUID.');
    const hash = hashKey(rawKey);
    if (this.keysByHash.has(hash)) throw new ServiceError(5000, 'A generated key collides with an existing one.');
    const info: KeyInfo = {
      id: ids.newId(),
      type,
      name,
      workspace_id: workspace.id,
      access,
      created_at: ids.now.toISOString(),
    };
    return {
      key: rawKey,
      hash,
      info,
      ops: [
        { type: 'put', key: key('k', hash), value: info },
        { type: 'put', key: key('ki', info.id), value: hash },
      ],
    };
  }

  private addWorkspace(workspace: Workspace): void {
    this.workspaces.set(workspace.id, Object.freeze({ ...workspace }));
    if (workspace.parent_id === null) return;
    let siblings = this.children.get(workspace.parent_id);
    if (siblings === undefined) this.children.set(workspace.parent_id, (siblings = new Set()));
    siblings.add(workspace.id);
  }

  private addKey(hash: string, info: KeyInfo): void {
    const workspace = this.workspaces.get(info.workspace_id);
    if (workspace === undefined) return; // a key of a workspace that no longer exists authenticates nobody
    const principal: Principal = Object.freeze({
      keyId: info.id,
      type: info.type,
      access: info.access,
      workspaceId: info.workspace_id,
      organizationId: workspace.organization_id,
    });
    const live: LiveKey = { hash, info: Object.freeze({ ...info }), principal };
    this.keysByHash.set(hash, live);
    this.keysById.set(info.id, live);
  }
}
