// The schemas of an organization's event names (D9, D30): loaded once from `sc!`, checked and grown in memory,
// persisted through batch operations that the caller commits together with the event.

import type { BatchOp, Store } from '../../store/contract.js';
import { key, keyPart } from '../../store/layout.js';
import { badBody, schemaMismatch } from '../../errors.js';
import type { EventSchema, SchemaCheck } from './check.js';
import { checkAgainstSchema, countPaths } from './check.js';

/** D40: property paths allowed in one event schema and in one event (`serve --max-schema-paths`). */
export const DEFAULT_MAX_SCHEMA_PATHS = 1000;

export interface SchemaLimits {
  /** Property paths allowed in one event schema and in one event (default 1,000, D40). */
  readonly maxPaths?: number;
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
 * One per store and process. The check itself is synchronous on the in-memory map (after the schema is loaded), so
 * concurrent first events of a name cannot both define it: the first defines, the next is checked against it.
 * Growth is cached at once, before the caller commits it: a caller whose batch fails calls `invalidate`. Commits
 * of growth in different batches may land out of order, leaving an older (smaller) schema stored; a restart then
 * re-grows it from later events.
 */
export class SchemaRegistry {
  /** `sc!` key -> schema, or null when the name has none yet. */
  private readonly schemas = new Map<string, EventSchema | null>();
  private readonly loading = new Map<string, Promise<void>>();
  private readonly maxPaths: number;

  constructor(
    private readonly store: Store,
    limits: SchemaLimits = {},
  ) {
    this.maxPaths = limits.maxPaths ?? DEFAULT_MAX_SCHEMA_PATHS;
  }

  /**
   * Checks an event's properties against the schema of its name (D30). A mismatch throws ServiceError 1007 whose
   * detail is `properties.a.b: expected number, got string`; otherwise returns the operations that persist the
   * schema's growth (none when it did not grow), for the caller to commit in the event's batch.
   */
  async check(org: string, name: string, properties: Readonly<Record<string, unknown>>): Promise<BatchOp[]> {
    const storeKey = schemaKey(org, name);
    while (!this.schemas.has(storeKey)) await this.load(storeKey);
    // From here to the return nothing awaits: the map cannot change under the check.
    const result = checkAgainstSchema(this.schemas.get(storeKey) ?? undefined, properties);
    if (!result.ok) throw mismatchError(result);
    if (!result.changed) return [];
    this.enforcePaths(name, properties, result.schema);
    this.schemas.set(storeKey, result.schema);
    return [{ type: 'put', key: storeKey, value: result.schema }];
  }

  /**
   * Checks several events in order without growing anything (D24 synchronous validation): each event is checked
   * against the stored schemas grown by the events before it in the list. Throws 1007 naming `events[i].properties…`.
   */
  async verify(org: string, events: readonly NamedProperties[]): Promise<void> {
    const local = new Map<string, EventSchema | undefined>();
    for (const [index, event] of events.entries()) {
      const storeKey = schemaKey(org, event.name);
      if (!local.has(storeKey)) {
        while (!this.schemas.has(storeKey)) await this.load(storeKey);
        local.set(storeKey, this.schemas.get(storeKey) ?? undefined);
      }
      const result = checkAgainstSchema(local.get(storeKey), event.properties);
      if (!result.ok) throw mismatchError(result, `events[${index}].`);
      if (result.changed) this.enforcePaths(event.name, event.properties, result.schema, `events[${index}].`);
      local.set(storeKey, result.schema);
    }
  }

  /** The current schema of an event name, or undefined when no event of that name was accepted yet. */
  async get(org: string, name: string): Promise<EventSchema | undefined> {
    const storeKey = schemaKey(org, name);
    while (!this.schemas.has(storeKey)) await this.load(storeKey);
    return this.schemas.get(storeKey) ?? undefined;
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
      throw badBody(`${prefix}properties: more than ${this.maxPaths} property paths, the limit per event (max schema paths)`);
    }
    throw schemaMismatch(
      `${prefix}properties: the schema of ${name} would grow past ${this.maxPaths} property paths, the limit per event schema (max schema paths)`,
    );
  }

  /** Forgets the cached schema of a name (after a failed commit of its growth): the next check reloads it. */
  invalidate(org: string, name: string): void {
    this.schemas.delete(schemaKey(org, name));
  }

  /** Loads a schema into the map; concurrent callers share the read, and a loaded entry is never replaced. Callers
   * loop until the entry is present (an `invalidate` may drop it between the load and their continuation). */
  private async load(storeKey: string): Promise<void> {
    if (this.schemas.has(storeKey)) return;
    let pending = this.loading.get(storeKey);
    if (pending === undefined) {
      pending = this.store.get<EventSchema>(storeKey).then(
        (stored) => {
          if (!this.schemas.has(storeKey)) this.schemas.set(storeKey, stored ?? null);
        },
      ).finally(() => this.loading.delete(storeKey));
      this.loading.set(storeKey, pending);
    }
    await pending;
  }
}
