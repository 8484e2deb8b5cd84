// The floor: the least a server can do for the ingestion benchmark's track calls and still store them (and, with
// `--engine`, segment them), to show how far the ingestion target is from what this machine allows. It is the minimal
// design of ../shared/design/ARCHITECTURE.md ("What the first build taught"): uWebSockets.js, each body parsed, one
// LevelDB key per event (its record in msgpack) in one chained batch per event-loop turn, answered once the batch is
// written; with `--engine`, the user's decoded state resident in a Map and `segment` run inline on the main thread
// with the bench's 100 cohorts and an empty constant context (transitions counted, not stored). Nothing else: no
// keys, no identity beyond one Map from an alias to a user (an alias call is its own user: no binding), no
// validation, schemas, idempotency index, size counters, access log or metrics. Not a product: a bench tool, run by
// `bench/ab.ts --variant NAME=floor[,--engine]`.
// Run: node dist/bench/floor-server.js --data DIR [--engine] [--port 0]; prints `listening on http://HOST:PORT`.

import { randomUUID } from 'node:crypto';
import { Level } from 'level';
import { Packr } from 'msgpackr';
import * as uWS from 'uWebSockets.js';
import { LEVEL_OPTIONS } from '../server/store/level.js';
import { compilePlan, newUserState, segment, type SegmentContext, type UserState } from '../engine/index.js';
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

interface Pending {
  readonly res: uWS.HttpResponse;
  aborted: boolean;
}
let batch = db.batch();
let waiting: Pending[] = [];
let flushQueued = false;

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
  if (withEngine) {
    let state = states.get(user);
    if (state === undefined) states.set(user, (state = newUserState()));
    transitions += segment(plan, state, [{ name: body.name, time, properties }], context).transitions.length;
  }
  batch.put(`e!${user}!${time.toString(36).padStart(9, '0')}!${id}`, packr.pack({ id, name: body.name, time, properties }));
  waiting.push(pending);
  if (!flushQueued) {
    flushQueued = true;
    setImmediate(flush);
  }
  return true;
}

const app = uWS.App();
app.post('/v2.0/events', (res) => {
  const pending: Pending = { res, aborted: false };
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
      accepted = track(JSON.parse(body.toString('utf8')) as TrackBody, pending);
    } catch {
      accepted = false;
    }
    if (!accepted) res.cork(() => res.writeStatus('400 Bad Request').writeHeader('Content-Type', 'application/json').end('{"ok":false}'));
  });
});
// What the floor did (for its test): resident states and transitions so far.
app.get('/stats', (res) => {
  res.cork(() => res.writeHeader('Content-Type', 'application/json').end(JSON.stringify({ states: states.size, transitions })));
});
listenUntilStopped(app, host, port, () => db.close());
