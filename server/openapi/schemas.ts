// The OpenAPI document's components: one JSON Schema (2020-12, as OpenAPI 3.1 uses) per wire shape of the spec and
// its decisions. test/e2e/openapi.test.ts holds real responses of every route against these, so they say what the
// server sends, not what it was meant to.

type Schema = Record<string, unknown>;

export const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const uuid: Schema = { type: 'string', format: 'uuid' };
const time: Schema = { type: 'string', format: 'date-time', description: 'UTC ISO 8601 with milliseconds (D3)' };
const text: Schema = { type: 'string' };
const strings: Schema = { type: 'array', items: text };
const nullable = (schema: Schema): Schema => ({ ...schema, type: [schema.type as string, 'null'] });
const object = (properties: Record<string, Schema>, required: readonly string[], extra: Schema = {}): Schema => ({
  type: 'object',
  properties,
  required: [...required],
  ...extra,
});
const anyObject: Schema = { type: 'object' };

const backfill = object(
  {
    state: { type: 'string', enum: ['running', 'done'] },
    users_done: { type: 'integer', minimum: 0 },
    users_total: { type: 'integer', minimum: 0 },
  },
  ['state', 'users_done', 'users_total'],
  { description: 'The evaluation over stored history (D19) of a created, changed or enabled query, while it runs.' },
);

const cohortSummary = object(
  {
    id: uuid,
    code: { type: 'integer', minimum: 1, description: 'short id used inside queries (D17)' },
    name: text,
    description: text,
    tags: strings,
    state: { type: 'string', enum: ['Enabled', 'Disabled'] },
    workspace_id: uuid,
    segment_type: { type: 'string', enum: ['real_time', 'offline'] },
    live_audience_size: { type: 'integer', minimum: 0, description: 'exact number of members now (D19); real-time cohorts' },
    created_at: time,
    last_updated_at: time,
    backfill,
  },
  ['id', 'code', 'name', 'tags', 'state', 'workspace_id', 'segment_type', 'created_at', 'last_updated_at'],
);

const clause = (keys: readonly string[], description: string): Schema => ({
  type: 'object',
  description,
  minProperties: 1,
  maxProperties: 1,
  propertyNames: { enum: [...keys] },
});

const expression = object(
  {
    event: { type: 'string', pattern: '^[A-Za-z0-9_]{1,128}$' },
    frequency: { ...anyObject, description: 'a number comparison, default {greater_than_or_equal_to: 1} (D33)' },
    during: { ...anyObject, description: 'the_last, in_interval, before, after, first or last (D33)' },
    where: { ...anyObject, description: 'a condition on properties, or and/or of conditions one level deep (D34)' },
  },
  ['event'],
  { description: 'Expression clause: events of a name, how many, when, with which properties.' },
);

const queryClause: Schema = {
  oneOf: [
    expression,
    clause(['engaged_time', 'engaged_completion', 'engaged_views'], 'Engagement clause (D32).'),
    clause(['has_entered', 'has_not_entered', 'has_exited', 'has_not_exited'], 'Transition clause {segment: code, during?, where?} (D35).'),
    clause(['in_third_party_segment', 'not_in_third_party_segment', 'in_second_party_segment', 'not_in_second_party_segment'], 'Membership of an imported segment {provider, segment} (D27).'),
    clause(['in_connections_import_segment', 'not_in_connections_import_segment'], 'Connections import clause (D27).'),
  ],
};

const orOf = object({ or: { type: 'array', minItems: 1, items: ref('CohortQueryClause') } }, ['or'], { additionalProperties: false });

const event = object(
  {
    id: uuid,
    user_id: uuid,
    name: text,
    time,
    properties: anyObject,
  },
  ['id', 'user_id', 'name', 'time', 'properties'],
);

const alias = object({ id: text, tag: text, priority: { type: 'integer' } }, ['id', 'tag']);
const aliasRef = object({ tag: text, id: text }, ['tag', 'id']);
const userRef: Schema = { oneOf: [object({ user_id: uuid }, ['user_id']), object({ alias: aliasRef }, ['alias'])] };

const segment = object(
  {
    id: uuid,
    code: text,
    name: text,
    import_id: uuid,
    description: nullable(text),
    cpm: nullable({ type: 'number', minimum: 0 }),
    categories: strings,
    updated_at: time,
    member_count: { type: 'integer', minimum: 0, description: 'users in the segment (in list answers)' },
  },
  ['id', 'code', 'name', 'import_id', 'description', 'cpm', 'categories', 'updated_at'],
);

const segmentFields = {
  name: text,
  description: nullable(text),
  cpm: nullable({ type: 'number', minimum: 0 }),
  categories: strings,
};

const propertyType: Schema = { type: 'string', enum: ['string', 'number', 'boolean', 'date', 'list'] };

const importRecord = object(
  {
    id: uuid,
    name: text,
    code: { type: 'string', description: 'the `provider` queries name (D27)' },
    relation: { type: 'string', enum: ['2nd', '3rd'] },
    kind: { type: 'string', enum: ['segments', 'connections'] },
    identifiers: { ...strings, description: 'alias tags the import matches users by' },
    schema: { type: 'object', additionalProperties: propertyType, description: 'connections imports only' },
    workspace_id: uuid,
    created_at: time,
    updated_at: time,
    description: nullable(text),
    source: object({ id: uuid, type: { type: 'string', enum: ['api'] }, state: anyObject }, ['id', 'type', 'state'], { description: 'D45' }),
  },
  ['id', 'name', 'code', 'relation', 'kind', 'identifiers', 'workspace_id', 'created_at', 'updated_at', 'description', 'source'],
);

const reactionFields = {
  id: uuid,
  name: text,
  cohort_id: uuid,
  cohort_code: { type: 'integer' },
  trigger: { type: 'string', enum: ['on_entry', 'on_exit', 'every_time'] },
  action: ref('WebhookAction'),
  state: { type: 'string', enum: ['Enabled', 'Disabled'] },
  workspace_id: uuid,
  created_at: time,
  last_updated_at: time,
};
const reactionRequired = Object.keys(reactionFields);
const cohortRef = object({ id: uuid, code: { type: 'integer' }, name: text }, ['id', 'code']);

const errorDetail = (withType: boolean): Schema =>
  object(
    {
      ...(withType ? { type: { type: 'string', format: 'uri', description: 'the RFC section of the status (D10)' }, status_code: { type: 'integer' } } : {}),
      status: { type: 'string', description: 'reason phrase' },
      code: { type: 'integer', description: 'service subcode (D11)' },
      message: text,
      docs: { type: 'string', format: 'uri', description: '{docs_url}/errors/{status}/{code}' },
      cause: text,
    },
    [...(withType ? ['type', 'status_code'] : []), 'status', 'code', 'message', 'docs'],
  );

export const SCHEMAS: Record<string, Schema> = {
  CohortSummary: cohortSummary,
  Cohort: {
    ...cohortSummary,
    properties: { ...(cohortSummary.properties as Record<string, Schema>), query: ref('CohortQuery') },
    required: [...(cohortSummary.required as string[]), 'query'],
  },
  CohortQuery: {
    description: 'A clause, {or: [clauses]}, or {and: [clauses or {or}]} (the spec\'s query format; D18 names the first problem of an invalid one by its JSON path).',
    oneOf: [ref('CohortQueryClause'), orOf, object({ and: { type: 'array', minItems: 1, items: { oneOf: [ref('CohortQueryClause'), orOf] } } }, ['and'], { additionalProperties: false })],
  },
  CohortQueryClause: queryClause,
  Event: event,
  Alias: alias,
  AliasRef: aliasRef,
  AliasView: object({ id: text, tag: text, platform_id: uuid }, ['id', 'tag', 'platform_id']),
  UserRef: userRef,
  SegmentationEvent: object(
    { name: text, time, properties: anyObject, view_id: nullable(uuid), session_id: nullable(uuid) },
    ['name', 'time'],
  ),
  SegmentationState: object(
    {
      internal_state: { ...anyObject, description: 'opaque, encrypted and authenticated (D42); pass back unchanged' },
      external_state: { ...anyObject, description: 'keyed by cohort code (D23)' },
      cohorts: { ...strings, description: 'codes of the cohorts the user is in' },
    },
    ['internal_state', 'external_state', 'cohorts'],
  ),
  Import: importRecord,
  Segment: segment,
  SegmentCreated: {
    ...segment,
    properties: { ...(segment.properties as Record<string, Schema>), importId: uuid, updatedAt: time },
    required: [...(segment.required as string[]), 'importId', 'updatedAt'],
    description: 'The create answer carries the spec\'s camelCase names too (D26).',
  },
  SegmentFields: object(segmentFields, []),
  Workspace: object({ id: uuid, name: text, parent_id: nullable(uuid), organization_id: uuid, created_at: time }, ['id', 'name', 'parent_id', 'organization_id', 'created_at']),
  Key: object(
    {
      id: uuid,
      type: { type: 'string', enum: ['public', 'private'] },
      name: text,
      workspace_id: uuid,
      access: { type: 'string', enum: ['workspace', 'descendants'] },
      created_at: time,
    },
    ['id', 'type', 'workspace_id', 'access', 'created_at'],
  ),
  WebhookAction: object({ type: { type: 'string', enum: ['webhook'] }, url: { type: 'string', format: 'uri' } }, ['type', 'url']),
  Reaction: object(reactionFields, reactionRequired),
  Delivery: object(
    {
      id: text,
      status: { type: 'string', enum: ['pending', 'failed', 'delivered'] },
      attempts: { type: 'integer', minimum: 0 },
      last_status: nullable({ type: 'integer' }),
      last_error: nullable(text),
      created_at: time,
      last_attempt_at: nullable(time),
      next_attempt_at: nullable(time),
      trigger: { type: 'string', enum: ['on_entry', 'on_exit', 'every_time'] },
      cohort: cohortRef,
      user_id: uuid,
      time,
      event_id: nullable(uuid),
    },
    ['id', 'status', 'attempts', 'last_status', 'last_error', 'created_at', 'last_attempt_at', 'next_attempt_at', 'trigger', 'cohort', 'user_id', 'time', 'event_id'],
  ),
  StreamMessage: object(
    {
      cursor: { type: 'string', description: 'resume after it with ?after=' },
      kind: { type: 'string', enum: ['entered', 'exited'] },
      cohort: object({ id: uuid, code: { type: 'integer' } }, ['id', 'code']),
      user_id: uuid,
      time,
      event_id: nullable(uuid),
    },
    ['cursor', 'kind', 'cohort', 'user_id', 'time', 'event_id'],
  ),
  CohortSeries: object(
    {
      id: uuid,
      code: { type: 'integer' },
      size: { type: 'integer', minimum: 0 },
      minutes: {
        type: 'array',
        items: object({ time, size: { type: 'integer', minimum: 0 }, entered: { type: 'integer', minimum: 0 }, exited: { type: 'integer', minimum: 0 } }, ['time', 'size', 'entered', 'exited']),
      },
    },
    ['id', 'code', 'size', 'minutes'],
  ),
  Explanation: object(
    {
      user_id: uuid,
      cohort: cohortRef,
      live_member: { type: 'boolean', description: 'the live membership' },
      member: { type: 'boolean', description: 'whether the whole query holds over the replayed history now' },
      events: { type: 'integer', description: 'events replayed' },
      groups: {
        type: 'array',
        description: 'the items of the query\'s and; a group holds when any of its clauses does',
        items: object(
          {
            path: text,
            holds: { type: 'boolean' },
            clauses: { type: 'array', items: object({ path: text, clause: { description: 'the clause as written in the query' }, holds: { type: 'boolean' } }, ['path', 'clause', 'holds']) },
          },
          ['path', 'holds', 'clauses'],
        ),
      },
    },
    ['user_id', 'cohort', 'live_member', 'member', 'events', 'groups'],
  ),
  CohortError: object({ request_id: uuid, error: errorDetail(true) }, ['request_id', 'error'], { description: 'Cohort, segmentation, reactions, admin and plain routes (D10).' }),
  IdentityError: object({ request_id: uuid, error: errorDetail(false) }, ['request_id', 'error'], { description: 'Identity and events routes (D10).' }),
  UnknownUserError: object(
    { request_id: uuid, status: text, code: { type: 'integer', const: 3002 }, message: text, docs: { type: 'string', format: 'uri' } },
    ['request_id', 'status', 'code', 'message', 'docs'],
    { description: 'The events read for a user never seen: flat, HTTP 400 (D12).' },
  ),
  TaxonomyError: object(
    {
      requestId: uuid,
      error: object(
        {
          c: { type: 'string', enum: ['InvalidRequestBody', 'ValidationError', 'MissingParameters', 'AuthorizationMissing', 'InvalidAPIKey', 'InsufficientAPIKey', 'DoesNotExist', 'AlreadyExists', 'UnspecifiedInternalError'] },
          d: object({ message: text, code: { type: 'integer' }, cause: text }, ['message']),
        },
        ['c', 'd'],
      ),
    },
    ['requestId', 'error'],
    { description: 'Taxonomy and imports routes (D13).' },
  ),
};
