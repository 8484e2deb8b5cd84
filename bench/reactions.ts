// Reactions benchmark (issue 13, D36–D38), in process: one `startService` with one owner thread, a local webhook
// receiver and a stream client, the load generator beside them on the same cores.
// (1) Deliveries: N users each send one Pageview (acknowledged one by one over a few keep-alive connections); a
//     cohort every viewer enters has an on_entry webhook. Measured: p50/p99 from each event's acknowledgement to its
//     webhook's arrival and to its stream message (signed: a frame can arrive before the HTTP answer does). Then a
//     backlog of N pending deliveries is written into the outbox at once (records as the tick writes them) and the
//     loop is woken: deliveries per second is N over the time to the last arrival (the loop's own pace).
// (2) Deadline lag at the ingestion benchmark's load: autocannon with the ingest bench's settings sends Pageviews
//     timed now for a pool of users, under a cohort `Pageview in the last 1 second`, so every event schedules a
//     deadline a second later (D36); measured: how late each re-evaluation commits after its deadline (median, p99,
//     max), and how many there were.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { startService, type RunningService } from '../server/app.js';
import { initialiseDataDir } from '../server/bootstrap.js';
import { runLoad, type LoadSettings } from './load.js';
import type { BatchOp } from '../server/store/contract.js';
import { deliveryId, reactionsKeys, type Delivery } from '../server/domain/reactions/contract.js';

export interface ReactionsBenchOptions {
  /** Users (one event each) of the delivery part. */
  readonly users?: number;
  /** Concurrent track calls of the delivery part. */
  readonly concurrency?: number;
  /** The load of the deadline part (the ingestion benchmark's). */
  readonly load: LoadSettings;
  /** Users the deadline part's events go to. */
  readonly deadlineUsers?: number;
}

export interface Percentiles {
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  readonly count: number;
}

export interface ReactionsBenchResult {
  readonly deliveries: {
    readonly users: number;
    /** Backlog drained per second once the reaction is enabled. */
    readonly perSecond: number;
    readonly ackToWebhookMs: Percentiles;
    readonly ackToStreamMs: Percentiles;
  };
  readonly deadlines: {
    readonly trackRps: number;
    readonly evaluated: number;
    readonly lagMs: Percentiles;
  };
}

export async function runReactionsBench(options: ReactionsBenchOptions, progress: (line: string) => void = () => undefined): Promise<ReactionsBenchResult> {
  const deliveries = await withService((s) => measureDeliveries(s, options.users ?? 5000, options.concurrency ?? 16, progress));
  const deadlines = await withService((s) => measureDeadlineLag(s, options.load, options.deadlineUsers ?? 5000, progress));
  return { deliveries, deadlines };
}

interface Served {
  readonly service: RunningService;
  readonly privateKey: string;
  readonly publicKey: string;
}

async function withService<T>(run: (served: Served) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'audience-bench-reactions-'));
  try {
    const keys = await initialiseDataDir(join(dir, 'data'), 'Bench');
    if (keys === 'already-initialised') throw new Error('a fresh directory was already initialised');
    const service = await startService({ dataDir: join(dir, 'data'), host: '127.0.0.1', port: 0, threads: 1, log: () => undefined });
    try {
      return await run({ service, privateKey: keys.private_key, publicKey: keys.public_key });
    } finally {
      await service.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function post(url: string, key: string, body: unknown): Promise<any> {
  const response = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-API-Key': key }, body: JSON.stringify(body) });
  const text = await response.text();
  if (response.status >= 300) throw new Error(`POST ${url}: ${response.status} ${text}`);
  return JSON.parse(text);
}

async function measureDeliveries(s: Served, users: number, concurrency: number, progress: (line: string) => void): Promise<ReactionsBenchResult['deliveries']> {
  const arrivals = new Map<string, number>();
  let last = 0;
  const receiver: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const at = performance.now();
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { event_id: string };
      if (!arrivals.has(body.event_id)) arrivals.set(body.event_id, at);
      last = Math.max(last, at);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  const streamed = new Map<string, number>();
  let socket: WebSocket | undefined;
  try {
    const cohort = await post(`${s.service.url}/cohorts-api/v2/cohorts`, s.privateKey, { name: 'Viewers', query: { event: 'Pageview' } });
    const reaction = await post(`${s.service.url}/reactions-api/v1/reactions`, s.privateKey, { name: 'welcome', cohort_id: cohort.id, trigger: 'on_entry', action: { type: 'webhook', url: hook } });
    socket = new WebSocket(`${s.service.url.replace('http', 'ws')}/reactions-api/v1/stream`, { headers: { 'X-API-Key': s.privateKey } });
    socket.on('message', (data) => {
      const message = JSON.parse(String(data)) as { event_id: string };
      streamed.set(message.event_id, performance.now());
    });
    await new Promise<void>((resolve, reject) => {
      socket?.once('open', () => resolve());
      socket?.once('error', reject);
    });
    progress(`  reactions: ${users.toLocaleString('en')} users enter a cohort with an on_entry webhook`);
    const send = async (acks: Map<string, number>): Promise<void> => {
      let next = 0;
      const loop = async (): Promise<void> => {
        while (next < users) {
          next++;
          const id = randomUUID();
          await post(`${s.service.url}/v2.0/events`, s.publicKey, { id, user_id: randomUUID(), name: 'Pageview', time: new Date().toISOString(), properties: {} });
          acks.set(id, performance.now());
        }
      };
      await Promise.all(Array.from({ length: concurrency }, loop));
    };
    const waitFor = async (count: number): Promise<void> => {
      const deadline = Date.now() + 120_000;
      while ((arrivals.size < count || streamed.size < count) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      if (arrivals.size < count) throw new Error(`only ${arrivals.size} of ${count} webhooks arrived within 2 minutes`);
      if (streamed.size < count) throw new Error(`only ${streamed.size} of ${count} stream messages arrived within 2 minutes`);
    };
    const acks = new Map<string, number>();
    await send(acks);
    await waitFor(users);
    const lag = (arrived: Map<string, number>): number[] => [...acks].map(([id, at]) => (arrived.get(id) as number) - at);
    // The delivery loop's own pace: a backlog of pending deliveries (as the tick writes them), then one wake-up.
    progress(`  reactions: a backlog of ${users.toLocaleString('en')} pending deliveries drained`);
    const id = reaction.id as string;
    const template = (await s.service.services.store.get<Delivery>(reactionsKeys.delivery(id, 1))) as Delivery;
    const ops: BatchOp[] = [];
    for (let i = 0; i < users; i++) {
      const seq = 1_000_000 + i;
      const body = { ...template.body, id: deliveryId(seq), user_id: randomUUID(), event_id: randomUUID() };
      ops.push({ type: 'put', key: reactionsKeys.delivery(id, seq), value: { ...template, seq, body, status: 'pending', attempts: 0, next_at: 0 } });
      ops.push({ type: 'put', key: reactionsKeys.pending(id, seq), value: body.user_id });
    }
    await s.service.services.store.batch(ops);
    const before = arrivals.size;
    const woken = performance.now();
    s.service.services.deliveries.notify([id]);
    const deadline = Date.now() + 120_000;
    while (arrivals.size < before + users && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    if (arrivals.size < before + users) throw new Error(`only ${arrivals.size - before} of ${users} backlog deliveries arrived within 2 minutes`);
    return {
      users,
      perSecond: users / Math.max(0.001, (last - woken) / 1000),
      ackToWebhookMs: percentiles(lag(arrivals)),
      ackToStreamMs: percentiles(lag(streamed)),
    };
  } finally {
    socket?.terminate();
    receiver.closeAllConnections();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  }
}

async function measureDeadlineLag(s: Served, load: LoadSettings, users: number, progress: (line: string) => void): Promise<ReactionsBenchResult['deadlines']> {
  await post(`${s.service.url}/cohorts-api/v2/cohorts`, s.privateKey, { name: 'Viewed in the last second', query: { event: 'Pageview', during: { the_last: { value: 1, unit: 'seconds' } } } });
  const ids = Array.from({ length: users }, () => randomUUID());
  let k = 0;
  progress(`  reactions: deadline lag under ${load.connections} connections for ${load.durationSeconds} s (every event schedules a deadline 1 s later)`);
  const result = await runLoad(
    {
      url: s.service.url,
      path: '/v2.0/events',
      headers: { 'x-api-key': s.publicKey },
      body: () => `{"user_id":"${ids[k++ % users] as string}","name":"Pageview","properties":{}}`,
    },
    load,
  );
  // The last deadlines fall a second after the load: let them commit.
  await new Promise((resolve) => setTimeout(resolve, 2500));
  const stats = s.service.services.pipeline.deadlineStats();
  if (stats === undefined) throw new Error('the pipeline runs no deadline scheduler');
  return { trackRps: result.rps, evaluated: stats.evaluated, lagMs: percentiles([...stats.lagsMs]) };
}

function percentiles(values: number[]): Percentiles {
  if (values.length === 0) return { p50: Number.NaN, p99: Number.NaN, max: Number.NaN, count: 0 };
  values.sort((a, b) => a - b);
  const at = (p: number): number => values[Math.min(values.length - 1, Math.floor((p / 100) * values.length))] as number;
  return { p50: at(50), p99: at(99), max: values[values.length - 1] as number, count: values.length };
}
