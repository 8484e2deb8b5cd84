// The floor: the least a server can do for the HTTP benchmarks' calls and still store them (and segment them), to show
// how far a target is from what this machine allows. It is the minimal design of ../shared/design/ARCHITECTURE.md
// ("What the first build taught"): uWebSockets.js, each body parsed, one LevelDB key per event (its record in
// msgpack) in one chained batch per event-loop turn; the users' decoded states resident in a Map, `segment` run inline
// on the main thread with the bench's 100 cohorts and an empty constant context (transitions counted, not stored).
// - Track calls (`POST /v2.0/events`): stored, answered once the batch is written; segmented only with `--engine`.
// - Stateless calls (`POST /ccs/v1/segmentation/stateless`, always segmented): the caller's state decoded (the
//   engine's own encoding, as this floor answered it; no DEFLATE, no encryption, no validation), the call's events
//   segmented on it, the cohorts and the new state (encoded, base64) answered without waiting for a write; and, as the
//   spec has it ("events sent through the stateless segmentation operation are published to the same ingestion",
//   D24), the events stored one key each and segmented against the user's resident state.
// Nothing else: no keys, no identity beyond one Map from an alias to a user (an alias call is its own user: no
// binding), no validation, schemas, idempotency index, size counters, access log or metrics. Not a product: a bench
// tool, run by `bench/ab.ts --variant NAME=floor[,--engine]` (`--mode ingest` or `--mode stateless`).
// Run: node dist/bench/floor-server.js --data DIR [--engine] [--port 0]; prints `listening on http://HOST:PORT`.

import { randomUUID } from 'node:crypto';
import { Level } from 'level';
import { Packr } from 'msgpackr';
import * as uWS from 'uWebSockets.js';
import { LEVEL_OPTIONS } from '../server/store/level.js';
import { compilePlan, decodeState, encodeState, newUserState, segment, type EngineEvent, type SegmentContext, type UserState } from '../engine/index.js';
import { SampleGenerator } from '../test/support/sample-cohorts.js';
import { listenUntilStopped } from './listen.js';

const argument = (name: string): string | undefined => {
  const at = process.argv.indexOf(name);
  return at >= 0 ? process.argv[at + 1] : undefined;
};
const dataDir = argument('--data');
if (dataDir === undefined) {
  process.stderr.write('usage: node dist/bench/floor-server.js --data DIR [--engine] [--port 0]\n');
  process.exit(2);
}
const port = Number(argument('--port') ?? '0');
const withEngine = process.argv.includes('--engine');
const host = '127.0.0.1';

// LevelDB as the store opens it (server/store/level.ts): utf8 keys, byte values, 64 MiB memtables, no compression.
const db = new Level<string, Uint8Array>(dataDir, LEVEL_OPTIONS);
await db.open();
const packr = new Packr({ useRecords: false });
// The bench's cohorts (the HTTP bench creates the same ones through the API: bench/workload/cohorts.ts).
const plan = compilePlan(new SampleGenerator(42).cohorts(100), 1);
const NO_ROWS: readonly never[] = [];
const context: SegmentContext = { inImportedSegment: () => false, connectionRows: () => NO_ROWS, constant: true };
const states = new Map<string, UserState>();
const aliasUsers = new Map<string, string>();
let transitions = 0;
/** Events stateless calls published (stored and segmented against the resident states). */
let publishedEvents = 0;

interface Pending {
  readonly res: uWS.HttpResponse;
  aborted: boolean;
}
let batch = db.batch();
let waiting: Pending[] = [];
let flushQueued = false;

/** The batch is written at the end of this event-loop turn. */
function queueFlush(): void {
  if (flushQueued) return;
  flushQueued = true;
  setImmediate(flush);
}

/** Writes this turn's batch, then answers its requests (a failed write answers 500). */
function flush(): void {
  flushQueued = false;
  const written = batch;
  const answered = waiting;
  batch = db.batch();
  waiting = [];
  const answer = (status: string, body: string): void => {
    for (const pending of answered) {
      if (pending.aborted) continue;
      pending.res.cork(() => pending.res.writeStatus(status).writeHeader('Content-Type', 'application/json').end(body));
    }
  };
  written.write().then(
    () => answer('200 OK', '{"ok":true}'),
    () => answer('500 Internal Server Error', '{"ok":false}'),
  );
}

interface TrackBody {
  readonly user_id?: string;
  readonly aliases?: readonly { readonly id: string; readonly tag: string }[];
  readonly name: string;
  readonly properties?: Record<string, unknown>;
}

function userOf(body: TrackBody): string | undefined {
  if (typeof body.user_id === 'string') return body.user_id;
  const alias = body.aliases?.[0];
  if (alias === undefined) return undefined;
  const key = `${alias.tag}:${alias.id}`;
  let user = aliasUsers.get(key);
  if (user === undefined) aliasUsers.set(key, (user = randomUUID()));
  return user;
}

function track(body: TrackBody, pending: Pending): boolean {
  const user = userOf(body);
  if (user === undefined || typeof body.name !== 'string') return false;
  const time = Date.now();
  const id = randomUUID();
  const properties = body.properties ?? {};
  if (withEngine) segmentResident(user, [{ name: body.name, time, properties }]);
  store(user, id, body.name, time, properties);
  waiting.push(pending);
  queueFlush();
  return true;
}

/** Runs `events` against the user's resident state (made at its first event). */
function segmentResident(user: string, events: readonly EngineEvent[]): void {
  let state = states.get(user);
  if (state === undefined) states.set(user, (state = newUserState()));
  transitions += segment(plan, state, events, context).transitions.length;
}

/** One key per event in this turn's batch. */
function store(user: string, id: string, name: string, time: number, properties: Readonly<Record<string, unknown>>): void {
  batch.put(`e!${user}!${time.toString(36).padStart(9, '0')}!${id}`, packr.pack({ id, name, time, properties }));
}

interface StatelessBody {
  readonly user_id?: string;
  readonly events?: readonly { readonly name?: unknown; readonly time?: unknown; readonly properties?: Record<string, unknown> }[];
  readonly state?: string;
}

/** A stateless call: answered at once from the caller's state, then its events published (stored and segmented). */
function stateless(body: StatelessBody, res: uWS.HttpResponse): boolean {
  const user = body.user_id;
  if (typeof user !== 'string' || !Array.isArray(body.events) || body.events.length === 0) return false;
  const now = Date.now();
  const events: EngineEvent[] = [];
  for (const event of body.events) {
    if (typeof event?.name !== 'string') return false;
    const time = typeof event.time === 'string' ? Date.parse(event.time) : now;
    events.push({ name: event.name, time: Number.isFinite(time) ? time : now, properties: event.properties ?? {} });
  }
  const state = typeof body.state === 'string' ? decodeState(Buffer.from(body.state, 'base64')) : newUserState();
  const result = segment(plan, state, events, context);
  const sealed = Buffer.from(encodeState(result.state, { slotBitmap: true })).toString('base64');
  const answer = JSON.stringify({ user_id: user, cohorts: result.memberships, state: sealed });
  segmentResident(user, events);
  for (const event of events) store(user, randomUUID(), event.name, event.time, event.properties);
  publishedEvents += events.length;
  queueFlush();
  // Answered before its events are written (D24: published after the response).
  res.cork(() => res.writeStatus('200 OK').writeHeader('Content-Type', 'application/json').end(answer));
  return true;
}

const app = uWS.App();

/** Reads a whole body, then hands it parsed to `handle`; a body it cannot parse or `handle` refuses is a 400. */
function onJson(res: uWS.HttpResponse, pending: Pending, handle: (body: unknown) => boolean): void {
  let chunks: Buffer[] = [];
  res.onAborted(() => {
    pending.aborted = true;
  });
  res.onData((chunk, isLast) => {
    chunks.push(Buffer.from(Buffer.from(chunk)));
    if (!isLast || pending.aborted) return;
    const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
    chunks = [];
    let accepted = false;
    try {
      accepted = handle(JSON.parse(body.toString('utf8')));
    } catch {
      accepted = false;
    }
    if (!accepted) res.cork(() => res.writeStatus('400 Bad Request').writeHeader('Content-Type', 'application/json').end('{"ok":false}'));
  });
}

app.post('/v2.0/events', (res) => {
  const pending: Pending = { res, aborted: false };
  onJson(res, pending, (body) => track(body as TrackBody, pending));
});
app.post('/ccs/v1/segmentation/stateless', (res) => {
  const pending: Pending = { res, aborted: false };
  onJson(res, pending, (body) => stateless(body as StatelessBody, res));
});
// What the floor did (for its test): resident states, transitions and published events so far.
app.get('/stats', (res) => {
  res.cork(() => res.writeHeader('Content-Type', 'application/json').end(JSON.stringify({ states: states.size, transitions, published: publishedEvents })));
});
listenUntilStopped(app, host, port, () => db.close());
