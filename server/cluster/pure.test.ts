// The cluster's pieces that need no NATS (issue 15): transition message ids, the merged deliveries list, delivery
// tags and the outbox range they start.

import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../store/memory.js';
import { deliveryId, reactionsKeys, type TransitionLogEntry } from '../domain/reactions/contract.js';
import { transitionMessageId } from './transitions.js';
import { mergeDeliveries } from './routing.js';
import { MAX_TAG, startOutboxAtTag, tagOfDelivery } from './node-tags.js';

const entry: TransitionLogEntry = { org: 'o', user: 'u', event_id: 'e', transitions: [{ cohort: 1, kind: 'entered', time: 5 }], at: 100 };

describe('transition message ids', () => {
  it('are the entry content: the same entry committed at another time or by another owner has the same id', () => {
    expect(transitionMessageId({ ...entry, at: 999 })).toBe(transitionMessageId(entry));
    expect(transitionMessageId({ ...entry, quiet: true })).toBe(transitionMessageId(entry));
  });

  it('differ when the user, event, transitions or replay mark differ', () => {
    const ids = [
      entry,
      { ...entry, user: 'v' },
      { ...entry, event_id: null },
      { ...entry, transitions: [{ cohort: 1, kind: 'exited' as const, time: 5 }] },
      { ...entry, transitions: [{ cohort: 1, kind: 'entered' as const, time: 6 }] },
      { ...entry, replay: true as const },
    ].map(transitionMessageId);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('the deliveries list of several nodes', () => {
  it('is newest first (ties by id), at most the limit', () => {
    const d = (id: string, created: string) => ({ id, created_at: created });
    const merged = mergeDeliveries(
      [
        [d('dlv_a2', '2026-01-01T00:00:03.000Z'), d('dlv_a1', '2026-01-01T00:00:01.000Z')],
        [d('dlv_b2', '2026-01-01T00:00:03.000Z'), d('dlv_b1', '2026-01-01T00:00:02.000Z')],
        [],
      ],
      3,
    );
    expect(merged.map((x) => x.id)).toEqual(['dlv_b2', 'dlv_a2', 'dlv_b1']);
  });
});

describe('delivery tags', () => {
  it('start a node outbox at its tag, so its delivery ids name it; a store already in range stays', async () => {
    const store = new MemoryStore();
    await startOutboxAtTag(store, 3);
    const seq = (await store.get<number>(reactionsKeys.outboxSeq())) as number;
    expect(tagOfDelivery(deliveryId(seq + 1))).toBe(3);
    await store.batch([{ type: 'put', key: reactionsKeys.outboxSeq(), value: seq + 41 }]);
    await startOutboxAtTag(store, 3);
    expect(await store.get(reactionsKeys.outboxSeq())).toBe(seq + 41);
    expect(tagOfDelivery(deliveryId(1))).toBe(0);
    expect(tagOfDelivery('dlv_nope')).toBeUndefined();
  });

  it('keep the largest tag within exact integers', async () => {
    const store = new MemoryStore();
    await startOutboxAtTag(store, MAX_TAG);
    const seq = (await store.get<number>(reactionsKeys.outboxSeq())) as number;
    expect(Number.isSafeInteger(seq + 2 ** 40 - 1)).toBe(true);
    expect(tagOfDelivery(deliveryId(seq + 2 ** 40 - 1))).toBe(MAX_TAG);
  });
});
