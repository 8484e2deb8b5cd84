// The events routes of `/v2.0` (spec "Events", D29–D31, D12): track an event (validated, its user resolved, checked
// against its schema, appended durably through the ingest pipeline) and read a user's events by time.
//
// Choices where the spec and decisions are silent:
// - Track with a client `id` already stored for its user (looked up without writing: `user_id`, else the user of the
//   winning known alias) answers the stored record before the schema check and before any alias is bound, so a
//   retry changes nothing even when the schema grew in between (D29). That is the only store lookup of the id: the
//   pipeline keeps the ids committed after it (`holdRecentIds`) and dedupes concurrent retries from them.
// - The schema check comes before the user is resolved, so a refused event binds no alias and records no user (D41).
// - Read: `user_id` missing or empty, or not a UUID, is 400 1000 (an invalid query-parameter value, D11).
// - Read: `from`/`to` accept what D3 accepts (a date-time with an offset) and also a bare calendar date
//   `YYYY-MM-DD` (the spec calls them "date"), meaning 00:00:00.000Z of that day. Anything else is 400 1000.
//   `from` after `to` is an empty array, not an error.
// - Read pages (D39): `cursor` is the base64url of the last returned event's position in the user's time index
//   (time, then arrival sequence), so ties in time are never skipped; a cursor the server did not make is 400 1002.
//   The Link keeps every other query parameter as sent (`from`/`to` keep their meaning, `k` keeps authenticating).
// - Read: "never seen" (D12's 3002) means no user record (created, identified, aliased or tracked) and no stored
//   event; a known user with no event in the range gets 200 `[]`.

import type { HttpServer, RequestContext } from '../http/index.js';
import { isUuid } from '../domain/identity/index.js';
import {
  findByClientId,
  hasEvents,
  newEvent,
  readUserEventPage,
  toWireRecord,
  validateTrackBody,
  type TrackInput,
} from '../domain/events/index.js';
import { parseTimestamp } from '../../engine/query/validate/timestamps.js';
import { ServiceError, badParameter, unknownUser } from '../errors.js';
import type { Services } from '../services.js';
import { authenticateClient } from './auth.js';

export type EventsRouteDeps = Pick<Services, 'store' | 'tenancy' | 'identity' | 'schemas' | 'pipeline' | 'clock' | 'newId'>;

const CALENDAR_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** A `from`/`to` value in epoch ms: an ISO 8601 date-time with an offset (D3) or a calendar date (UTC midnight). */
function parseBound(text: string): number | undefined {
  const date = CALENDAR_DATE.exec(text);
  return date === null ? parseTimestamp(text) : parseTimestamp(`${text}T00:00:00Z`);
}

function boundParam(ctx: RequestContext, name: 'from' | 'to'): number | undefined {
  const text = ctx.query.get(name);
  if (text === null || text === '') return undefined;
  const ms = parseBound(text);
  if (ms === undefined) {
    throw badParameter(`The query parameter ${name} is not a valid date.`, `${name}: expected an ISO 8601 date-time with an offset or a date, got ${JSON.stringify(text)}`);
  }
  return ms;
}

/** D39: the same request (every other query parameter kept, `from`/`to` included) continuing after `cursor`. */
function nextLink(ctx: RequestContext, cursor: string): string {
  const query = new URLSearchParams(ctx.query);
  query.delete('cursor');
  query.set('cursor', cursor);
  return `<${ctx.path}?${query.toString()}>; rel="next"`;
}

export function registerEventsRoutes(http: HttpServer, deps: EventsRouteDeps): void {
  const { store, tenancy, identity, schemas, pipeline, clock, newId } = deps;

  http.route('POST', '/v2.0/events', 'identity', async (ctx) => {
    const org = authenticateClient(tenancy, ctx).organizationId;
    const input = validateTrackBody(ctx.body, clock.now());
    // D29: the one store lookup of a client id; ids committed after it stay known to the pipeline until released.
    const hold = input.id !== undefined ? pipeline.holdRecentIds() : undefined;
    let appended;
    try {
      let known: string | undefined;
      if (input.id !== undefined) {
        // A retry is answered from a read-only lookup of its user, before anything is bound or checked (D29, D41).
        known = input.user_id !== undefined ? input.user_id : await identity.resolveStateless(org, { aliases: input.aliases ?? [] });
        const stored = await findByClientId(store, org, known, input.id);
        if (stored !== undefined) return { status: 200, body: toWireRecord(stored) };
      }
      // D41: the schema's refusals come before resolving, which may bind aliases or record a user.
      const extraOps = await schemas.check(org, input.name, input.properties);
      try {
        const { userId } = await identity.resolveForTrack(org, { user_id: input.user_id, aliases: input.aliases });
        // Looked up under the user it is appended to: the tick needs only what committed since (else it looks itself).
        const checked = hold !== undefined && known === userId ? hold.mark : undefined;
        appended = await pipeline.append({ org, user: userId, events: [newEvent(input, newId, checked)], extraOps });
      } catch (error) {
        // The registry cached the growth before it was committed; forget it so the next check reloads (registry doc).
        if (extraOps.length > 0) schemas.invalidate(org, input.name);
        throw error;
      }
    } finally {
      hold?.release();
    }
    const [record] = appended.events;
    if (record === undefined) throw new Error('the ingest pipeline answered no record for an appended event');
    return { status: 200, body: toWireRecord(record) };
  }, { body: 'required', cors: 'public' });

  http.route('GET', '/v2.0/events', 'identity', async (ctx) => {
    const org = authenticateClient(tenancy, ctx).organizationId;
    const userId = ctx.query.get('user_id');
    if (userId === null || userId === '') throw badParameter('The query parameter user_id is required.', 'user_id: missing');
    if (!isUuid(userId)) throw badParameter('The query parameter user_id is not a user id.', 'user_id: expected a UUID');
    const from = boundParam(ctx, 'from');
    const to = boundParam(ctx, 'to');
    const cursor = ctx.query.get('cursor') ?? undefined;
    let page;
    try {
      page = await readUserEventPage(store, org, userId, { from, to, cursor });
    } catch (error) {
      if (error instanceof RangeError) throw new ServiceError(1002, 'The query parameter cursor is invalid.', error.message);
      throw error;
    }
    const { events, next } = page;
    if (events.length === 0 && !(await identity.userExists(org, userId)) && !(await hasEvents(store, org, userId))) {
      throw unknownUser();
    }
    const reply = { status: 200, body: events.map(toWireRecord) };
    return next === undefined ? reply : { ...reply, headers: { Link: nextLink(ctx, next) } };
  }, { cors: 'public' });
}
