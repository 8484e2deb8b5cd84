// The documented operations of the data routes: identity, events, segmentation, cohorts, reactions and the live
// stream. Keyed by `METHOD pattern` exactly as the router registers them (test/e2e/openapi.test.ts checks both ways).

import type { OperationSpec } from './operation.js';
import { ref } from './schemas.js';

const uuid = { type: 'string', format: 'uuid' };
const arrayOf = (name: string) => ({ type: 'array', items: ref(name) });
const COHORT_ID = { cohortId: 'the cohort\'s id (UUID)' };
const REACTION_ID = { reactionId: 'the reaction\'s id (UUID)' };

const trackBody = {
  type: 'object',
  properties: {
    name: { type: 'string', pattern: '^[A-Za-z0-9_]{1,128}$' },
    user_id: uuid,
    aliases: { type: 'array', minItems: 1, items: ref('Alias'), description: 'used when user_id is absent (the spec\'s alias rules)' },
    properties: { type: 'object', description: 'keys [a-z0-9_] at every depth, or $-prefixed at the top level (D29)' },
    time: { type: 'string', format: 'date-time', description: 'default now; at most 5 minutes ahead of the server' },
    id: {
      ...uuid,
      description:
        'a repeated id for the same user returns the stored record and changes nothing (D29); without one the server mints one (a UUID v7 carrying the event time), which a retry may send',
    },
    session_id: uuid,
    view_id: uuid,
  },
  required: ['name'],
};

const userIdent = {
  user_id: { ...uuid, description: 'exactly one of user_id, alias, aliases (D21)' },
  alias: ref('AliasRef'),
  aliases: { type: 'array', minItems: 1, items: ref('Alias') },
};

const cohortWrite = {
  name: { type: 'string', minLength: 1, maxLength: 256 },
  description: { type: ['string', 'null'], description: 'null deletes it (PATCH)' },
  query: ref('CohortQuery'),
  tags: { type: 'array', items: { type: 'string' } },
};

const reactionWrite = {
  name: { type: 'string', minLength: 1, maxLength: 256 },
  action: ref('WebhookAction'),
};

export const DATA_OPERATIONS: Record<string, OperationSpec> = {
  'POST /v2.0/users': {
    area: 'identity', tag: 'Identity', key: 'public',
    summary: 'Create a user id',
    ok: { status: 200, description: 'A new user id', schema: { type: 'object', properties: { id: uuid }, required: ['id'] } },
  },
  'POST /v2.0/identify': {
    area: 'identity', tag: 'Identity', key: 'public',
    summary: 'Identify a user by its aliases',
    description: 'The spec\'s identify table; in the mixed case the known alias with the lowest priority number wins (D28).',
    body: { required: true, schema: { type: 'object', properties: { user_id: uuid, aliases: { type: 'array', items: ref('Alias') } }, required: ['user_id', 'aliases'] } },
    ok: { status: 200, description: 'The user the aliases now point to', schema: { type: 'object', properties: { user_id: uuid }, required: ['user_id'] } },
  },
  'GET /v2.0/users/:user_id/aliases': {
    area: 'identity', tag: 'Identity', key: 'private',
    summary: 'List a user\'s aliases',
    path: { user_id: 'the user id' },
    ok: { status: 200, description: 'The aliases', schema: arrayOf('AliasView') },
  },
  'POST /v2.0/users/:user_id/aliases': {
    area: 'identity', tag: 'Identity', key: 'private',
    summary: 'Add an alias to a user',
    path: { user_id: 'the user id' },
    body: { required: true, schema: ref('Alias') },
    ok: { status: 200, description: 'The alias', schema: ref('AliasView') },
    errors: [409],
  },
  'POST /v2.0/events': {
    area: 'identity', tag: 'Events', key: 'public',
    summary: 'Track an event',
    description: 'Answered once the event is durable (D29). The schema of an event name is inferred from its first event and enforced (code 1007, D30).',
    body: { required: true, schema: trackBody },
    ok: { status: 200, description: 'The stored event', schema: ref('Event') },
  },
  'GET /v2.0/events': {
    area: 'identity', tag: 'Events', key: 'public',
    summary: 'Read a user\'s events',
    description: 'Ascending time, ties in arrival order, at most 1000 per call; a `Link: <...>; rel="next"` header when more remain (D39). A user never seen is the flat 400 code 3002 (D12).',
    query: [
      { name: 'user_id', required: true, description: 'the user id', schema: uuid },
      { name: 'from', description: 'only events after this instant (exclusive)', schema: { type: 'string', format: 'date-time' } },
      { name: 'to', description: 'only events at or before this instant', schema: { type: 'string', format: 'date-time' } },
      { name: 'cursor', description: 'from a previous page\'s Link header (D39)', schema: { type: 'string' } },
    ],
    ok: { status: 200, description: 'The events', schema: arrayOf('Event'), headers: { Link: { description: 'the next page, when there is one (D39)', schema: { type: 'string' } } } },
    alsoErrors: { 400: 'UnknownUserError' },
  },
  'POST /ccs/v1/segmentation': {
    area: 'segmentation', tag: 'Segmentation', key: 'public',
    summary: 'Segment a user on its stored state (stateful)',
    description: 'Runs the events through ingestion and answers the cohorts the user is in afterwards (D24).',
    body: { required: true, schema: { type: 'object', properties: { ...userIdent, events: { type: 'array', maxItems: 10, items: ref('SegmentationEvent') } } } },
    ok: { status: 200, description: 'The user and its cohorts', schema: { type: 'object', properties: { user_id: uuid, cohorts: { type: 'array', items: { type: 'string' } } }, required: ['user_id', 'cohorts'] } },
  },
  'POST /ccs/v1/segmentation/stateless': {
    area: 'segmentation', tag: 'Segmentation', key: 'public',
    summary: 'Segment a user on a state the client keeps (stateless)',
    description: 'Nothing about the user is read or written; the events are published to ingestion after the answer (D21–D24, D42).',
    query: [{ name: 'synchronous-validation', description: 'validate the events against their schemas before answering (code 1007); default after (D21, D24)', schema: { type: 'boolean' } }],
    body: { required: true, schema: { type: 'object', properties: { ...userIdent, events: { type: 'array', maxItems: 10, items: ref('SegmentationEvent') }, state: ref('SegmentationState') } } },
    ok: { status: 200, description: 'The user and its new state', schema: { type: 'object', properties: { user_id: uuid, state: ref('SegmentationState') }, required: ['user_id', 'state'] } },
  },
  'GET /cohorts-api/v2/cohorts': {
    area: 'cohorts', tag: 'Cohorts', key: 'private',
    summary: 'List cohorts',
    description: 'The key\'s workspace and its ancestors; with include-child-workspaces=true (descendants access, D8) the workspaces below too.',
    query: [{ name: 'include-child-workspaces', description: 'also cohorts of workspaces below the key\'s', schema: { type: 'boolean', default: false } }],
    ok: { status: 200, description: 'Cohort summaries (no query)', schema: arrayOf('CohortSummary') },
    errors: [404, 409],
  },
  'POST /cohorts-api/v2/cohorts': {
    area: 'cohorts', tag: 'Cohorts', key: 'private',
    summary: 'Create a cohort',
    description: 'Evaluated over the stored history of every user (D19); `backfill` shows the progress.',
    body: {
      required: true,
      schema: {
        type: 'object',
        properties: { ...cohortWrite, segment_type: { type: 'string', enum: ['real_time', 'offline'] }, workspace_id: uuid },
        required: ['name', 'query'],
      },
    },
    ok: { status: 201, description: 'The cohort', schema: ref('Cohort') },
    errors: [404],
  },
  'GET /cohorts-api/v2/cohorts/:cohortId': {
    area: 'cohorts', tag: 'Cohorts', key: 'private',
    summary: 'Read a cohort',
    path: COHORT_ID,
    ok: { status: 200, description: 'The cohort with its query and live size (D15)', schema: ref('Cohort') },
  },
  'PATCH /cohorts-api/v2/cohorts/:cohortId': {
    area: 'cohorts', tag: 'Cohorts', key: 'private',
    summary: 'Update a cohort',
    description: 'Absent fields stay; `description: null` deletes it; `state` enables or disables (D16).',
    path: COHORT_ID,
    body: { required: true, schema: { type: 'object', properties: { ...cohortWrite, state: { type: 'string', enum: ['Enabled', 'Disabled'] } } } },
    ok: { status: 200, description: 'The cohort', schema: ref('Cohort') },
    errors: [409],
  },
  'DELETE /cohorts-api/v2/cohorts/:cohortId': {
    area: 'cohorts', tag: 'Cohorts', key: 'private',
    summary: 'Delete a cohort',
    description: 'A cohort another cohort\'s query names is 409 code 4000, its cause naming them (D18).',
    path: COHORT_ID,
    ok: { status: 200, description: 'Deleted (empty body, D16)' },
    errors: [409],
  },
  'POST /cohorts-api/v2/cohorts/:cohortId/recompute': {
    area: 'cohorts', tag: 'Cohorts', key: 'private',
    summary: 'Recompute a cohort over stored history',
    description: 'Evaluates the cohort over stored history again (an offline cohort, D20, computes its members): 202 while that runs, with its `backfill` progress; 200 once done.',
    path: COHORT_ID,
    ok: { status: 202, description: 'Running: the cohort with its `backfill` progress', schema: ref('Cohort') },
    alsoOk: [{ status: 200, description: 'Done: the cohort with its `backfill` progress' }],
  },
  'GET /cohorts-api/v2/cohorts/:cohortId/series': {
    area: 'cohorts', tag: 'Cohorts', key: 'private',
    summary: 'A cohort\'s last day, minute by minute',
    description: 'Its size at the end of each minute and its live entries and exits per minute (by commit time), oldest first, 1440 minutes up to now. Kept from the transitions log, so it survives restarts within the log\'s retention (D38). Sizes are exact back from now; before a disable they read 0.',
    path: COHORT_ID,
    ok: { status: 200, description: 'The series', schema: ref('CohortSeries') },
  },
  'GET /cohorts-api/v2/cohorts/:cohortId/explain': {
    area: 'cohorts', tag: 'Cohorts', key: 'private',
    summary: 'Why a user is or is not in a cohort',
    description: 'Replays the user\'s whole history through the engine with each clause of the query as a cohort of its own, at the current time, and answers which clauses hold (the query in conjunctive normal form: groups joined by and, clauses in a group by or), beside the live membership.',
    path: COHORT_ID,
    query: [{ name: 'user_id', required: true, description: 'the user id', schema: uuid }],
    ok: { status: 200, description: 'The explanation', schema: ref('Explanation') },
  },
  'GET /cohorts-api/v2/users/:userId/cohorts': {
    area: 'cohorts', tag: 'Cohorts', key: 'private',
    summary: 'The cohorts a user is in now',
    description: 'Live memberships, limited to the cohorts the key can see (D9; with descendants access, those below too).',
    path: { userId: 'the user id' },
    ok: {
      status: 200,
      description: 'The cohorts',
      schema: { type: 'array', items: { type: 'object', properties: { id: uuid, code: { type: 'integer' }, name: { type: 'string' }, segment_type: { type: 'string', enum: ['real_time', 'offline'] } }, required: ['id', 'code', 'name', 'segment_type'] } },
    },
  },
  'GET /v2.0/aliases/:tag/:id': {
    area: 'identity', tag: 'Identity', key: 'private',
    summary: 'Find the user an alias points to',
    description: 'Not served on the legacy address (D47).',
    path: { tag: 'the alias tag', id: 'the alias id (URL-encoded)' },
    ok: { status: 200, description: 'The alias and its user', schema: ref('AliasView') },
  },
  'GET /reactions-api/v1/reactions': {
    area: 'cohorts', tag: 'Reactions', key: 'private',
    summary: 'List reactions',
    ok: { status: 200, description: 'The reactions the key can see (D37)', schema: arrayOf('Reaction') },
  },
  'POST /reactions-api/v1/reactions': {
    area: 'cohorts', tag: 'Reactions', key: 'private',
    summary: 'Create a reaction',
    description: 'A webhook on a cohort\'s entries, exits, or page loads of its members (D37). Deliveries are signed with the secret.',
    body: {
      required: true,
      schema: {
        type: 'object',
        properties: { ...reactionWrite, cohort_id: uuid, trigger: { type: 'string', enum: ['on_entry', 'on_exit', 'every_time'] } },
        required: ['name', 'cohort_id', 'trigger', 'action'],
      },
    },
    ok: {
      status: 201,
      description: 'The reaction and its signing secret (shown only here)',
      schema: { allOf: [ref('Reaction'), { type: 'object', properties: { secret: { type: 'string' } }, required: ['secret'] }] },
    },
    errors: [404],
  },
  'GET /reactions-api/v1/reactions/:reactionId': {
    area: 'cohorts', tag: 'Reactions', key: 'private',
    summary: 'Read a reaction',
    path: REACTION_ID,
    ok: { status: 200, description: 'The reaction', schema: ref('Reaction') },
  },
  'PATCH /reactions-api/v1/reactions/:reactionId': {
    area: 'cohorts', tag: 'Reactions', key: 'private',
    summary: 'Update a reaction (name, action, state)',
    path: REACTION_ID,
    body: { required: true, schema: { type: 'object', properties: { ...reactionWrite, state: { type: 'string', enum: ['Enabled', 'Disabled'] } } } },
    ok: { status: 200, description: 'The reaction', schema: ref('Reaction') },
  },
  'DELETE /reactions-api/v1/reactions/:reactionId': {
    area: 'cohorts', tag: 'Reactions', key: 'private',
    summary: 'Delete a reaction',
    path: REACTION_ID,
    ok: { status: 200, description: 'Deleted (empty body)' },
  },
  'GET /reactions-api/v1/reactions/:reactionId/deliveries': {
    area: 'cohorts', tag: 'Reactions', key: 'private',
    summary: 'Recent deliveries of a reaction, newest first',
    path: REACTION_ID,
    query: [
      { name: 'status', description: 'only deliveries in this state', schema: { type: 'string', enum: ['pending', 'failed', 'delivered'] } },
      { name: 'limit', description: 'at most this many (1..1000, default 100)', schema: { type: 'integer', minimum: 1, maximum: 1000, default: 100 } },
    ],
    ok: { status: 200, description: 'The deliveries', schema: arrayOf('Delivery') },
  },
  'POST /reactions-api/v1/reactions/:reactionId/deliveries/:deliveryId/retry': {
    area: 'cohorts', tag: 'Reactions', key: 'private',
    summary: 'Retry a failed delivery',
    path: { ...REACTION_ID, deliveryId: 'the delivery\'s id' },
    ok: { status: 200, description: 'The delivery, pending again', schema: ref('Delivery') },
    errors: [409],
  },
  'GET /reactions-api/v1/stream': {
    area: 'cohorts', tag: 'Reactions', key: 'private',
    summary: 'Live stream of cohort entries and exits (WebSocket)',
    description:
      'A WebSocket (upgrade this GET). Each message is one JSON text frame, a StreamMessage, in commit order (D38). Close codes: 4410 when `after` is older than the transitions log keeps, 4429 for a consumer too slow to keep up.',
    query: [
      { name: 'cohorts', description: 'comma-separated cohort codes to follow (default all the key can see)', schema: { type: 'string' } },
      { name: 'after', description: 'resume right after this cursor', schema: { type: 'string' } },
    ],
    ok: { status: 101, description: 'Switching to the WebSocket protocol; then StreamMessage frames', schema: ref('StreamMessage') },
    extensions: { 'x-websocket': true },
  },
};
