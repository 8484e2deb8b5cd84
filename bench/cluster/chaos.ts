// `npm run cluster:chaos` (issue 15): on loopback, nats-servers and audience cluster nodes, bounded load through
// every node, and faults while it runs: kill -9 of the NATS stream leader, of a NATS follower, of an audience node
// owning partitions, and a SIGSTOP/SIGCONT stall of another. Then every acknowledged event is read back (from any
// node) and every cohort's size compared with a recomputation from the events read. It prints one line
// `acked N, found N, lost 0, applied twice 0, sizes equal` and exits 0 only then. Every process it starts is stopped
// by its PID; every loop is bounded in count and time. It also checks the live stream (D38): the cohorts made before
// the load only ever gain members, so the cluster's transitions stream must hold exactly one live entry per member
// (none lost, none repeated by a takeover), and every node must stream exactly those from the start (a line
// `streamed N entries once on every node`; the exit code counts it too). A smaller run (one nats-server, two nodes, one killed) is
// test/cluster/chaos.test.ts.

import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { connect } from '@nats-io/transport-node';
import { DeliverPolicy, jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { Packr } from 'msgpackr';
import WebSocket from 'ws';
import { startAudience, type Running } from '../processes.js';
import { startNatsServers, type NatsProcess } from './nats.js';

export type ChaosStep = 'kill-stream-leader' | 'kill-nats-follower' | 'kill-node' | 'stall-node';

export interface ChaosOptions {
  /** 1 (R1) or 3 (an R3 JetStream cluster). */
  readonly natsServers: number;
  readonly nodes: number;
  /** Acknowledged events to reach (the load stops there, or at the deadline). */
  readonly events: number;
  readonly users: number;
  readonly concurrency: number;
  readonly leaseMs: number;
  readonly steps: readonly ChaosStep[];
  /** The whole run's bound. */
  readonly deadlineMs: number;
  readonly log: (line: string) => void;
}

export interface ChaosResult {
  readonly acked: number;
  readonly found: number;
  readonly lost: number;
  readonly appliedTwice: number;
  readonly sizesEqual: boolean;
  /** The stream check's line, and whether it held. */
  readonly stream: string;
  readonly streamedOnce: boolean;
  readonly line: string;
  readonly ok: boolean;
}

/** The cohorts: counts of named events, so a recomputation needs only the events read back. */
const COHORTS = [
  { name: 'Three pageviews', event: 'Pageview', atLeast: 3, midway: false },
  { name: 'A purchase', event: 'Purchase', atLeast: 1, midway: false },
  { name: 'Two signups', event: 'Signup', atLeast: 2, midway: true },
] as const;
const NAMES = ['Pageview', 'Pageview', 'Pageview', 'Purchase', 'Signup'] as const;

interface Acked {
  readonly id: string;
  readonly user: string;
}

interface Answer {
  readonly status: number;
  readonly body: any;
}

async function call(url: string, key: string, method: string, path: string, body?: unknown, timeoutMs = 10_000): Promise<Answer> {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { 'X-API-Key': key, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
}

class Cluster {
  readonly nodes: Array<Running | undefined> = [];
  constructor(
    readonly dir: string,
    readonly nats: readonly NatsProcess[],
    private readonly options: ChaosOptions,
  ) {}

  args(index: number): string[] {
    return [
      '--cluster', this.nats.map((n) => n.url).join(','),
      '--node-id', `node-${index + 1}`,
      '--cluster-replicas', String(this.options.natsServers >= 3 ? 3 : 1),
      '--cluster-partitions', '8',
      '--cluster-lease-ms', String(this.options.leaseMs),
      '--log-level', 'warn',
    ];
  }

  async startNode(index: number): Promise<Running> {
    const node = await startAudience({ dataDir: join(this.dir, `node-${index + 1}`), threads: 0, args: this.args(index), keepOutput: true });
    this.nodes[index] = node;
    return node;
  }

  urls(): string[] {
    return this.nodes.flatMap((node) => (node === undefined ? [] : [node.url]));
  }

  async stopAll(): Promise<void> {
    await Promise.all(this.nodes.map((node) => node?.signal('SIGCONT').then(() => node.stop())));
    await Promise.all(this.nats.map((n) => n.stop()));
  }
}

/** Tries `work` on each node in turn until it answers 2xx (or `until` passes): what a client of a cluster does. */
let lastFailure = '';

async function untilAccepted(cluster: Cluster, until: number, work: (url: string) => Promise<Answer>): Promise<Answer | undefined> {
  for (let attempt = 0; Date.now() < until; attempt++) {
    const urls = cluster.urls();
    const url = urls[attempt % Math.max(1, urls.length)];
    if (url !== undefined) {
      try {
        const answer = await work(url);
        if (answer.status < 300) return answer;
        lastFailure = `${url}: ${answer.status} ${JSON.stringify(answer.body)}`;
        if (answer.status < 500 && answer.status !== 401) throw new Error(`refused: ${lastFailure}`);
      } catch (error) {
        if (error instanceof Error && error.message.startsWith('refused')) throw error;
        lastFailure = `${url}: ${String(error)}`;
      }
    }
    await sleep(100);
  }
  return undefined;
}

export async function runChaos(options: ChaosOptions): Promise<ChaosResult> {
  const started = Date.now();
  const until = started + options.deadlineMs;
  const dir = await mkdtemp(join(tmpdir(), 'audience-chaos-'));
  const nats = await startNatsServers(options.natsServers, dir);
  const cluster = new Cluster(dir, nats, options);
  const nc = await connect({ servers: nats.map((n) => n.url), maxReconnectAttempts: -1, reconnectTimeWait: 250 });
  try {
    const first = await cluster.startNode(0);
    const keys = first.keys;
    if (keys === undefined) throw new Error(`the first node printed no keys:\n${first.output()}`);
    for (let i = 1; i < options.nodes; i++) await cluster.startNode(i);
    options.log(`chaos: ${options.natsServers} nats-server(s), ${options.nodes} nodes up in ${Date.now() - started} ms`);

    const cohortIds = new Map<string, string>();
    const cohortCodes = new Map<string, number>();
    const createCohort = async (cohort: (typeof COHORTS)[number]) => {
      const query = cohort.atLeast === 1 ? { event: cohort.event } : { event: cohort.event, frequency: { greater_than_or_equal_to: cohort.atLeast } };
      const created = await untilAccepted(cluster, until, (url) => call(url, keys.privateKey, 'POST', '/cohorts-api/v2/cohorts', { name: cohort.name, query }));
      if (created === undefined) throw new Error(`cohort ${cohort.name} could not be created`);
      cohortIds.set(cohort.name, created.body.id as string);
      cohortCodes.set(cohort.name, created.body.code as number);
    };
    for (const cohort of COHORTS) if (!cohort.midway) await createCohort(cohort);

    // The load: a bounded number of events, each retried under its own id until a node acknowledges it.
    const users = Array.from({ length: options.users }, () => randomUUID());
    const acked: Acked[] = [];
    let issued = 0;
    let gaveUp = 0;
    const worker = async (w: number) => {
      while (issued < options.events && Date.now() < until) {
        const n = issued++;
        const user = users[(n * 7 + w) % users.length] as string;
        const id = randomUUID();
        const name = NAMES[n % NAMES.length] as string;
        const answer = await untilAccepted(cluster, until, (url) => call(url, keys.publicKey, 'POST', '/v2.0/events', { id, user_id: user, name, properties: { n } }));
        if (answer === undefined) gaveUp++;
        else acked.push({ id, user });
      }
    };
    const load = Promise.all(Array.from({ length: options.concurrency }, (_, w) => worker(w)));

    // The faults, each once a share of the load is acknowledged, each bounded in time.
    const progress = async (share: number) => {
      while (acked.length < options.events * share && Date.now() < until && issued < options.events) await sleep(50);
    };
    const jsm = await jetstreamManager(nc);
    const streamPeers = async (): Promise<{ leader?: string; followers: string[] }> => {
      const info = await jsm.streams.info('AUDIENCE_EVENTS');
      return { leader: info.cluster?.leader, followers: (info.cluster?.replicas ?? []).map((r) => r.name) };
    };
    const midway = COHORTS.find((cohort) => cohort.midway);
    for (const [index, step] of options.steps.entries()) {
      await progress((index + 1) / (options.steps.length + 2));
      if (index === 0 && midway !== undefined) await createCohort(midway);
      const before = acked.length;
      const moreAcked = async () => {
        const end = Math.min(until, Date.now() + 30_000);
        while (acked.length < before + options.events / (4 * (options.steps.length + 2)) && Date.now() < end && issued < options.events) await sleep(50);
      };
      if (step === 'kill-stream-leader' || step === 'kill-nats-follower') {
        const peers = await streamPeers();
        const name = step === 'kill-stream-leader' ? peers.leader : peers.followers[0];
        const victim = nats.find((n) => n.name === name);
        if (victim === undefined) throw new Error(`no NATS server to kill for ${step} (${JSON.stringify(peers)})`);
        options.log(`chaos: kill -9 ${victim.name} (${step === 'kill-stream-leader' ? 'stream leader' : 'follower'}) at ${acked.length} acked`);
        await victim.kill();
        await moreAcked();
        await victim.start();
      } else if (step === 'kill-node') {
        const index = options.nodes - 1;
        options.log(`chaos: kill -9 node-${index + 1} at ${acked.length} acked`);
        await cluster.nodes[index]?.signal('SIGKILL');
        cluster.nodes[index] = undefined;
        await moreAcked();
        await cluster.startNode(index);
      } else {
        const index = Math.min(1, options.nodes - 1);
        const node = cluster.nodes[index];
        options.log(`chaos: SIGSTOP node-${index + 1} for ${options.leaseMs + 2000} ms at ${acked.length} acked`);
        cluster.nodes[index] = undefined;
        await node?.signal('SIGSTOP');
        await sleep(options.leaseMs + 2000);
        await node?.signal('SIGCONT');
        cluster.nodes[index] = node;
      }
      options.log(`chaos: ${step} done at ${acked.length} acked`);
    }
    if (midway !== undefined && !cohortIds.has(midway.name)) await createCohort(midway);
    await load;
    options.log(`chaos: load done, ${acked.length} acked, ${gaveUp} given up, in ${Date.now() - started} ms`);

    // Every acknowledged event, read back once per user from some node.
    const ackedIds = new Set(acked.map((a) => a.id));
    const readBack = new Map<string, Array<{ id: string; name: string }>>();
    let appliedTwice = 0;
    let found = 0;
    for (const user of users) {
      // One page holds them all: each user has far fewer than the 1,000 events a page may carry (D39).
      // A user none of whose events is stored is unknown (400 3002, D12): read as no events.
      const answer = await untilAccepted(cluster, Date.now() + 60_000, async (url) => {
        const read = await call(url, keys.privateKey, 'GET', `/v2.0/events?user_id=${user}`);
        if (read.status === 400 && read.body?.code === 3002) {
          if (acked.some((a) => a.user === user)) options.log(`chaos: ${url} answered 3002 for ${user}, who has acknowledged events`);
          return { status: 200, body: [] };
        }
        return read;
      });
      if (answer === undefined) {
        for (const [i, node] of cluster.nodes.entries()) options.log(`node-${i + 1} output:\n${node?.output().slice(-6000)}`);
        for (const server of nats) options.log(`${server.name} output:\n${server.output().split('\n').filter((l) => /\[(WRN|ERR)\]/.test(l)).slice(-30).join('\n')}`);
        throw new Error(`the events of ${user} could not be read (last: ${lastFailure})`);
      }
      const events = answer.body as Array<{ id: string; name: string }>;
      readBack.set(user, events);
      const seen = new Map<string, number>();
      for (const event of events) seen.set(event.id, (seen.get(event.id) ?? 0) + 1);
      for (const [id, count] of seen) {
        if (count > 1) appliedTwice += count - 1;
        if (ackedIds.has(id)) found++;
      }
    }
    const lost = ackedIds.size - found;

    // Every cohort's size on every node, against a count from the events read back.
    const expected = new Map<string, number>();
    for (const cohort of COHORTS) {
      let members = 0;
      for (const events of readBack.values()) if (events.filter((e) => e.name === cohort.event).length >= cohort.atLeast) members++;
      expected.set(cohort.name, members);
    }
    let sizesEqual = false;
    let lastSizes = '';
    const sizesUntil = Date.now() + 60_000;
    while (!sizesEqual && Date.now() < sizesUntil) {
      const seen: string[] = [];
      let all = true;
      for (const url of cluster.urls()) {
        for (const cohort of COHORTS) {
          const answer = await call(url, keys.privateKey, 'GET', `/cohorts-api/v2/cohorts/${cohortIds.get(cohort.name)}`).catch(() => undefined);
          const size = answer?.body?.live_audience_size;
          seen.push(`${cohort.name}@${url}=${size}/${expected.get(cohort.name)}`);
          if (size !== expected.get(cohort.name) || answer?.body?.backfill !== undefined) all = false;
        }
      }
      lastSizes = seen.join(', ');
      sizesEqual = all;
      if (!sizesEqual) await sleep(250);
    }
    // The live stream: one live entry per member of the cohorts made before the load, in the stream and on every node.
    const before = COHORTS.filter((cohort) => !cohort.midway);
    const members = new Set<string>();
    for (const cohort of before) {
      for (const [user, events] of readBack) if (events.filter((e) => e.name === cohort.event).length >= cohort.atLeast) members.add(`${user} ${cohortCodes.get(cohort.name)}`);
    }
    const codes = before.map((cohort) => cohortCodes.get(cohort.name) as number);
    const stream = await checkStream(nc, await jetstreamManager(nc), cluster.urls(), keys.privateKey, codes, members);
    options.log(stream.line);
    const line = `acked ${acked.length}, found ${found}, lost ${lost}, applied twice ${appliedTwice}, ${sizesEqual ? 'sizes equal' : `sizes differ (${lastSizes})`}`;
    return {
      acked: acked.length,
      found,
      lost,
      appliedTwice,
      sizesEqual,
      stream: stream.line,
      streamedOnce: stream.ok,
      line,
      ok: lost === 0 && appliedTwice === 0 && sizesEqual && stream.ok && acked.length > 0,
    };
  } finally {
    await nc.close().catch(() => undefined);
    await cluster.stopAll();
    await rm(dir, { recursive: true, force: true });
  }
}

const packr = new Packr({ useRecords: false, mapsAsObjects: true });

interface LoggedEntry {
  readonly user: string;
  readonly replay?: boolean;
  readonly transitions: ReadonlyArray<{ readonly cohort: number; readonly kind: string }>;
}

/** `"{user} {code}"` of each live transition of `codes` (entries and exits alike), as many times as it appears. */
function tally(into: Map<string, number>, user: string, cohort: number, kind: string): void {
  const id = `${user} ${cohort}${kind === 'entered' ? '' : ` ${kind}`}`;
  into.set(id, (into.get(id) ?? 0) + 1);
}

function differences(seen: ReadonlyMap<string, number>, members: ReadonlySet<string>): string[] {
  const wrong: string[] = [];
  for (const member of members) if (seen.get(member) !== 1) wrong.push(`${member}×${seen.get(member) ?? 0}`);
  for (const [id, count] of seen) if (!members.has(id)) wrong.push(`${id}×${count}`);
  return wrong;
}

/** The transitions stream's live entries of `codes`, then each node's stream from its start, against `members`. */
async function checkStream(nc: NatsConnection, jsm: JetStreamManager, urls: readonly string[], key: string, codes: readonly number[], members: ReadonlySet<string>): Promise<{ line: string; ok: boolean }> {
  const wanted = new Set(codes);
  const last = (await jsm.streams.info('AUDIENCE_TRANSITIONS')).state.last_seq;
  const stored = new Map<string, number>();
  if (last > 0) {
    const consumer = await jetstream(nc).consumers.get('AUDIENCE_TRANSITIONS', { deliver_policy: DeliverPolicy.All });
    for await (const message of await consumer.fetch({ max_messages: last, expires: 30_000 })) {
      const entry = packr.unpack(message.data) as LoggedEntry;
      if (entry.replay !== true) for (const t of entry.transitions) if (wanted.has(t.cohort)) tally(stored, entry.user, t.cohort, t.kind);
      if (message.seq >= last) break;
    }
  }
  const inStream = differences(stored, members);
  if (inStream.length > 0) return { line: `stream: the transitions stream differs from the members for ${inStream.length}: ${inStream.slice(0, 10).join(', ')}`, ok: false };
  for (const url of urls) {
    const streamed = await streamFrom(url, key, codes, members.size);
    const wrong = differences(streamed, members);
    if (wrong.length > 0) return { line: `stream: ${url} streamed ${[...streamed.values()].reduce((a, b) => a + b, 0)} entries, differing for ${wrong.length}: ${wrong.slice(0, 10).join(', ')}`, ok: false };
  }
  return { line: `streamed ${members.size} entries once on every node`, ok: true };
}

/** What `url` streams of `codes` from the start, once it sent `count` messages (or after 30 s). */
async function streamFrom(url: string, key: string, codes: readonly number[], count: number): Promise<Map<string, number>> {
  const seen = new Map<string, number>();
  let received = 0;
  const socket = new WebSocket(`${url.replace('http', 'ws')}/reactions-api/v1/stream?after=0&cohorts=${codes.join(',')}`, { headers: { 'X-API-Key': key } });
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(resolve, 30_000);
      socket.on('message', (data) => {
        const message = JSON.parse(String(data)) as { user_id: string; cohort: { code: number }; kind: string };
        tally(seen, message.user_id, message.cohort.code, message.kind);
        if (++received >= count) {
          clearTimeout(timer);
          resolve();
        }
      });
      socket.once('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
    });
  } finally {
    socket.terminate();
  }
  return seen;
}

/** `npm run cluster:chaos`: 3 nats-servers (R3), 3 nodes, every fault; exit 0 only when nothing was lost. */
async function main(): Promise<void> {
  const result = await runChaos({
    natsServers: 3,
    nodes: 3,
    events: 3000,
    users: 100,
    concurrency: 8,
    leaseMs: 3000,
    steps: ['kill-stream-leader', 'kill-nats-follower', 'kill-node', 'stall-node'],
    deadlineMs: 240_000,
    log: (line) => console.log(line),
  });
  console.log(result.line);
  process.exitCode = result.ok ? 0 : 1;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
