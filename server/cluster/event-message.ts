// An event as the cluster's event log carries it (issue 15): the resolved user and the validated event (its id
// minted or the client's, its time parsed), msgpack-encoded. The receiving node publishes it; the partition's owner
// appends it through its pipeline, which stores each event id once per user (D29), so a replay is applied once.

import { plainCodec } from '../msgpack-keys.js';
import type { NewEvent } from '../domain/events/index.js';

const packr = plainCodec();

export interface LoggedEvent {
  readonly org: string;
  readonly user: string;
  readonly event: NewEvent;
}

export function encodeLoggedEvent(org: string, user: string, event: NewEvent): Uint8Array {
  const { minted: _minted, checked: _checked, ...fields } = event;
  return packr.pack({ org, user, event: fields });
}

/** The owner's view: no `minted` or `checked` mark, so its tick always looks the id up (a replay is a retry). */
export function decodeLoggedEvent(payload: Uint8Array): LoggedEvent {
  const value = packr.unpack(payload) as LoggedEvent;
  if (typeof value?.org !== 'string' || typeof value.user !== 'string' || typeof value.event?.id !== 'string') {
    throw new Error('a malformed event in the event log');
  }
  return value;
}

/** The stream's dedupe id of an event: one user's event id (D29 retries inside the duplicate window). */
export const loggedEventId = (org: string, user: string, eventId: string): string => `${org}:${user}:${eventId}`;
