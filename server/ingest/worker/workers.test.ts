// The worker path: real piscina workers (threads: 2) load the compiled dist/server/ingest/worker/worker.js (run
// `npm run build` first), receive plans on demand by version, read imported data captured on the main thread
// (E13, E14), and give the same memberships and sizes as the inline executor.

import { existsSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readUserEvents } from '../../domain/events/index.js';
import { MemoryStore } from '../../store/memory.js';
import { TASKS_POSTED, createExecutor, workerFilename } from './executor.js';
import { EMPTY_CONTEXT_DATA } from '../tick/context.js';
import { decodeState } from '../../../engine/index.js';
import { MapContexts, MapPlans, ORG, T0, cohort, event, userId } from '../../../test/support/ingest.js';
import { openIngestPipeline, type Pipeline } from '../pipeline.js';

const COHORTS = [
  cohort(1, { event: 'Pageview', frequency: { greater_than_or_equal_to: 3 } }),
  cohort(2, { event: 'Click', during: 'this_session' }),
  cohort(3, { in_third_party_segment: { provider: 'acme', segment: 'sports' } }),
  cohort(4, {
    in_connections_import_segment: { provider: 'crm', filters: { property: 'plan', condition: { equal_to: 'pro' } } },
  }),
];

let pipelines: Pipeline[];

beforeEach(() => {
  pipelines = [];
});

afterEach(async () => {
  for (const pipeline of pipelines) await pipeline.close();
});

async function start(threads: number, plans: MapPlans, contexts = new MapContexts()): Promise<Pipeline> {
  const pipeline = await openIngestPipeline({ store: new MemoryStore(), plans, contexts, threads, partitions: 4, now: () => T0, log: (line) => console.error(line) });
  pipelines.push(pipeline);
  return pipeline;
}

function contextsFor(users: readonly string[]): MapContexts {
  const contexts = new MapContexts();
  users.forEach((user, i) => {
    if (i % 3 === 0) contexts.addSegment(ORG, user, '3rd', 'acme', 'sports');
    if (i % 4 === 0) contexts.addRow(ORG, user, 'crm', { time: T0, properties: { plan: i % 8 === 0 ? 'pro' : 'free' } });
  });
  return contexts;
}

describe('piscina workers (threads: 2)', () => {
  it('the worker is built where the executor looks for it', () => {
    expect(existsSync(workerFilename())).toBe(true);
  });

  it('answer needPlan for a version they lack, then compile the attached cohorts and return encoded states', async () => {
    const executor = createExecutor(2);
    try {
      const user = {
        key: 'u1',
        resident: false,
        state: null,
        replay: [],
        snapshot: true,
        steps: [{ kind: 'events' as const, events: [{ name: 'Pageview', time: T0, properties: {} }] }],
        ctx: EMPTY_CONTEXT_DATA,
      };
      const task = { groups: [{ org: ORG, version: 7, users: [user] }] };
      expect(await executor.run(task, 0)).toEqual({ needPlan: true, orgs: [ORG] });
      const reply = await executor.run({ groups: [{ ...task.groups[0], org: ORG, version: 7, users: [user], cohorts: COHORTS }] }, 0);
      if (reply.needPlan === true || reply.lost !== undefined) throw new Error('the plan was attached');
      const result = reply.groups[0]?.[0];
      expect(result?.steps[0]?.memberships).toEqual([]);
      expect(result?.state).toBeInstanceOf(Uint8Array);
      expect(decodeState(result?.state as Uint8Array).count).toBe(1);
    } finally {
      await executor.close();
    }
  });

  it('keep each owner\'s states resident: later tasks go on from them, snapshots are encoded on demand, a state not held is reported lost', async () => {
    const executor = createExecutor(2);
    try {
      const step = (n: number) => ({ kind: 'events' as const, events: [{ name: 'Pageview', time: T0 + n, properties: {} }] });
      const user = (resident: boolean, n: number, snapshot = false) => ({ key: 'u1', resident, state: null, replay: [], snapshot, steps: [step(n)], ctx: EMPTY_CONTEXT_DATA });
      const group = (users: ReturnType<typeof user>[]) => ({ groups: [{ org: ORG, version: 7, users, cohorts: COHORTS }] });
      const first = await executor.run(group([user(false, 1)]), 1);
      if (first.needPlan === true || first.lost !== undefined) throw new Error('unexpected reply');
      // No snapshot asked: nothing is encoded, only the resident state's size comes back.
      expect(first.groups[0]?.[0]?.state).toBeUndefined();
      expect(first.groups[0]?.[0]?.bytes).toBeGreaterThan(0);
      const second = await executor.run(group([user(true, 2)]), 1);
      if (second.needPlan === true || second.lost !== undefined) throw new Error('unexpected reply');
      expect(second.groups[0]?.[0]?.steps[0]?.memberships).toEqual([]);
      const third = await executor.run(group([user(true, 3, true)]), 1);
      if (third.needPlan === true || third.lost !== undefined) throw new Error('unexpected reply');
      // Cohort 1 wants 3 Pageviews: the owner went on from the state it kept.
      expect(third.groups[0]?.[0]?.count).toBe(3);
      expect(third.groups[0]?.[0]?.steps[0]?.memberships).toEqual([1]);
      expect(decodeState(third.groups[0]?.[0]?.state as Uint8Array).count).toBe(3);
      // Owner 0 never held u1.
      expect(await executor.run(group([user(true, 4)]), 0)).toEqual({ lost: ['u1'] });
      // An ask encodes the resident state as it is, then forgets it.
      const asked = await executor.run({ groups: [], snapshots: [{ key: 'u1', drop: true }, { key: 'nobody', drop: false }] }, 1);
      if (asked.needPlan === true || asked.lost !== undefined) throw new Error('unexpected reply');
      expect(decodeState(asked.snapshots?.[0] as Uint8Array).count).toBe(3);
      expect(asked.snapshots?.[1]).toBeNull();
      expect(await executor.run(group([user(true, 4)]), 1)).toEqual({ lost: ['u1'] });
    } finally {
      await executor.close();
    }
  });

  it('run the tasks posted to an owner at once one after another, in the order posted (TASKS_POSTED)', async () => {
    const executor = createExecutor(1);
    try {
      const step = (n: number) => ({ kind: 'events' as const, events: [{ name: 'Pageview', time: T0 + n, properties: {} }] });
      const task = (n: number) => ({ groups: [{ org: ORG, version: 7, users: [{ key: 'u1', resident: n > 1, state: null, replay: [], snapshot: false, steps: [step(n)], ctx: EMPTY_CONTEXT_DATA }], cohorts: COHORTS }] });
      // A fresh owner: the first task also loads the engine; each later one goes on from the state the one before left.
      const replies = await Promise.all(Array.from({ length: TASKS_POSTED + 4 }, (_, i) => executor.run(task(i + 1), 0)));
      replies.forEach((reply, i) => {
        if (reply.needPlan === true || reply.lost !== undefined) throw new Error(`task ${i + 1}: ${JSON.stringify(reply)}`);
        expect(reply.groups[0]?.[0]?.count).toBe(i + 1);
        expect(reply.groups[0]?.[0]?.steps[0]?.memberships).toEqual(i + 1 >= 3 ? [1] : []);
      });
    } finally {
      await executor.close();
    }
  });

  it('compact their heaps on request, one entry per owner, and keep their resident states (server/heap-compaction.ts)', async () => {
    const executor = createExecutor(2);
    const inline = createExecutor(0);
    try {
      const step = (n: number) => ({ kind: 'events' as const, events: [{ name: 'Pageview', time: T0 + n, properties: {} }] });
      const task = (n: number) => ({ groups: [{ org: ORG, version: 7, users: [{ key: 'u1', resident: n > 1, state: null, replay: [], snapshot: false, steps: [step(n)], ctx: EMPTY_CONTEXT_DATA }], cohorts: COHORTS }] });
      for (const owner of [0, 1]) await executor.run(task(1), owner);
      // A fresh owner's heap is small: no compaction is worth it (nor a settling collection), and each owner says so.
      expect(await executor.compactHeaps(true)).toEqual([undefined, undefined]);
      for (const owner of [0, 1]) {
        const reply = await executor.run(task(2), owner);
        if (reply.needPlan === true || reply.lost !== undefined) throw new Error(`owner ${owner}: ${JSON.stringify(reply)}`);
        expect(reply.groups[0]?.[0]?.count).toBe(2);
      }
      // With no owner threads the main thread owns the states; its heap is the caller's to compact.
      expect(await inline.compactHeaps(true)).toEqual([]);
    } finally {
      await executor.close();
      await inline.close();
    }
  });

  it('give the memberships and sizes the inline executor gives, imported data included', async () => {
    const users = Array.from({ length: 200 }, (_, i) => userId(i));
    const contexts = contextsFor(users);
    const workers = await start(2, new MapPlans(ORG, COHORTS), contexts);
    const inline = await start(0, new MapPlans(ORG, COHORTS), contexts);
    for (const pipeline of [workers, inline]) {
      for (let round = 0; round < 4; round++) {
        await Promise.all(
          users.map((user, i) =>
            pipeline.append({ org: ORG, user, events: [event(round * 1000 + i, (i + round) % 5 === 0 ? 'Click' : 'Pageview')] }),
          ),
        );
      }
    }
    for (const code of [1, 2, 3, 4]) {
      expect(workers.audienceSize(ORG, code)).toBe(inline.audienceSize(ORG, code));
      expect(workers.audienceSize(ORG, code)).toBeGreaterThan(0);
    }
    expect(workers.audienceSize(ORG, 3)).toBe(67);
    expect(workers.audienceSize(ORG, 4)).toBe(25);
    for (const user of users) expect(await workers.membershipsOf(ORG, user)).toEqual(await inline.membershipsOf(ORG, user));
  });

  it('a burst for one user keeps arrival order through the workers', async () => {
    const store = new MemoryStore();
    const workers = await openIngestPipeline({ store, plans: new MapPlans(ORG, COHORTS), contexts: new MapContexts(), threads: 2, deadlines: false });
    pipelines.push(workers);
    const user = userId(1);
    const results = await Promise.all(Array.from({ length: 300 }, (_, i) => workers.append({ org: ORG, user, events: [event(i)] })));
    expect((await readUserEvents(store, ORG, user, { limit: 1000 })).map((e) => e.properties['n'])).toEqual(
      Array.from({ length: 300 }, (_, i) => i),
    );
    expect(results[1]?.memberships).toEqual([]);
    expect(results[2]?.memberships).toEqual([1]);
    expect(workers.audienceSize(ORG, 1)).toBe(1);
  });

  it('workers lacking a new plan version ask for it; state carries over the change', async () => {
    const plans = new MapPlans(ORG, [COHORTS[0] as (typeof COHORTS)[number]]);
    const workers = await start(2, plans);
    const user = userId(9);
    await workers.append({ org: ORG, user, events: [event(1), event(2)] });
    plans.set(ORG, [COHORTS[0] as (typeof COHORTS)[number], cohort(5, { event: 'Other' })]);
    workers.planChanged(ORG);
    expect((await workers.append({ org: ORG, user, events: [event(3)] })).memberships).toEqual([1]);
    expect((await workers.append({ org: ORG, user, events: [event(4, 'Other')] })).memberships).toEqual([1, 5]);
  });

  it('an owner whose thread is replaced loses its states: the group answers 5000, the next append goes on from the stored events', async () => {
    const store = new MemoryStore();
    const workers = await openIngestPipeline({ store, plans: new MapPlans(ORG, COHORTS), contexts: new MapContexts(), threads: 2, partitions: 2, log: () => undefined, deadlines: false });
    pipelines.push(workers);
    const users = Array.from({ length: 6 }, (_, i) => userId(100 + i));
    for (let round = 0; round < 2; round++) await Promise.all(users.map((user, i) => workers.append({ org: ORG, user, events: [event(round * 10 + i)] })));
    // Replace both owners' threads (piscina starts new ones): every resident state is gone.
    const pools = (workers as unknown as { executor: { pools: { threads: { terminate(): Promise<number> }[] }[] } }).executor.pools;
    await Promise.all(pools.flatMap((pool) => pool.threads.map((thread) => thread.terminate())));
    const third = await Promise.allSettled(users.map((user, i) => workers.append({ org: ORG, user, events: [event(20 + i)] })));
    const failed = third.filter((result) => result.status === 'rejected');
    expect(failed.length).toBeGreaterThan(0);
    for (const result of failed) expect((result as PromiseRejectedResult).reason).toMatchObject({ code: 5000 });
    // Retried, every user goes on from its stored events: cohort 1 wants 3 Pageviews.
    for (const [i, user] of users.entries()) {
      if (third[i]?.status === 'rejected') await workers.append({ org: ORG, user, events: [event(20 + i)] });
      expect((await workers.append({ org: ORG, user, events: [event(30 + i)] })).memberships).toEqual([1]);
      expect(await workers.membershipsOf(ORG, user)).toEqual([1]);
    }
    expect(workers.audienceSize(ORG, 1)).toBe(users.length);
  });
});
