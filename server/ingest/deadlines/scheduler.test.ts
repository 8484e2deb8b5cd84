// D36's scheduler over the durable deadline index: overdue entries (a restart) are handed out at once, each once while
// in flight; later ones when their time comes (also ones noted after the scan); the in-flight bound holds and the
// scan resumes as hand-outs finish; a failed re-evaluation is tried again (the entry stays until a batch deletes it).

import { afterEach, describe, expect, it } from 'vitest';
import { MemoryStore } from '../../store/memory.js';
import { reactionsKeys } from '../../domain/reactions/contract.js';
import { DeadlineScheduler, parseDeadlineKey } from './scheduler.js';
import { waitUntil } from '../../../test/support/wait.js';

const ORG = 'org-1';

interface Call {
  readonly user: string;
  readonly at: number;
  readonly due: string;
  finish(ok: boolean): Promise<void>;
}

let schedulers: DeadlineScheduler[] = [];
afterEach(async () => {
  for (const s of schedulers) await s.stop();
  schedulers = [];
});

function start(store: MemoryStore, maxInFlight?: number): { calls: Call[]; scheduler: DeadlineScheduler } {
  const calls: Call[] = [];
  const scheduler = new DeadlineScheduler({
    store,
    partitions: 4,
    now: Date.now,
    log: () => undefined,
    ...(maxInFlight === undefined ? {} : { maxInFlight }),
    evaluate: (_org, user, at, due) =>
      new Promise<void>((resolve, reject) => {
        calls.push({
          user,
          at,
          due,
          // A successful re-evaluation deletes its entry in its batch, as the pipeline does.
          finish: async (ok) => {
            if (ok) {
              await store.batch([{ type: 'del', key: due }]);
              resolve();
            } else reject(new Error('overloaded'));
          },
        });
      }),
  });
  schedulers.push(scheduler);
  scheduler.start();
  return { calls, scheduler };
}

/** Finishes each call handed out (but those in `done`) as it comes, until `evaluated` entries were, never more than `bound` in flight. */
async function finishUntil(scheduler: DeadlineScheduler, calls: readonly Call[], done: Set<Call>, evaluated: number, bound: number): Promise<void> {
  await waitUntil(() => {
    expect(scheduler.stats().inFlight).toBeLessThanOrEqual(bound);
    for (const call of calls) {
      if (done.has(call)) continue;
      done.add(call);
      void call.finish(true);
    }
    return scheduler.stats().evaluated === evaluated;
  }, `${evaluated} entries to be evaluated`);
}

const put = (store: MemoryStore, partition: number, at: number, user: string) =>
  store.batch([{ type: 'put', key: reactionsKeys.deadline(partition, at, ORG, user), value: 1 }]);

describe('the deadline scheduler (D36)', () => {
  it('keys carry partition, time, org and user (user ids escaped)', () => {
    const key = reactionsKeys.deadline(3, Date.UTC(2026, 10, 24), ORG, 'a!b');
    expect(parseDeadlineKey(key)).toEqual({ partition: 3, at: Date.UTC(2026, 10, 24), org: ORG, user: 'a!b' });
    expect(parseDeadlineKey('dl!nonsense')).toBeUndefined();
  });

  it('hands out overdue entries at start, each once while in flight, then a later one when it is due', async () => {
    const store = new MemoryStore();
    const now = Date.now();
    await put(store, 0, now - 60_000, 'u1');
    await put(store, 2, now - 1, 'u2');
    await put(store, 1, now + 150, 'u3');
    const { calls, scheduler } = start(store);
    await waitUntil(() => calls.length === 2, 'the overdue entries');
    expect(calls.map((c) => c.user).sort()).toEqual(['u1', 'u2']);
    // Still in flight: a wake-up (the later entry's) does not hand them out again.
    await waitUntil(() => calls.length === 3, 'the later entry');
    expect(calls[2]?.user).toBe('u3');
    expect(calls[2]!.at).toBeLessThanOrEqual(Date.now());
    for (const call of calls) await call.finish(true);
    await waitUntil(() => scheduler.stats().evaluated === 3, 'the commits');
    expect(scheduler.stats().lagsMs).toHaveLength(3);
    expect(calls).toHaveLength(3);
  });

  it('a deadline noted after the scan wakes the scheduler earlier than the one it armed', async () => {
    const store = new MemoryStore();
    await put(store, 0, Date.now() + 3_600_000, 'far');
    const { calls, scheduler } = start(store);
    await new Promise((resolve) => setImmediate(resolve));
    const soon = Date.now() + 20;
    await put(store, 3, soon, 'near');
    scheduler.noteDeadlines([soon]);
    await waitUntil(() => calls.length === 1, 'the noted deadline');
    expect(calls[0]?.user).toBe('near');
    await calls[0]?.finish(true);
  });

  it('keeps at most maxInFlight handed out and resumes as they finish; a failure is tried again', async () => {
    const store = new MemoryStore();
    const now = Date.now() - 1000;
    for (let i = 0; i < 7; i++) await put(store, i % 4, now + i, `u${i}`);
    const { calls, scheduler } = start(store, 3);
    await waitUntil(() => calls.length === 3, 'the first three');
    expect(scheduler.stats().inFlight).toBe(3);
    await calls[0]?.finish(false);
    await calls[1]?.finish(true);
    await waitUntil(() => calls.length >= 5, 'more hand-outs');
    expect(scheduler.stats().inFlight).toBeLessThanOrEqual(3);
    // Finish everything that comes until every entry was evaluated (the failed one included).
    await finishUntil(scheduler, calls, new Set<Call>([calls[0] as Call, calls[1] as Call]), 7, 3);
    expect(new Set(calls.map((c) => c.user))).toEqual(new Set(['u0', 'u1', 'u2', 'u3', 'u4', 'u5', 'u6']));
    expect(scheduler.stats().failed).toBe(1);
  });

  it('hands out every due entry of one partition holding more than maxInFlight, as earlier ones finish', async () => {
    const store = new MemoryStore();
    const now = Date.now() - 1000;
    // One partition's due range holds three times the bound.
    for (let i = 0; i < 6; i++) await put(store, 2, now + i, `p${i}`);
    const { calls, scheduler } = start(store, 2);
    await waitUntil(() => calls.length === 2, 'the first two');
    await finishUntil(scheduler, calls, new Set<Call>(), 6, 2);
    expect(calls.map((c) => c.user).sort()).toEqual(['p0', 'p1', 'p2', 'p3', 'p4', 'p5']);
  });
});
