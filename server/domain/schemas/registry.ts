// The schemas of an organization's event names (D9, D30): loaded once from `sc!`, checked and grown in memory,
// persisted through batch operations that the caller commits together with the event.

import type { BatchOp, Store } from '../../store/contract.js';
import { key, keyPart } from '../../store/layout.js';
import { schemaMismatch } from '../../errors.js';
import type { EventSchema, SchemaCheck } from './check.js';
import { checkAgainstSchema } from './check.js';

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

  constructor(private readonly store: Store) {}

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
      local.set(storeKey, result.schema);
    }
  }

  /** The current schema of an event name, or undefined when no event of that name was accepted yet. */
  async get(org: string, name: string): Promise<EventSchema | undefined> {
    const storeKey = schemaKey(org, name);
    while (!this.schemas.has(storeKey)) await this.load(storeKey);
    return this.schemas.get(storeKey) ?? undefined;
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
