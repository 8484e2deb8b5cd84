// The Imports service: imports (D25), their taxonomy of segments (D26), memberships and connections rows (D27), and
// the engine's per-user lookups (E13, E14). One instance per store: its locks and context cache are in-process.

import { randomUUID } from 'node:crypto';
import type { SegmentContext } from '../../../engine/api.js';
import { ServiceError, alreadyExists, badBody, badParameter, notFound } from '../../errors.js';
import type { Store } from '../../store/contract.js';
import { prefixEnd } from '../../store/contract.js';
import { parseOperation, operationName, requireOperationList } from './batch-body.js';
import type { ParsedOperation, SegmentTarget } from './batch-body.js';
import { ContextCache, defaultContextCacheBytes, readContext } from './context.js';
import { validateNewImport } from './import-body.js';
import { decodePageToken, encodePageToken } from './page-token.js';
import { importCodeKey, importKey, importsScan, segmentCodesScan, segmentCountKey, segmentKey } from './keys.js';
import { memberCount, planMembers, removeSegmentMembers } from './members.js';
import { validateMembersBody } from './members-body.js';
import { KeyedQueue } from '../keyed-queue.js';
import { validateRows } from './row-body.js';
import { planRows } from './rows.js';
import type { ResolvedRow } from './rows.js';
import { checkCodeUnchanged, validateNewSegment, validatePatch } from './segment-body.js';
import { SegmentTable } from './segment-table.js';
import type {
  BatchResult,
  ImportKind,
  ImportRecord,
  MembersResult,
  ResolveUser,
  RowsResult,
  SegmentPage,
  SegmentRecord,
  UserRef,
} from './types.js';

export interface ImportsOptions {
  readonly newId?: () => string;
  /** Epoch ms. */
  readonly now?: () => number;
  /**
   * D40: bytes of users' imported-data contexts kept for `contextFor` (least recently used go first; estimated,
   * context.ts); 0 disables the cache. Default `defaultContextCacheBytes()`.
   */
  readonly contextCacheBytes?: number;
  /**
   * Called (and awaited) after deleting segments removed users from them, with those users: they need re-evaluation
   * (D27). loadMembers and loadRows answer their affected users instead and do not call it.
   */
  readonly onMembersRemoved?: (org: string, users: readonly string[]) => void | Promise<void>;
}

export interface ListSegmentsOptions {
  readonly paginationToken?: string;
  /** 1..1000, default 100. */
  readonly pageSize?: number;
}

const MAX_PAGE_SIZE = 1000;

export class Imports {
  private readonly newId: () => string;
  private readonly now: () => number;
  private readonly mutex = new KeyedQueue();
  private readonly contexts: ContextCache;
  /** Imports never change once created (D25 has no update), so found records are kept. */
  private readonly importCache = new Map<string, ImportRecord>();

  private constructor(
    private readonly store: Store,
    private readonly options: ImportsOptions,
  ) {
    this.newId = options.newId ?? randomUUID;
    this.now = options.now ?? Date.now;
    this.contexts = new ContextCache(options.contextCacheBytes ?? defaultContextCacheBytes());
  }

  static open(store: Store, options: ImportsOptions = {}): Imports {
    return new Imports(store, options);
  }

  // ---- imports (D25)

  /** `input` is a NewImport-shaped body (validated here: 1002 naming the field). Code unique in the org: 409 4000. */
  async createImport(org: string, workspaceId: string, input: unknown): Promise<ImportRecord> {
    const valid = validateNewImport(input);
    return this.mutex.run(`org:${org}`, async () => {
      if ((await this.store.get<string>(importCodeKey(org, valid.code))) !== undefined) {
        throw alreadyExists(`an import with code ${JSON.stringify(valid.code)} exists in this organization`);
      }
      const record: ImportRecord = {
        id: this.newId(),
        name: valid.name,
        description: valid.description,
        code: valid.code,
        relation: valid.relation,
        kind: valid.kind,
        identifiers: valid.identifiers,
        ...(valid.schema === undefined ? {} : { schema: valid.schema }),
        workspace_id: workspaceId,
        organization_id: org,
        created_at: this.isoNow(),
      };
      await this.store.batch([
        { type: 'put', key: importKey(org, record.id), value: record },
        { type: 'put', key: importCodeKey(org, record.code), value: record.id },
      ]);
      return record;
    });
  }

  /** The organization's imports, by code. */
  async listImports(org: string): Promise<ImportRecord[]> {
    const prefix = importsScan(org);
    const records: ImportRecord[] = [];
    for await (const [, record] of this.store.iterate<ImportRecord>({ gte: prefix, lt: prefixEnd(prefix) })) {
      records.push(record);
    }
    return records.sort((a, b) => (a.code < b.code ? -1 : a.code > b.code ? 1 : 0));
  }

  /** 404 code 3000 when missing or another organization's (D9). */
  async getImport(org: string, importId: string): Promise<ImportRecord> {
    const cacheId = `${org}\u0000${importId}`;
    const cached = this.importCache.get(cacheId);
    if (cached !== undefined) return structuredClone(cached);
    const record = await this.store.get<ImportRecord>(importKey(org, importId));
    if (record === undefined) throw notFound('import');
    this.importCache.set(cacheId, structuredClone(record));
    return record;
  }

  async getImportByCode(org: string, code: string): Promise<ImportRecord> {
    const id = await this.store.get<string>(importCodeKey(org, code));
    if (id === undefined) throw notFound('import');
    return this.getImport(org, id);
  }

  // ---- segments (D26)

  async createSegment(org: string, importId: string, input: unknown): Promise<SegmentRecord> {
    const imported = await this.segmentsImport(org, importId);
    const fields = validateNewSegment(input);
    return this.changeSegments(imported, (table) => table.create(fields, this.newId(), this.isoNow()));
  }

  async getSegment(org: string, importId: string, segmentId: string): Promise<SegmentRecord> {
    await this.getImport(org, importId);
    return found(await new SegmentTable(this.store, importId).findById(segmentId));
  }

  async getSegmentByCode(org: string, importId: string, code: string): Promise<SegmentRecord> {
    await this.getImport(org, importId);
    return found(await new SegmentTable(this.store, importId).findByCode(code));
  }

  async updateSegment(org: string, importId: string, segmentId: string, patch: unknown): Promise<SegmentRecord> {
    return this.patchSegment(org, importId, { id: segmentId }, patch);
  }

  async updateSegmentByCode(org: string, importId: string, code: string, patch: unknown): Promise<SegmentRecord> {
    return this.patchSegment(org, importId, { code }, patch);
  }

  /** Answers the deleted segment; its memberships are deleted first (see removeSegmentMembers). */
  async deleteSegment(org: string, importId: string, segmentId: string): Promise<SegmentRecord> {
    return this.removeSegment(org, importId, { id: segmentId });
  }

  async deleteSegmentByCode(org: string, importId: string, code: string): Promise<SegmentRecord> {
    return this.removeSegment(org, importId, { code });
  }

  /** A page of the import's segments in code order; `next_token` is opaque and absent on the last page. */
  async listSegments(org: string, importId: string, options: ListSegmentsOptions = {}): Promise<SegmentPage> {
    await this.getImport(org, importId);
    const pageSize = options.pageSize ?? 100;
    if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > MAX_PAGE_SIZE) {
      throw badParameter('The page size is invalid.', `page size: expected an integer from 1 to ${MAX_PAGE_SIZE}`);
    }
    const prefix = segmentCodesScan(importId);
    const after = options.paginationToken === undefined ? undefined : decodePageToken(options.paginationToken);
    const range = after === undefined ? { gte: prefix } : { gt: prefix + after };
    const entries: Array<readonly [string, string]> = [];
    for await (const entry of this.store.iterate<string>({ ...range, lt: prefixEnd(prefix), limit: pageSize + 1 })) {
      entries.push(entry);
    }
    const page = entries.slice(0, pageSize);
    const segments = await this.store.getMany<SegmentRecord>(page.map(([, id]) => segmentKey(importId, id)));
    const last = page[page.length - 1];
    const totalCount = (await this.store.get<number>(segmentCountKey(importId))) ?? 0;
    const found = segments.filter((segment): segment is SegmentRecord => segment !== undefined);
    const counts = await Promise.all(found.map((segment) => memberCount(this.store, importId, segment.code)));
    return {
      elements: found.map((segment, i) => ({ ...segment, member_count: counts[i] as number })),
      pagination: {
        ...(entries.length > pageSize && last !== undefined ? { next_token: encodePageToken(last[0].slice(prefix.length)) } : {}),
        total_count: totalCount,
      },
    };
  }

  /**
   * Up to 5000 operations (D26), applied in order with per-item results: a failing operation (bad body 1002, unknown
   * segment 3000, duplicate code 4000) is reported in its result and skipped; the others are committed together in
   * one atomic write. A malformed list as a whole (not an array, too long) throws 1002.
   */
  async batch(org: string, importId: string, operations: unknown): Promise<BatchResult[]> {
    const imported = await this.segmentsImport(org, importId);
    const list = requireOperationList(operations);
    return this.changeSegments(imported, async (table) => {
      const results: BatchResult[] = [];
      for (const [index, input] of list.entries()) {
        try {
          const parsed = parseOperation(input, index);
          results.push({ index, operation: parsed.operation, status: 200, segment: await this.applyOperation(table, parsed, index) });
        } catch (error) {
          if (!(error instanceof ServiceError)) throw error;
          results.push({
            index,
            operation: operationName(input),
            status: error.status,
            error: { code: error.code, detail: error.detail },
          });
        }
      }
      return results;
    });
  }

  // ---- memberships and rows (D27)

  /** Idempotent: counts report actual changes; a user in both lists ends up removed. Only `segments` imports. */
  async loadMembers(
    org: string,
    importId: string,
    segmentCode: string,
    input: unknown,
    resolve: ResolveUser,
  ): Promise<MembersResult> {
    const imported = await this.segmentsImport(org, importId);
    const body = validateMembersBody(input, imported.identifiers);
    const table = new SegmentTable(this.store, importId);
    found(await table.findByCode(segmentCode));
    return this.mutex.run(`import:${importId}`, async () => {
      found(await new SegmentTable(this.store, importId).findByCode(segmentCode));
      // Resolved last, once the request is known to be valid; any alias binding is committed in the same batch as
      // the memberships (D41).
      return resolve([...body.add, ...body.remove], async (users, bindings) => {
        const add = users.slice(0, body.add.length);
        const remove = users.slice(body.add.length);
        const { ops, result } = await planMembers(this.store, imported, segmentCode, add, remove);
        const all = [...bindings, ...ops];
        if (all.length > 0) await this.store.batch(all);
        this.contexts.invalidate(org, result.affectedUsers);
        return result;
      });
    });
  }

  /** Rows checked against the schema (1002 naming `rows[i]` and the property); `now` defaults to the clock. */
  async loadRows(org: string, importId: string, input: unknown, resolve: ResolveUser, now?: number): Promise<RowsResult> {
    const imported = await this.getImport(org, importId);
    requireKind(imported, 'connections');
    const rows = validateRows(input, imported.schema ?? {}, imported.identifiers, now ?? this.now());
    return this.mutex.run(`import:${importId}`, async () => {
      // Resolved last, once the request is known to be valid; any alias binding is committed in the same batch as
      // the rows (D41).
      return resolve(rows.map((row) => row.ref), async (users, bindings) => {
        const resolved: ResolvedRow[] = rows.map((row, index) => ({
          id: row.id ?? this.newId(),
          user: users[index] as string,
          time: row.time,
          properties: row.properties,
        }));
        const { ops, result } = await planRows(this.store, imported, resolved);
        const all = [...bindings, ...ops];
        if (all.length > 0) await this.store.batch(all);
        this.contexts.invalidate(org, result.affectedUsers);
        return result;
      });
    });
  }

  // ---- the engine's lookups (E13, E14)

  /**
   * The user's imported data: one prefix scan of memberships and one of rows, then synchronous lookups. A cached
   * context is answered at once, not in a promise (the ingest groups capture most contexts without waiting).
   */
  contextFor(org: string, userId: string): SegmentContext | Promise<SegmentContext> {
    return this.contexts.get(org, userId) ?? this.readContextFor(org, userId);
  }

  /**
   * Moves whenever a write may have changed some user's imported data (the context cache's epoch: bumped after each
   * committed change, before its users are re-evaluated): while it stands, every context `contextFor` answers is what
   * it was (the ingest pipeline then does not look resident users' contexts up again).
   */
  contextEpoch(): number {
    return this.contexts.currentEpoch();
  }

  /**
   * The cached context when `contextFor` has read it since the user's last change, else undefined: the cache's answer
   * without a read (what `contextFor` asks first; the cache's tests observe it here).
   */
  cachedContextFor(org: string, userId: string): SegmentContext | undefined {
    return this.contexts.get(org, userId);
  }

  private async readContextFor(org: string, userId: string): Promise<SegmentContext> {
    const epoch = this.contexts.currentEpoch();
    const context = await readContext(this.store, org, userId);
    this.contexts.fill(org, userId, context, epoch);
    return context;
  }

  // ---- internals

  private async segmentsImport(org: string, importId: string): Promise<ImportRecord> {
    const imported = await this.getImport(org, importId);
    requireKind(imported, 'segments');
    return imported;
  }

  private async patchSegment(org: string, importId: string, target: SegmentTarget, input: unknown): Promise<SegmentRecord> {
    const imported = await this.segmentsImport(org, importId);
    const patch = validatePatch(input);
    return this.changeSegments(imported, (table) => this.applyOperation(table, { operation: 'Update', target, patch }));
  }

  private async removeSegment(org: string, importId: string, target: SegmentTarget): Promise<SegmentRecord> {
    const imported = await this.segmentsImport(org, importId);
    return this.changeSegments(imported, (table) => this.applyOperation(table, { operation: 'Delete', target }));
  }

  private async applyOperation(table: SegmentTable, parsed: ParsedOperation, index?: number): Promise<SegmentRecord> {
    const path = index === undefined ? '' : `operations[${index}]`;
    if (parsed.operation === 'Create') return table.create(parsed.fields, this.newId(), this.isoNow());
    const segment = await findTarget(table, parsed.target, path);
    if (parsed.operation === 'Delete') {
      table.remove(segment);
      return segment;
    }
    checkCodeUnchanged(parsed.patch, segment.code, path);
    return table.update(segment, parsed.patch, this.isoNow());
  }

  /**
   * Runs `change` on a staged table under the import's lock, deletes the memberships of stored segments it removed,
   * then commits the table in one write (a removal interrupted half-way leaves the segment to be deleted again).
   */
  private async changeSegments<T>(imported: ImportRecord, change: (table: SegmentTable) => Promise<T>): Promise<T> {
    const org = imported.organization_id;
    const { result, removedUsers } = await this.mutex.run(`import:${imported.id}`, async () => {
      const table = new SegmentTable(this.store, imported.id);
      const result = await change(table);
      const removedUsers = new Set<string>();
      try {
        for (const code of table.removedStoredCodes) {
          for (const user of await removeSegmentMembers(this.store, org, imported.id, code)) removedUsers.add(user);
        }
      } catch (error) {
        this.contexts.clear();
        throw error;
      }
      this.contexts.invalidate(org, [...removedUsers]);
      await table.commit();
      return { result, removedUsers: [...removedUsers] };
    });
    if (removedUsers.length > 0) await this.options.onMembersRemoved?.(org, removedUsers);
    return result;
  }

  private isoNow(): string {
    return new Date(this.now()).toISOString();
  }
}

function requireKind(imported: ImportRecord, kind: ImportKind): void {
  if (imported.kind !== kind) throw badBody(`importId: import ${imported.code} is a ${imported.kind} import, not ${kind}`);
}

function found(segment: SegmentRecord | undefined): SegmentRecord {
  if (segment === undefined) throw notFound('segment');
  return segment;
}

async function findTarget(table: SegmentTable, target: SegmentTarget, path: string): Promise<SegmentRecord> {
  const segment = found(target.id !== undefined ? await table.findById(target.id) : await table.findByCode(target.code ?? ''));
  if (target.id !== undefined && target.code !== undefined && segment.code !== target.code) {
    throw badBody(`${path === '' ? 'code' : `${path}.code`}: not the code of the segment with this id`);
  }
  return segment;
}

