// Two cluster nodes in this process over one real nats-server (issue 15): the first creates the cluster and its
// organization, the second joins; each answers every route. Control-plane writes made on one node are read on the
// other; events tracked through both are read back once each from either; sizes agree; identity resolves the same
// on both; a stateless state sealed on one opens on the other; a node leaving hands its partitions over.

import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startClusterNode, type ClusterNode } from '../../server/cluster/node.js';
import type { InitializedOrganization } from '../../server/domain/tenancy/index.js';
import { tempDir } from '../support/processes.js';
import { useNatsServer } from '../support/nats.js';
import { waitUntil } from '../support/wait.js';
import { prefixEnd } from '../../server/store/contract.js';
import type { StreamMessage } from '../../server/reactions/stream/hub.js';
import { partitionOf } from '../../server/domain/events/index.js';
import { tagOfDelivery } from '../../server/cluster/node-tags.js';
import { startReceiver } from '../support/receiver.js';

const nats = useNatsServer();

interface Answer {
  readonly status: number;
  readonly body: any;
}

async function call(node: ClusterNode, key: string, method: string, path: string, body?: unknown): Promise<Answer> {
  const response = await fetch(`${node.url}${path}`, {
    method,
    headers: { 'X-API-Key': key, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
}

describe('a cluster of two nodes', () => {
  const cleanups: Array<() => Promise<unknown>> = [];
  const sockets: WebSocket[] = [];

  /** A live stream client of `node` (D38). */
  const listen = (node: ClusterNode, query: string): Promise<StreamMessage[]> => {
    const socket = new WebSocket(`${node.url.replace('http', 'ws')}/reactions-api/v1/stream${query}`, { headers: { 'X-API-Key': keys.private_key } });
    sockets.push(socket);
    const messages: StreamMessage[] = [];
    socket.on('message', (data) => messages.push(JSON.parse(String(data)) as StreamMessage));
    return new Promise((resolve, reject) => {
      socket.once('open', () => resolve(messages));
      socket.once('error', reject);
    });
  };
  let a: ClusterNode;
  let b: ClusterNode;
  let keys: InitializedOrganization;

  const start = async (nodeId: string): Promise<ClusterNode> => {
    const dir = await tempDir(`audience-cluster-${nodeId}-`);
    cleanups.push(dir.remove);
    return startClusterNode({
      dataDir: `${dir.path}/data`,
      host: '127.0.0.1',
      port: 0,
      threads: 0,
      log: () => undefined,
      // Deliveries that fail give up within a second (the deliveries test).
      delivery: { horizonMs: 1000, firstRetryMs: 20, maxRetryMs: 100 },
      cluster: { servers: [nats.server().url], nodeId, replicas: 1, partitions: 8, leaseTtlMs: 2_000 },
    });
  };

  /** Whether `node` owns the partition of `user` now. */
  const partitionOfUser = (user: string, node: ClusterNode): boolean => node.owned().includes(partitionOf(keys.organization_id, user, 8));

  /** Five users whose partition A owns and five whose partition B owns. */
  const usersOfBothNodes = (): string[] => {
    const users: string[] = [];
    for (const node of [a, b]) {
      const owned = new Set(node.owned());
      let found = 0;
      for (let tries = 0; found < 5 && tries < 10_000; tries++) {
        const user = randomUUID();
        if (!owned.has(partitionOf(keys.organization_id, user, 8))) continue;
        users.push(user);
        found++;
      }
    }
    expect(users).toHaveLength(10);
    return users;
  };

  beforeAll(async () => {
    a = await start('node-a');
    b = await start('node-b');
    if (a.initialised === undefined) throw new Error('the first node did not create the organization');
    keys = a.initialised;
  }, 60_000);

  afterAll(async () => {
    for (const socket of sockets) socket.terminate();
    await b?.close();
    await a?.close();
    for (const cleanup of cleanups.reverse()) await cleanup();
  }, 60_000);

  it('creates the organization once, shares the partitions, and writes made on one node are read on the other', async () => {
    await waitUntil(() => a.owned().length + b.owned().length === 8 && a.owned().length > 0 && b.owned().length > 0, 'both nodes own partitions', 20_000);
    expect(b.initialised).toBeUndefined();
    const created = await call(b, keys.private_key, 'POST', '/cohorts-api/v2/cohorts', { name: 'Two pageviews', query: { event: 'Pageview', frequency: { greater_than_or_equal_to: 2 } } });
    expect(created.status).toBe(201);
    const listed = await call(a, keys.private_key, 'GET', '/cohorts-api/v2/cohorts');
    expect(listed.body.map((cohort: { id: string }) => cohort.id)).toEqual([created.body.id]);
    const key = await call(a, keys.private_key, 'POST', '/admin/v1/keys', { workspace_id: keys.workspace_id, type: 'public' });
    expect(key.status).toBe(201);
    const users = await call(b, key.body.key, 'POST', '/v2.0/users');
    expect(users.status).toBe(200);
  });

  it('stores every event tracked through either node once, reads it from either, and sizes agree', async () => {
    const cohort = (await call(a, keys.private_key, 'GET', '/cohorts-api/v2/cohorts')).body[0];
    const users = Array.from({ length: 12 }, () => randomUUID());
    const tracked = new Map<string, string[]>();
    for (const [index, user] of users.entries()) {
      const count = 1 + (index % 3);
      for (let i = 0; i < count; i++) {
        const node = (index + i) % 2 === 0 ? a : b;
        const answer = await call(node, keys.public_key, 'POST', '/v2.0/events', { user_id: user, name: 'Pageview', properties: { i } });
        expect(answer.status).toBe(200);
        tracked.set(user, [...(tracked.get(user) ?? []), answer.body.id]);
      }
    }
    for (const user of users) {
      for (const node of [a, b]) {
        const read = await call(node, keys.private_key, 'GET', `/v2.0/events?user_id=${user}`);
        expect(read.status).toBe(200);
        expect(read.body.map((event: { id: string }) => event.id).sort()).toEqual([...(tracked.get(user) ?? [])].sort());
      }
    }
    const expected = users.filter((user) => (tracked.get(user) ?? []).length >= 2).length;
    for (const node of [a, b]) {
      await waitUntil(async () => (await call(node, keys.private_key, 'GET', `/cohorts-api/v2/cohorts/${cohort.id}`)).body.live_audience_size === expected, `the size on ${node.nodeId}`);
    }
    const member = users.find((user) => (tracked.get(user) ?? []).length >= 2) as string;
    for (const node of [a, b]) {
      const memberships = await call(node, keys.private_key, 'GET', `/cohorts-api/v2/users/${member}/cohorts`);
      expect(memberships.status).toBe(200);
      expect(JSON.stringify(memberships.body)).toContain(cohort.id);
    }
  });

  it('resolves identities the same on both nodes, and opens on one a stateless state sealed on the other', async () => {
    const identified = await call(a, keys.public_key, 'POST', '/v2.0/events', { aliases: [{ tag: 'email', id: 'x@example.com', priority: 1 }], name: 'Pageview' });
    expect(identified.status).toBe(200);
    const again = await call(b, keys.public_key, 'POST', '/v2.0/events', { aliases: [{ tag: 'email', id: 'x@example.com', priority: 1 }], name: 'Pageview' });
    expect(again.body.user_id).toBe(identified.body.user_id);
    const looked = await call(b, keys.private_key, 'GET', '/v2.0/aliases/email/x@example.com');
    expect(looked.status).toBe(200);

    const pageview = () => ({ name: 'Pageview', time: new Date().toISOString(), properties: {} });
    const first = await call(a, keys.public_key, 'POST', '/ccs/v1/segmentation/stateless', { user_id: randomUUID(), events: [pageview()] });
    expect(first.status).toBe(200);
    // The slot set the state's bitmap indexes went through the control plane: every node holds it.
    const slotSets = async (node: ClusterNode) => {
      const prefix = `m!slot-set!${keys.organization_id}!`;
      const found: string[] = [];
      for await (const [k] of node.services.store.iterate({ gte: prefix, lt: prefixEnd(prefix) })) found.push(k);
      return found;
    };
    expect((await slotSets(a)).length).toBeGreaterThan(0);
    await waitUntil(async () => (await slotSets(b)).length === (await slotSets(a)).length, 'the slot set on node b');
    const second = await call(b, keys.public_key, 'POST', '/ccs/v1/segmentation/stateless', {
      user_id: first.body.user_id,
      state: { internal_state: first.body.state.internal_state },
      events: [pageview()],
    });
    expect(second.status).toBe(200);
    expect(second.body.state.cohorts.length).toBe(1);
  });

  it('answers a retried event id with the event first stored, storing it once', async () => {
    const user = randomUUID();
    const id = randomUUID();
    const first = await call(a, keys.public_key, 'POST', '/v2.0/events', { id, user_id: user, name: 'Pageview', properties: { n: 1 } });
    const retry = await call(b, keys.public_key, 'POST', '/v2.0/events', { id, user_id: user, name: 'Pageview', properties: { n: 1 } });
    expect(retry.status).toBe(200);
    expect(retry.body).toEqual(first.body);
    const read = await call(b, keys.private_key, 'GET', `/v2.0/events?user_id=${user}`);
    expect(read.body).toHaveLength(1);
  });

  it('streams the transitions of users owned by either node on both, resumes a cursor of one on the other, and charts them on both', async () => {
    const created = await call(a, keys.private_key, 'POST', '/cohorts-api/v2/cohorts', { name: 'Signed up', query: { event: 'Signup' } });
    expect(created.status).toBe(201);
    const only = `?cohorts=${created.body.code}`;
    const onA = await listen(a, only);
    const onB = await listen(b, only);
    const users = usersOfBothNodes();
    const events = new Map<string, string>();
    for (const [index, user] of users.entries()) {
      const answer = await call(index % 2 === 0 ? a : b, keys.public_key, 'POST', '/v2.0/events', { user_id: user, name: 'Signup', properties: {} });
      expect(answer.status).toBe(200);
      events.set(user, answer.body.id);
    }
    for (const [name, messages] of [['a', onA] as const, ['b', onB] as const]) {
      await waitUntil(() => messages.length >= users.length, `ten entries on node ${name}'s stream`, 20_000);
      expect(messages.map((m) => [m.user_id, m.kind, m.cohort.id, m.event_id]).sort()).toEqual(users.map((user) => [user, 'entered', created.body.id, events.get(user)]).sort());
    }
    // The same cursors on both nodes: a client resumes on B after A's fourth message and gets the rest, in order.
    expect(onB.map((m) => m.cursor)).toEqual(onA.map((m) => m.cursor));
    const resumed = await listen(b, `${only}&after=${onA[3]?.cursor}`);
    await waitUntil(() => resumed.length >= users.length - 4, 'the resumed stream on node b', 20_000);
    expect(resumed.map((m) => m.cursor)).toEqual(onA.slice(4).map((m) => m.cursor));
    // The charts of either node count every entry, whichever node owns the user.
    for (const node of [a, b]) {
      await waitUntil(async () => {
        const series = await call(node, keys.private_key, 'GET', `/cohorts-api/v2/cohorts/${created.body.id}/series`);
        const minutes = series.body.minutes as Array<{ entered: number; size: number }>;
        return minutes.reduce((sum, minute) => sum + minute.entered, 0) === users.length && minutes[minutes.length - 1]?.size === users.length;
      }, `the series on ${node.nodeId}`);
    }
  });

  it("lists a reaction's deliveries from every node's outbox on either node, and retries one on the node holding it", async () => {
    const receiver = await startReceiver();
    cleanups.push(() => receiver.close());
    receiver.answerNext(...Array.from({ length: 10_000 }, () => 500));
    const cohort = await call(a, keys.private_key, 'POST', '/cohorts-api/v2/cohorts', { name: 'Bought', query: { event: 'Purchase' } });
    const reaction = await call(b, keys.private_key, 'POST', '/reactions-api/v1/reactions', { name: 'thank', cohort_id: cohort.body.id, trigger: 'on_entry', action: { type: 'webhook', url: receiver.url } });
    expect(reaction.status).toBe(201);
    const users = usersOfBothNodes();
    for (const [index, user] of users.entries()) {
      expect((await call(index % 2 === 0 ? a : b, keys.public_key, 'POST', '/v2.0/events', { user_id: user, name: 'Purchase', properties: {} })).status).toBe(200);
    }
    const deliveries = `/reactions-api/v1/reactions/${reaction.body.id}/deliveries`;
    for (const node of [a, b]) {
      await waitUntil(async () => (await call(node, keys.private_key, 'GET', `${deliveries}?status=failed`)).body.length === users.length, `ten failed deliveries listed on ${node.nodeId}`, 20_000);
    }
    const listed = (await call(a, keys.private_key, 'GET', deliveries)).body as Array<{ id: string; user_id: string; created_at: string }>;
    expect(listed.map((d) => d.user_id).sort()).toEqual([...users].sort());
    // Ids are unique across the cluster and name the node holding them: both nodes hold some.
    expect(new Set(listed.map((d) => d.id)).size).toBe(users.length);
    expect(new Set(listed.map((d) => tagOfDelivery(d.id))).size).toBe(2);
    expect(listed.map((d) => d.created_at)).toEqual([...listed.map((d) => d.created_at)].sort().reverse());
    expect((await call(b, keys.private_key, 'GET', `${deliveries}?limit=3`)).body).toHaveLength(3);

    // Retry through each node a delivery the other holds.
    receiver.clearAnswers();
    const tagOf = (node: ClusterNode) => tagOfDelivery(listed.find((d) => partitionOfUser(d.user_id, node))?.id ?? '');
    for (const [via, holder] of [[a, b], [b, a]] as const) {
      const held = listed.find((d) => tagOfDelivery(d.id) === tagOf(holder)) as { id: string; user_id: string };
      const retried = await call(via, keys.private_key, 'POST', `${deliveries}/${held.id}/retry`);
      expect(retried.status, JSON.stringify(retried.body)).toBe(200);
      expect(retried.body.status).toBe('pending');
      await receiver.until((received) => received.some((r) => r.answered === 200 && r.body?.user_id === held.user_id), `the retried delivery of ${held.user_id}`);
      await waitUntil(async () => (await call(via, keys.private_key, 'GET', `${deliveries}?status=delivered`)).body.some((d: { id: string }) => d.id === held.id), 'the retried delivery listed as delivered');
    }
    const unknown = await call(a, keys.private_key, 'POST', `${deliveries}/dlv_7ff00000000001/retry`);
    expect(unknown.status).toBe(404);
    const malformed = await call(b, keys.private_key, 'POST', `${deliveries}/nope/retry`);
    expect(malformed.status).toBe(404);
  });

  it('computes an offline cohort over the users of every node (D20): each node counts the partitions it owns', async () => {
    const created = await call(a, keys.private_key, 'POST', '/cohorts-api/v2/cohorts', { name: 'Refunded', query: { event: 'Refund' }, segment_type: 'offline' });
    expect(created.status).toBe(201);
    const users = usersOfBothNodes();
    const refunded = users.filter((_, index) => index % 3 !== 0);
    for (const [index, user] of users.entries()) {
      const name = refunded.includes(user) ? 'Refund' : 'Pageview';
      expect((await call(index % 2 === 0 ? b : a, keys.public_key, 'POST', '/v2.0/events', { user_id: user, name, properties: {} })).status).toBe(200);
    }
    // Every event is applied by its owner before the computation starts (a read through the owner waits for it).
    for (const user of users) expect((await call(a, keys.private_key, 'GET', `/v2.0/events?user_id=${user}`)).body).toHaveLength(1);
    const started = await call(b, keys.private_key, 'POST', `/cohorts-api/v2/cohorts/${created.body.id}/recompute`);
    expect(started.status).toBe(202);
    // Both nodes' shares: the members of both nodes' partitions, as read on either node.
    expect(refunded.some((user) => partitionOfUser(user, a)) && refunded.some((user) => partitionOfUser(user, b))).toBe(true);
    for (const node of [a, b]) {
      await waitUntil(async () => (await call(node, keys.private_key, 'GET', `/cohorts-api/v2/cohorts/${created.body.id}`)).body.live_audience_size >= refunded.length, `the offline size on ${node.nodeId}`, 20_000);
      expect((await call(node, keys.private_key, 'GET', `/cohorts-api/v2/cohorts/${created.body.id}`)).body.live_audience_size).toBe(refunded.length);
    }
  });
});
