// The schemas of an organization's event names (D9, D30): loaded once from `sc!`, checked and grown in memory,
// persisted through batch operations that the caller commits together with the event.

import type { BatchOp, Store } from '../../store/contract.js';
import { prefixEnd } from '../../store/contract.js';
import { key, keyPart, scanPrefix } from '../../store/layout.js';
import { badBody, schemaMismatch } from '../../errors.js';
import type { EventSchema, FieldType, SchemaCheck } from './check.js';
import { checkAgainstSchema, countPaths } from './check.js';
import { ByteLru } from '../../byte-lru.js';

export { ByteLru } from '../../byte-lru.js';

/** D40: property paths allowed in one event schema and in one event (`serve --max-schema-paths`). */
export const DEFAULT_MAX_SCHEMA_PATHS = 1000;

/** D40: distinct event names (schemas) one organization may have (`serve --max-event-names`). */
export const DEFAULT_MAX_EVENT_NAMES = 10_000;
/** D40: bytes the cached schemas may hold (`serve --schema-cache-bytes`). */
export const DEFAULT_SCHEMA_CACHE_BYTES = 64 * 1024 * 1024;

export interface SchemaLimits {
  /** Property paths allowed in one event schema and in one event (default 1,000, D40). */
  readonly maxPaths?: number | undefined;
  /** Distinct event names per organization (default 10,000, D40). */
  readonly maxEventNames?: number | undefined;
  /** Bytes the cache of schemas may hold (default 64 MiB, D40); least recently used ones are evicted. */
  readonly cacheBytes?: number | undefined;
}

/** An estimate of the memory a cached schema holds: its key, and each property's name and type object. */
export function schemaBytes(storeKey: string, schema: EventSchema | null): number {
  let bytes = 96 + storeKey.length * 2;
  const pending: Readonly<Record<string, FieldType>>[] = schema === null ? [] : [schema.properties];
  for (let props = pending.pop(); props !== undefined; props = pending.pop()) {
    bytes += 64;
    for (const name in props) {
      if (!Object.hasOwn(props, name)) continue;
      bytes += 96 + name.length * 2;
      let field = props[name] as FieldType;
      while (field.type === 'list' && field.items !== undefined) {
        bytes += 48;
        field = field.items;
      }
      if (field.type === 'object') pending.push(field.properties);
    }
  }
  return bytes;
}

export const schemaKey = (org: string, eventName: string): string => key('sc', org, keyPart(eventName));

/** An event as the registry checks it. */
export interface NamedProperties {
  readonly name: string;
  readonly properties: Readonly<Record<string, unknown>>;
}

function mismatchError(result: Extract<SchemaCheck, { ok: false }>, prefix = ''): Error {
  return schemaMismatch(`${prefix}${result.path}: expected ${result.expected}, got ${result.actual}`);
}

/**
 * One per store and process. The check itself is synchronous on the in-memory cache (after the schema is loaded),
 * so concurrent first events of a name cannot both define it: the first defines, the next is checked against it.
 * Growth is cached at once, before the caller commits it: a caller whose batch fails calls `invalidate`. Commits
 * of growth in different batches may land out of order, leaving an older (smaller) schema stored; a restart then
 * re-grows it from later events. The cache is bounded in bytes (D40): an evicted schema is read again when needed.
 * The names of each organization (D40 cap) are counted once from the stored schemas, then kept in memory (at most
 * `maxEventNames` per organization); a name whose first commit failed stays counted until a restart.
 */
export class SchemaRegistry {
  /** `sc!` key -> schema, or null when the name has none yet. */
  private readonly schemas: ByteLru<EventSchema | null>;
  private readonly loading = new Map<string, Promise<EventSchema | null>>();
  /** Organization -> the `sc!` keys of its names that have a schema (stored, or grown and being committed). */
  private readonly names = new Map<string, Set<string>>();
  private readonly namesLoading = new Map<string, Promise<void>>();
  private readonly maxPaths: number;
  private readonly maxEventNames: number;
  /** Schemas (stored before the limit existed) with more than `maxPaths` paths. */
  private readonly oversized = new WeakMap<EventSchema, boolean>();

  constructor(
    private readonly store: Store,
    limits: SchemaLimits = {},
  ) {
    this.maxPaths = limits.maxPaths ?? DEFAULT_MAX_SCHEMA_PATHS;
    this.maxEventNames = limits.maxEventNames ?? DEFAULT_MAX_EVENT_NAMES;
    this.schemas = new ByteLru(limits.cacheBytes ?? DEFAULT_SCHEMA_CACHE_BYTES, schemaBytes);
  }

  /** Bytes the cached schemas hold (schemaBytes of each). */
  get cachedBytes(): number {
    return this.schemas.bytes;
  }

  /**
   * Checks an event's properties against the schema of its name (D30). A mismatch throws ServiceError 1007 whose
   * detail is `properties.a.b: expected number, got string`; a new name beyond the organization's cap, or more
   * property paths than allowed, throws 1002 or 1007 naming the limit (D40); otherwise returns the operations that
   * persist the schema's growth (none when it did not grow), for the caller to commit in the event's batch.
   */
  check(org: string, name: string, properties: Readonly<Record<string, unknown>>): BatchOp[] | Promise<BatchOp[]> {
    const storeKey = schemaKey(org, name);
    // The usual case, names counted and the schema cached, answers at once (no promise); a refusal is still a
    // rejected promise, as when the schema had to be read.
    if (this.names.has(org)) {
      const cached = this.schemas.get(storeKey);
      if (cached !== undefined) {
        try {
          return this.checkAgainst(org, name, storeKey, cached, properties);
        } catch (error) {
          return Promise.reject(error as Error);
        }
      }
    }
    return this.checkLoading(org, name, storeKey, properties);
  }

  private async checkLoading(org: string, name: string, storeKey: string, properties: Readonly<Record<string, unknown>>): Promise<BatchOp[]> {
    await this.loadNames(org);
    const loaded = await this.load(storeKey);
    return this.checkAgainst(org, name, storeKey, this.current(storeKey, loaded), properties);
  }

  /** `check` once the schema is at hand: nothing awaits from here, so the cache cannot change under the check. */
  private checkAgainst(org: string, name: string, storeKey: string, current: EventSchema | null, properties: Readonly<Record<string, unknown>>): BatchOp[] {
    const result = checkAgainstSchema(current ?? undefined, properties);
    if (!result.ok) throw mismatchError(result);
    if (!result.changed) {
      this.enforceEventPaths(properties, result.schema);
      return [];
    }
    this.enforcePaths(name, properties, result.schema);
    const names = this.namesOf(org);
    if (!names.has(storeKey)) {
      this.enforceNames(names.size + 1);
      names.add(storeKey);
    }
    this.schemas.set(storeKey, result.schema);
    return [{ type: 'put', key: storeKey, value: result.schema }];
  }

  /**
   * Checks several events in order without growing anything (D24 synchronous validation): each event is checked
   * against the stored schemas grown by the events before it in the list. Throws 1007 naming `events[i].properties…`.
   */
  async verify(org: string, events: readonly NamedProperties[]): Promise<void> {
    await this.loadNames(org);
    const local = new Map<string, EventSchema | undefined>();
    const added = new Set<string>();
    for (const [index, event] of events.entries()) {
      const storeKey = schemaKey(org, event.name);
      if (!local.has(storeKey)) {
        const loaded = await this.load(storeKey);
        local.set(storeKey, this.current(storeKey, loaded) ?? undefined);
      }
      const result = checkAgainstSchema(local.get(storeKey), event.properties);
      if (!result.ok) throw mismatchError(result, `events[${index}].`);
      if (!result.changed) this.enforceEventPaths(event.properties, result.schema, `events[${index}].`);
      else {
        this.enforcePaths(event.name, event.properties, result.schema, `events[${index}].`);
        const names = this.namesOf(org);
        if (!names.has(storeKey) && !added.has(storeKey)) {
          this.enforceNames(names.size + added.size + 1, `events[${index}].`);
          added.add(storeKey);
        }
      }
      local.set(storeKey, result.schema);
    }
  }

  /** The current schema of an event name, or undefined when no event of that name was accepted yet. */
  async get(org: string, name: string): Promise<EventSchema | undefined> {
    const storeKey = schemaKey(org, name);
    const loaded = await this.load(storeKey);
    return this.current(storeKey, loaded) ?? undefined;
  }

  /** Forgets the cached schema of a name (after a failed commit of its growth): the next check reloads it. */
  invalidate(org: string, name: string): void {
    this.schemas.delete(schemaKey(org, name));
  }

  /**
   * D40: a grown schema may hold at most `maxPaths` property paths. Past it, an event that alone has more paths is
   * 400 1002 (the body is too large a structure); otherwise the schema matter is 400 1007. Either cause names the
   * limit. A schema stored larger before the limit existed still accepts events within its known paths.
   */
  private enforcePaths(name: string, properties: Readonly<Record<string, unknown>>, grown: EventSchema, prefix = ''): void {
    const paths = countPaths(grown.properties, this.maxPaths);
    if (paths <= this.maxPaths) return;
    const own = checkAgainstSchema(undefined, properties);
    const ownPaths = own.ok ? countPaths(own.schema.properties, this.maxPaths) : 0;
    if (ownPaths > this.maxPaths) {
      throw this.tooManyEventPaths(prefix);
    }
    throw schemaMismatch(
      `${prefix}properties: the schema of ${name} would grow past ${this.maxPaths} property paths, the limit per event schema (max schema paths)`,
    );
  }

  /**
   * D40 for an event that adds nothing: its paths are among its schema's, so only a schema stored larger than the
   * limit (before it existed) can hide an event with too many paths; that event is 400 1002 as any other.
   */
  private enforceEventPaths(properties: Readonly<Record<string, unknown>>, schema: EventSchema, prefix = ''): void {
    let oversized = this.oversized.get(schema);
    if (oversized === undefined) {
      oversized = countPaths(schema.properties, this.maxPaths) > this.maxPaths;
      this.oversized.set(schema, oversized);
    }
    if (!oversized) return;
    const own = checkAgainstSchema(undefined, properties);
    if (own.ok && countPaths(own.schema.properties, this.maxPaths) > this.maxPaths) {
      throw this.tooManyEventPaths(prefix);
    }
  }

  private tooManyEventPaths(prefix: string): Error {
    return badBody(`${prefix}properties: more than ${this.maxPaths} property paths, the limit per event (max schema paths)`);
  }

  /** D40: a new name is refused (400 1002) once the organization has `maxEventNames`; known names are not. */
  private enforceNames(count: number, prefix = ''): void {
    if (count <= this.maxEventNames) return;
    throw badBody(`${prefix}name: the organization already has ${this.maxEventNames} event names, the limit (max event names)`);
  }

  /** The cached schema when present (it may be newer than what was loaded), else the loaded one. */
  private current(storeKey: string, loaded: EventSchema | null): EventSchema | null {
    const cached = this.schemas.get(storeKey);
    return cached === undefined ? loaded : cached;
  }

  private namesOf(org: string): Set<string> {
    let names = this.names.get(org);
    if (names === undefined) {
      names = new Set();
      this.names.set(org, names);
    }
    return names;
  }

  /** Counts the organization's stored names once (one scan of its `sc!` keys); concurrent callers share it. */
  private async loadNames(org: string): Promise<void> {
    if (this.names.has(org)) return;
    let pending = this.namesLoading.get(org);
    if (pending === undefined) {
      pending = (async () => {
        const found = new Set<string>();
        const prefix = scanPrefix('sc', org);
        for await (const [storeKey] of this.store.iterate({ gte: prefix, lt: prefixEnd(prefix) })) found.add(storeKey);
        const names = this.namesOf(org);
        for (const storeKey of found) names.add(storeKey);
      })().finally(() => this.namesLoading.delete(org));
      this.namesLoading.set(org, pending);
    }
    await pending;
  }

  /** The schema, from the cache or read from the store (and cached); concurrent callers share the read. */
  private async load(storeKey: string): Promise<EventSchema | null> {
    const cached = this.schemas.get(storeKey);
    if (cached !== undefined) return cached;
    let pending = this.loading.get(storeKey);
    if (pending === undefined) {
      pending = this.store
        .get<EventSchema>(storeKey)
        .then((stored) => {
          const value = stored ?? null;
          // A check may have defined or grown it meanwhile: that newer entry stays.
          if (!this.schemas.has(storeKey)) this.schemas.set(storeKey, value);
          return this.schemas.get(storeKey) ?? value;
        })
        .finally(() => this.loading.delete(storeKey));
      this.loading.set(storeKey, pending);
    }
    return pending;
  }
}
