// D29 in a tick: which events are retries of stored (or just committed) ones and which are fresh: a fresh event gets
// its sequence and the transitions it caused later; a committed tick reports its client ids to the window of ids a
// route's outstanding lookup cannot have seen (recent-ids.ts).

import type { EngineEvent } from '../../../engine/api.js';
import { toEngineEvent, toStoredEvent, type LoggedTransition, type NewEvent, type StoredEvent } from '../../domain/events/index.js';
import { clientIdKey } from '../../domain/events/keys.js';
import { findStoredIds } from '../state/load.js';
import type { TickEnv, UserWork } from './tick.js';

/** An event of this tick that is not a retry: it gets a sequence and the transitions it caused. */
export class FreshEvent {
  seq = 0;
  readonly transitions: LoggedTransition[] = [];
  readonly engine: EngineEvent;
  /** `toStored()`'s record, built once per sequence. */
  private stored: StoredEvent | undefined = undefined;
  constructor(
    readonly user: string,
    readonly event: NewEvent,
  ) {
    this.engine = toEngineEvent(event);
  }

  /** The stored record at the event's sequence (one object for the batch, the answer and the recent ids). */
  toStored(): StoredEvent {
    let stored = this.stored;
    if (stored === undefined || stored.seq !== this.seq) this.stored = stored = toStoredEvent(this.user, this.event, this.seq);
    return stored;
  }
}

/**
 * D29: an id already stored for the user, or repeated earlier in this tick, answers that record; nothing is added.
 * Ids the server minted are not looked up; ids the route checked are looked up only among those committed since.
 */
export async function resolveRetries(env: TickEnv, users: Map<string, UserWork>): Promise<void> {
  const ids = new Map<string, { org: string; user: string; id: string }>();
  const stored = new Map<string, StoredEvent>();
  for (const work of users.values()) {
    for (const step of work.steps) {
      if (step.item.kind !== 'append') continue;
      for (const event of step.item.request.events) {
        if (event.minted === true) continue;
        const key = clientIdKey(work.org, work.user, event.id);
        if (event.checked === undefined) ids.set(key, { org: work.org, user: work.user, id: event.id });
        else {
          const recent = env.recentIds.after(event.checked, key);
          if (recent !== undefined) stored.set(key, recent);
        }
      }
    }
  }
  if (ids.size > 0) for (const [key, record] of await findStoredIds(env.store, [...ids.values()])) stored.set(key, record);
  for (const work of users.values()) {
    const seen = new Map<string, FreshEvent>();
    for (const step of work.steps) {
      if (step.item.kind !== 'append') continue;
      for (const event of step.item.request.events) {
        // A minted id is new and unique: neither stored nor repeated, so it is not keyed.
        const id = event.minted === true ? undefined : clientIdKey(work.org, work.user, event.id);
        const known = id === undefined ? undefined : (stored.get(id) ?? seen.get(id));
        if (known !== undefined) {
          step.answers.push(known);
          continue;
        }
        const fresh = new FreshEvent(work.user, event);
        if (id !== undefined) seen.set(id, fresh);
        step.fresh.push(fresh);
        step.answers.push(fresh);
      }
    }
  }
}

/** The client ids (not minted) of a committed tick's new events, with their stored records (D29). */
export function clientIdsOf(users: Iterable<UserWork>): (readonly [string, StoredEvent])[] {
  const ids: (readonly [string, StoredEvent])[] = [];
  for (const work of users) {
    for (const step of work.steps) {
      if (step.item.kind !== 'append') continue;
      step.item.request.events.forEach((event, i) => {
        const answer = step.answers[i];
        if (event.minted !== true && answer instanceof FreshEvent) ids.push([clientIdKey(work.org, work.user, event.id), answer.toStored()]);
      });
    }
  }
  return ids;
}
