// Partition leases on a real nats-server (issue 15): two nodes split the partitions evenly by capacity-bounded rendezvous hashing, never both
// owning one (a gain always follows the other node's loss); a node that dies without releasing loses its share to
// the other once its leases expire; a lease taken from under a node is fenced at its next refresh.

import { Kvm, type KV } from '@nats-io/kv';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { describe, expect, it } from 'vitest';
import { PartitionLeases, assignment } from '../../server/cluster/leases.js';
import { useNatsServer } from '../support/nats.js';
import { waitUntil } from '../support/wait.js';

const PARTITIONS = 8;
const TTL = 2_000;

const nats = useNatsServer();
let buckets = 0;

interface Buckets {
  leases: KV;
  nodes: KV;
  nodesBucket: string;
  jsm: JetStreamManager;
}

async function freshBuckets(ttl = TTL): Promise<Buckets> {
  const kvm = new Kvm(nats.connection());
  buckets++;
  return {
    leases: await kvm.create(`leases${buckets}`, { history: 1, ttl }),
    nodes: await kvm.create(`nodes${buckets}`, { history: 1, ttl }),
    nodesBucket: `nodes${buckets}`,
    jsm: await jetstreamManager(nats.connection()),
  };
}

/** Every gain and loss in order, to check that no partition ever has two owners. */
type Step = { node: string; kind: 'gain' | 'loss'; partition: number };

function node(name: string, buckets: Buckets, timeline: Step[], ttlMs = TTL): PartitionLeases {
  return new PartitionLeases({
    ...buckets,
    node: name,
    partitions: PARTITIONS,
    ttlMs,
    onGain: (partition) => void timeline.push({ node: name, kind: 'gain', partition }),
    onLoss: (partition) => void timeline.push({ node: name, kind: 'loss', partition }),
  });
}

function assertExclusive(timeline: readonly Step[]): void {
  const owner = new Map<number, string>();
  for (const step of timeline) {
    if (step.kind === 'gain') {
      expect(owner.get(step.partition), `partition ${step.partition} gained by ${step.node} while owned`).toBeUndefined();
      owner.set(step.partition, step.node);
    } else {
      expect(owner.get(step.partition)).toBe(step.node);
      owner.delete(step.partition);
    }
  }
}

describe('the assignment', () => {
  it('gives every node an even share, the same on every node, and moves few partitions when a node joins', () => {
    const three = assignment(16, ['node-1', 'node-2', 'node-3']);
    const counts = (owners: string[]) => [...new Set(owners)].map((n) => owners.filter((o) => o === n).length).sort();
    expect(counts(three)).toEqual([5, 5, 6]);
    expect(assignment(16, ['node-3', 'node-1', 'node-2'])).toEqual(three);
    const four = assignment(16, ['node-1', 'node-2', 'node-3', 'node-4']);
    expect(counts(four)).toEqual([4, 4, 4, 4]);
    const moved = four.filter((owner, p) => owner !== three[p]).length;
    expect(moved).toBeLessThan(16 / 2);
  });
});

describe('partition leases', () => {
  it('split the partitions evenly between two nodes (capacity-bounded rendezvous), one owner at a time', async () => {
    const b = await freshBuckets();
    const timeline: Step[] = [];
    const a = node('node-a', b, timeline);
    const c = node('node-c', b, timeline);
    await a.start();
    expect([...a.owned().keys()].sort((x, y) => x - y)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    await c.start();
    const wanted = assignment(PARTITIONS, ['node-a', 'node-c']);
    const share = (name: string) => Array.from({ length: PARTITIONS }, (_, p) => p).filter((p) => wanted[p] === name);
    await waitUntil(
      () => [...a.owned().keys()].sort().join() === share('node-a').join() && [...c.owned().keys()].sort().join() === share('node-c').join(),
      'the two nodes to hold their shares',
      15_000,
    );
    expect(share('node-a').length + share('node-c').length).toBe(PARTITIONS);
    expect(share('node-a').length).toBe(4);
    assertExclusive(timeline);
    await a.stop();
    await waitUntil(() => c.owned().size === PARTITIONS, 'the remaining node to hold every partition', 15_000);
    assertExclusive(timeline);
    await c.stop();
  });

  it('hand a leaving node\'s partitions over at once, not after its leases and heartbeat expire', async () => {
    // Leases of a minute: the survivor can only hold everything within the wait below if the release worked.
    const long = 60_000;
    const b = await freshBuckets(long);
    const timeline: Step[] = [];
    const a = node('node-a', b, timeline, long);
    const c = node('node-c', b, timeline, long);
    await a.start();
    await c.start();
    // a took every partition first; c's share moves only at a's next round (a quarter lease away): not awaited here.
    expect(a.owned().size).toBe(PARTITIONS);
    await a.stop();
    await waitUntil(() => c.owned().size === PARTITIONS, 'the remaining node to hold every partition', 15_000);
    assertExclusive(timeline);
    await c.stop();
  });

  it('take over a dead node\'s partitions once its leases expire', async () => {
    const b = await freshBuckets();
    const timeline: Step[] = [];
    const a = node('node-a', b, timeline);
    const c = node('node-c', b, timeline);
    await a.start();
    await c.start();
    await waitUntil(() => a.owned().size + c.owned().size === PARTITIONS && c.owned().size > 0 && a.owned().size > 0, 'both nodes to own partitions', 15_000);
    // a dies: no release, no more refreshes; its heartbeat and leases expire after the ttl.
    await a.stop(false);
    const died = Date.now();
    await waitUntil(() => c.owned().size === PARTITIONS, 'the survivor to take every partition', 20_000);
    expect(Date.now() - died).toBeGreaterThanOrEqual(TTL / 2);
    await c.stop();
  });

  it('fence a partition whose lease was taken from under its owner', async () => {
    const b = await freshBuckets();
    const timeline: Step[] = [];
    const a = node('node-a', b, timeline);
    await a.start();
    expect(a.owned().has(3)).toBe(true);
    await b.leases.put('p3', 'intruder');
    await a.tick();
    expect(a.owned().has(3)).toBe(false);
    expect(timeline.at(-1)).toEqual({ node: 'node-a', kind: 'loss', partition: 3 });
    await a.stop();
  });
});
