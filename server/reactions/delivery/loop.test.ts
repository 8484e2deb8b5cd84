// The delivery loop (D37) against a real receiver over a memory store: per-user order behind a failing delivery
// while other users go on, timeouts retried, the horizon ending in `failed`, a disabled reaction waiting, the
// in-flight bound whatever the queue holds, and a second loop (a restart) sending what the first left, same ids.

import { afterEach, describe, expect, it } from 'vitest';
import { MemoryStore } from '../../store/memory.js';
import { reactionsKeys, deliveryId, type Delivery } from '../../domain/reactions/contract.js';
import { startReceiver, type Receiver } from '../../../test/support/receiver.js';
import { DeliveryLoop, type DeliveryLoopOptions, type DeliveryTarget } from './loop.js';
import { signDelivery, verifySignature } from './signature.js';
import { waitUntil } from '../../../test/support/wait.js';

const SECRET = 'a'.repeat(64);
const R = 'reaction-1';
let seq = 0;
const loops: DeliveryLoop[] = [];
let receiver: Receiver | undefined;

afterEach(async () => {
  for (const loop of loops.splice(0)) await loop.stop();
  await receiver?.close();
  receiver = undefined;
});

async function enqueue(store: MemoryStore, user: string, createdAt = Date.now()): Promise<Delivery> {
  const s = ++seq;
  const delivery: Delivery = {
    seq: s,
    org: 'org',
    body: { id: deliveryId(s), reaction_id: R, trigger: 'on_entry', cohort: { id: 'c', code: 1, name: 'C' }, user_id: user, time: new Date(createdAt).toISOString(), event_id: `e${s}` },
    status: 'pending',
    attempts: 0,
    created_at: createdAt,
    next_at: createdAt,
    last_status: null,
    last_error: null,
    last_attempt_at: null,
  };
  await store.batch([
    { type: 'put', key: reactionsKeys.delivery(R, s), value: delivery },
    { type: 'put', key: reactionsKeys.pending(R, s), value: user },
  ]);
  return delivery;
}

function start(store: MemoryStore, target: () => DeliveryTarget | undefined, options: Partial<DeliveryLoopOptions> = {}): DeliveryLoop {
  const loop = new DeliveryLoop({ store, target: () => target(), reactionIds: () => [R], firstRetryMs: 20, maxRetryMs: 100, ...options });
  loops.push(loop);
  loop.start();
  return loop;
}

const record = (store: MemoryStore, s: number) => store.get<Delivery>(reactionsKeys.delivery(R, s));
const pendingCount = async (store: MemoryStore) => {
  let n = 0;
  for await (const _ of store.iterate({ gte: reactionsKeys.pendingPrefix(R), lt: 'oq"' })) n++;
  return n;
};

/** A receiver that answers only when told (`answers`), and the most attempts it held open at once. */
function slowEndpoint(): { fetch: typeof fetch; answers: Array<() => void>; peak: () => number } {
  let open = 0;
  let most = 0;
  const answers: Array<() => void> = [];
  const slow = (async () => {
    open++;
    most = Math.max(most, open);
    await new Promise<void>((resolve) => answers.push(resolve));
    open--;
    return new Response('ok', { status: 200 });
  }) as unknown as typeof fetch;
  return { fetch: slow, answers, peak: () => most };
}

describe('signatures (D37)', () => {
  it('verify with the secret over the raw body only, within the tolerance', () => {
    const raw = '{"id":"dlv_1"}';
    const header = signDelivery(SECRET, 1_800_000_000, raw);
    expect(header).toMatch(/^t=1800000000,v1=[0-9a-f]{64}$/);
    expect(verifySignature(SECRET, header, raw, 1_800_000_010)).toBe(true);
    expect(verifySignature('b'.repeat(64), header, raw, 1_800_000_010)).toBe(false);
    expect(verifySignature(SECRET, header, `${raw} `, 1_800_000_010)).toBe(false);
    expect(verifySignature(SECRET, header, raw, 1_800_001_000)).toBe(false);
    expect(verifySignature(SECRET, 'v1=abc', raw, 1_800_000_000)).toBe(false);
  });
});

describe('the delivery loop (D37)', () => {
  it('keeps per-user order behind a failing delivery while other users go on; the retry carries the same id', async () => {
    receiver = await startReceiver();
    const store = new MemoryStore();
    receiver.answerNext(500);
    const a1 = await enqueue(store, 'A');
    const a2 = await enqueue(store, 'A');
    const b1 = await enqueue(store, 'B');
    const target: DeliveryTarget = { url: receiver.url, secret: SECRET, state: 'Enabled' };
    start(store, () => target);
    await waitUntil(() => receiver!.received.filter((r) => r.answered === 200).length === 3, 'three successes');
    const order = receiver.received.map((r) => [r.body.id, r.answered]);
    expect(order.filter(([id]) => id === a1.body.id)).toEqual([
      [a1.body.id, 500],
      [a1.body.id, 200],
    ]);
    const at = (id: string, status: number) => order.findIndex(([x, s]) => x === id && s === status);
    expect(at(a2.body.id, 200)).toBeGreaterThan(at(a1.body.id, 200));
    expect(at(b1.body.id, 200)).toBeLessThan(at(a1.body.id, 200));
    for (const r of receiver.received) expect(verifySignature(SECRET, String(r.headers['x-audience-signature']), r.raw, Math.floor(Date.now() / 1000))).toBe(true);
    // The receiver answers before the loop records: wait for the records, then check them.
    await waitUntil(async () => (await pendingCount(store)) === 0, 'every record');
    expect(await record(store, a1.seq)).toMatchObject({ status: 'delivered', attempts: 2, last_status: 200, last_error: null });
  });

  it('a receiver that never answers times out and is retried; past the horizon the delivery is failed', async () => {
    const store = new MemoryStore();
    const hang = (await import('node:http')).createServer(() => undefined);
    await new Promise<void>((resolve) => hang.listen(0, '127.0.0.1', resolve));
    const port = (hang.address() as { port: number }).port;
    try {
      const d = await enqueue(store, 'A', Date.now());
      start(store, () => ({ url: `http://127.0.0.1:${port}/`, secret: SECRET, state: 'Enabled' }), { timeoutMs: 50, horizonMs: 300 });
      await waitUntil(async () => (await record(store, d.seq))?.status === 'failed', 'the horizon');
      const failed = await record(store, d.seq);
      expect(failed?.attempts).toBeGreaterThan(1);
      expect(failed).toMatchObject({ last_status: null, last_error: 'no answer within 50 ms' });
      expect(await pendingCount(store)).toBe(0);
    } finally {
      hang.closeAllConnections();
      hang.close();
    }
  });

  it('a disabled reaction waits (nothing sent, nothing lost) and goes on when enabled and notified', async () => {
    receiver = await startReceiver();
    const store = new MemoryStore();
    const d = await enqueue(store, 'A');
    let state: 'Enabled' | 'Disabled' = 'Disabled';
    const loop = start(store, () => ({ url: receiver!.url, secret: SECRET, state }));
    await loop.scanned();
    expect(receiver.received).toHaveLength(0);
    state = 'Enabled';
    loop.notify([R]);
    await waitUntil(() => receiver!.received.length === 1, 'the delivery');
    expect(receiver.received[0]?.body.id).toBe(d.body.id);
  });

  it('holds at most the in-flight bound for a slow receiver, whatever the queue holds', async () => {
    const store = new MemoryStore();
    for (let i = 0; i < 300; i++) await enqueue(store, `user-${i}`);
    const { fetch: slowFetch, answers, peak } = slowEndpoint();
    const loop = start(store, () => ({ url: 'http://127.0.0.1:9/', secret: SECRET, state: 'Enabled' }), { fetch: slowFetch, perEndpoint: 4 });
    await waitUntil(() => answers.length === 4, 'four attempts');
    // Every scan has decided: none started a fifth attempt.
    await loop.scanned();
    expect(answers).toHaveLength(4);
    expect(loop.stats().inFlight).toBe(4);
    // The receiver answers whatever waits, until the queue is empty.
    await waitUntil(async () => {
      answers.splice(0).forEach((answer) => answer());
      return (await pendingCount(store)) === 0;
    }, 'every delivery');
    expect(peak()).toBe(4);
    expect(loop.stats().delivered).toBe(300);
  });

  it('two reactions sending to one endpoint share its in-flight bound', async () => {
    const store = new MemoryStore();
    const other = 'reaction-2';
    for (let i = 0; i < 20; i++) {
      const d = await enqueue(store, `user-${i}`);
      await store.batch([
        { type: 'put', key: reactionsKeys.delivery(other, d.seq), value: { ...d, body: { ...d.body, reaction_id: other } } },
        { type: 'put', key: reactionsKeys.pending(other, d.seq), value: d.body.user_id },
      ]);
    }
    const { fetch: slowFetch, answers, peak } = slowEndpoint();
    const loop = new DeliveryLoop({ store, target: () => ({ url: 'http://127.0.0.1:9/hook', secret: SECRET, state: 'Enabled' }), reactionIds: () => [R, other], fetch: slowFetch, perEndpoint: 3 });
    loops.push(loop);
    loop.start();
    await waitUntil(() => answers.length === 3, 'three attempts');
    await waitUntil(() => {
      answers.splice(0).forEach((answer) => answer());
      return loop.stats().delivered === 40;
    }, 'the 40 deliveries');
    expect(peak()).toBe(3);
  });

  it('a restart (a new loop over the same store) sends what was left pending, under the same ids', async () => {
    receiver = await startReceiver();
    const store = new MemoryStore();
    receiver.answerNext(503, 503, 503);
    const ds = [await enqueue(store, 'A'), await enqueue(store, 'B'), await enqueue(store, 'C')];
    const first = start(store, () => ({ url: receiver!.url, secret: SECRET, state: 'Enabled' }), { firstRetryMs: 60_000 });
    await waitUntil(() => receiver!.received.length === 3, 'the refused attempts');
    await first.stop();
    start(store, () => ({ url: receiver!.url, secret: SECRET, state: 'Enabled' }), { now: () => Date.now() + 120_000 });
    await waitUntil(() => receiver!.received.length === 6, 'the deliveries after the restart');
    expect(receiver.received.slice(3).map((r) => r.body.id).sort()).toEqual(ds.map((d) => d.body.id).sort());
    expect(receiver.received.slice(3).every((r) => r.answered === 200)).toBe(true);
  });

  it('prunes delivered records after a day and failed ones after a week; pending ones stay', async () => {
    const store = new MemoryStore();
    const now = Date.now();
    const put = async (status: Delivery['status'], ageMs: number) => {
      const d = await enqueue(store, `u${seq}`, now - ageMs);
      await store.batch([{ type: 'put', key: reactionsKeys.delivery(R, d.seq), value: { ...d, status, last_attempt_at: now - ageMs } }]);
      return d.seq;
    };
    const oldDelivered = await put('delivered', 25 * 3_600_000);
    const newDelivered = await put('delivered', 3_600_000);
    const oldFailed = await put('failed', 8 * 24 * 3_600_000);
    const newFailed = await put('failed', 2 * 24 * 3_600_000);
    const oldPending = await put('pending', 30 * 24 * 3_600_000);
    const loop = new DeliveryLoop({ store, target: () => undefined, reactionIds: () => [R] });
    loops.push(loop);
    expect(await loop.prune()).toBe(2);
    for (const [s, kept] of [[oldDelivered, false], [newDelivered, true], [oldFailed, false], [newFailed, true], [oldPending, true]] as const) {
      expect((await record(store, s)) !== undefined, `record ${s}`).toBe(kept);
    }
  });
});
