// The cluster benchmark (issue 15, `npm run bench -- --only cluster`): acknowledged ingests per second through 1, 2
// and 3 cluster nodes over one nats-server (R1), against the bare uWebSockets.js baseline and a single node without
// `--cluster` measured in the same run. Everything shares this machine's cores, so the figures show the cluster's
// overhead, not its scale. Then the failover time: a node killed with SIGKILL (its leases expire) and one stopped
// with SIGTERM (it releases them), each timed from the signal until every partition it owned has another owner, read
// from the leases bucket.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect } from '@nats-io/transport-node';
import { Kvm } from '@nats-io/kv';
import { jetstreamManager } from '@nats-io/jetstream';
import { startAudience, startBaseline, waitForIdle, type Keys, type Running } from '../processes.js';
import { runLoad, type LoadResult, type LoadSettings } from '../load.js';
import { TrackBodies } from '../workload/bodies.js';
import { generateWireCohorts } from '../workload/cohorts.js';
import { seedWorkload, type Progress } from '../workload/seed.js';
import { startNatsServers } from './nats.js';

export interface ClusterBenchOptions {
  readonly seed: number;
  readonly users: number;
  readonly cohorts: number;
  readonly load: LoadSettings;
  readonly seedConnections: number;
  readonly nodeCounts: readonly number[];
  /** Partitions of the cluster. */
  readonly partitions: number;
}

export interface ClusterLoad {
  readonly nodes: number;
  readonly rps: number;
  /** The largest p99 of the per-node loads, ms. */
  readonly p99: number;
  readonly non2xx: number;
  readonly errors: number;
  /** Messages in the cluster's streams after the load (seeding included): events, and transitions entries published. */
  readonly streams?: { readonly events: number; readonly transitions: number };
}

export interface Failover {
  readonly how: 'SIGKILL' | 'SIGTERM';
  readonly leaseMs: number;
  readonly partitions: number;
  /** From the signal until the last of its partitions had another owner, ms. */
  readonly ms: number;
}

export interface ClusterBenchResult {
  readonly users: number;
  readonly baselineRps: number;
  readonly single: ClusterLoad;
  readonly clusters: readonly ClusterLoad[];
  readonly failovers: readonly Failover[];
}

const LEASE_MS = 10_000;

/** `connections` split over the nodes, one autocannon per node at once; rates summed. */
async function loadThrough(nodes: readonly Running[], keys: Keys, bodies: TrackBodies, load: LoadSettings): Promise<ClusterLoad> {
  const per = Math.max(1, Math.floor(load.connections / nodes.length));
  const results: LoadResult[] = await Promise.all(
    nodes.map((node) => runLoad({ url: node.url, path: '/v2.0/events', headers: { 'x-api-key': keys.publicKey }, body: () => bodies.next() }, { ...load, connections: per })),
  );
  return {
    nodes: nodes.length,
    rps: results.reduce((sum, r) => sum + r.rps, 0),
    p99: Math.max(...results.map((r) => r.latency.p99)),
    non2xx: results.reduce((sum, r) => sum + r.non2xx, 0),
    errors: results.reduce((sum, r) => sum + r.errors + r.timeouts, 0),
  };
}

/** The partitions each node holds, from the leases bucket. */
async function owners(kv: Awaited<ReturnType<Kvm['open']>>, partitions: number): Promise<Map<number, string | undefined>> {
  const out = new Map<number, string | undefined>();
  await Promise.all(
    Array.from({ length: partitions }, async (_, p) => {
      const entry = await kv.get(`p${p}`).catch(() => null);
      out.set(p, entry !== null && entry.operation === 'PUT' ? entry.string() : undefined);
    }),
  );
  return out;
}

export async function runClusterBench(options: ClusterBenchOptions, progress: Progress): Promise<ClusterBenchResult> {
  const dir = await mkdtemp(join(tmpdir(), 'audience-cluster-bench-'));
  const started: Running[] = [];
  const { wire } = generateWireCohorts(options.seed, options.cohorts);
  try {
    const baseline = await startBaseline();
    started.push(baseline);
    const baselineBodies = new TrackBodies(options.seed, options.users);
    const base = await runLoad({ url: baseline.url, path: '/v2.0/events', headers: { 'x-api-key': 'x' }, body: () => baselineBodies.next() }, options.load);
    await baseline.stop();
    progress(`  baseline: ${Math.round(base.rps).toLocaleString('en')} req/s`);

    const seeded = async (url: string, keys: Keys): Promise<void> => {
      await seedWorkload(url, keys, { seed: options.seed, users: options.users, cohorts: wire, connections: options.seedConnections }, () => undefined);
    };

    // One node without --cluster, the same workload.
    const single = await startAudience({ dataDir: join(dir, 'single') });
    started.push(single);
    await seeded(single.url, single.keys as Keys);
    await waitForIdle(single.pid, 60);
    const singleLoad = await loadThrough([single], single.keys as Keys, new TrackBodies(options.seed, options.users), options.load);
    await single.stop();
    progress(`  single node (no --cluster): ${Math.round(singleLoad.rps).toLocaleString('en')} req/s, p99 ${singleLoad.p99.toFixed(1)} ms`);

    const clusters: ClusterLoad[] = [];
    const failovers: Failover[] = [];
    for (const count of options.nodeCounts) {
      const natsDir = join(dir, `nats-${count}`);
      const nats = await startNatsServers(1, await mkdtemp(natsDir));
      const nodes: Running[] = [];
      try {
        const args = (i: number) => ['--cluster', nats.map((n) => n.url).join(','), '--node-id', `node-${i}`, '--cluster-partitions', String(options.partitions), '--log-level', 'warn'];
        for (let i = 1; i <= count; i++) {
          const node = await startAudience({ dataDir: join(dir, `cluster-${count}-node-${i}`), args: args(i) });
          nodes.push(node);
          started.push(node);
        }
        const keys = nodes[0]?.keys as Keys;
        await seeded(nodes[0]?.url as string, keys);
        for (const node of nodes) await waitForIdle(node.pid, 60);
        const loaded = await loadThrough(nodes, keys, new TrackBodies(options.seed, options.users), options.load);
        const result = { ...loaded, streams: await streamSizes(nats.map((n) => n.url)) };
        clusters.push(result);
        progress(`  ${count} node(s): ${Math.round(result.rps).toLocaleString('en')} req/s, p99 ${result.p99.toFixed(1)} ms, non-2xx ${result.non2xx}; streams: ${result.streams.events} events, ${result.streams.transitions} transitions entries`);

        if (count >= 3) {
          const nc = await connect({ servers: nats.map((n) => n.url) });
          try {
            const kv = await new Kvm(nc).open('audience_leases');
            for (const how of ['SIGKILL', 'SIGTERM'] as const) {
              const index = how === 'SIGKILL' ? count - 1 : count - 2;
              const victim = `node-${index + 1}`;
              const held = [...(await owners(kv, options.partitions))].filter(([, owner]) => owner === victim).map(([p]) => p);
              const at = Date.now();
              if (how === 'SIGKILL') await nodes[index]?.signal('SIGKILL');
              else await nodes[index]?.stop();
              let ms = -1;
              while (Date.now() - at < 4 * LEASE_MS) {
                const now = await owners(kv, options.partitions);
                if (held.every((p) => now.get(p) !== undefined && now.get(p) !== victim)) {
                  ms = Date.now() - at;
                  break;
                }
                await sleep(20);
              }
              failovers.push({ how, leaseMs: LEASE_MS, partitions: held.length, ms });
              progress(`  failover after ${how} of ${victim}: ${held.length} partitions owned again after ${ms} ms`);
            }
          } finally {
            await nc.close();
          }
        }
      } finally {
        await Promise.all(nodes.map((node) => node.stop()));
        await Promise.all(nats.map((n) => n.stop()));
      }
    }
    return { users: options.users, baselineRps: base.rps, single: singleLoad, clusters, failovers };
  } finally {
    await Promise.all(started.map((p) => p.stop()));
    await rm(dir, { recursive: true, force: true });
  }
}

/** Messages in the event log and in the transitions stream now. */
async function streamSizes(servers: readonly string[]): Promise<{ events: number; transitions: number }> {
  const nc = await connect({ servers: [...servers] });
  try {
    const jsm = await jetstreamManager(nc);
    const count = async (stream: string) => (await jsm.streams.info(stream)).state.messages;
    return { events: await count('AUDIENCE_EVENTS'), transitions: await count('AUDIENCE_TRANSITIONS') };
  } finally {
    await nc.close();
  }
}
