// The transitions publisher without NATS (issue 15): a stand-in JetStream client records what is published. What was
// committed before a start and not published (a crash between the two) is published on start, in order; quiet
// entries are never published; new commits are published from `notify`; a failed publish is sent again from the
// last confirmed entry; `flushed` resolves once everything committed before it is on the stream.

import { describe, expect, it } from 'vitest';
import type { JetStreamClient } from '@nats-io/jetstream';
import { Packr } from 'msgpackr';
import { MemoryStore } from '../store/memory.js';
import { reactionsKeys, type TransitionLogEntry } from '../domain/reactions/contract.js';
import { TransitionPublisher, transitionMessageId } from './transitions.js';
import { waitUntil } from '../../test/support/wait.js';

const packr = new Packr({ useRecords: false, mapsAsObjects: true });

const entry = (user: string, quiet = false): TransitionLogEntry => ({
  org: 'o',
  user,
  event_id: `e-${user}`,
  transitions: [{ cohort: 1, kind: 'entered', time: 1 }],
  ...(quiet ? { quiet: true as const } : {}),
  at: 10,
});

/** Commits entries to the store's log as the pipeline does (entries and the last cursor in one batch). */
async function commit(store: MemoryStore, from: number, entries: TransitionLogEntry[]): Promise<Array<{ cursor: number; entry: TransitionLogEntry }>> {
  const logged = entries.map((e, i) => ({ cursor: from + i, entry: e }));
  await store.batch([...logged.map(({ cursor, entry: e }) => ({ type: 'put' as const, key: reactionsKeys.logEntry(cursor), value: e })), { type: 'put', key: reactionsKeys.logCursor(), value: from + entries.length - 1 }]);
  return logged;
}

/** A JetStream client that records publishes; `failNext` makes the next publishes reject. */
function fakeJetStream() {
  const published: Array<{ user: string; id: string }> = [];
  let failures = 0;
  const js = {
    publish: async (_subject: string, data: Uint8Array, options: { msgID: string }) => {
      if (failures > 0) {
        failures--;
        throw new Error('timeout');
      }
      published.push({ user: (packr.unpack(data) as TransitionLogEntry).user, id: options.msgID });
      return { seq: published.length, duplicate: false };
    },
  } as unknown as JetStreamClient;
  return { js, published, failNext: (n: number) => (failures = n) };
}

describe('the transitions publisher', () => {
  it('publishes on start what was committed and not published, skips quiet entries, then follows notify', async () => {
    const store = new MemoryStore();
    await commit(store, 1, [entry('a'), entry('b', true), entry('c')]);
    const fake = fakeJetStream();
    const publisher = new TransitionPublisher(fake.js, store, () => undefined);
    await publisher.start();
    await publisher.flushed();
    expect(fake.published.map((p) => p.user)).toEqual(['a', 'c']);
    expect(fake.published[0]?.id).toBe(transitionMessageId(entry('a')));
    publisher.notify(await commit(store, 4, [entry('d'), entry('e')]));
    await publisher.flushed();
    expect(fake.published.map((p) => p.user)).toEqual(['a', 'c', 'd', 'e']);
    await publisher.stop();

    // Started again on the same store: nothing is published twice (how far it got is stored).
    const again = fakeJetStream();
    const restarted = new TransitionPublisher(again.js, store, () => undefined);
    await restarted.start();
    restarted.notify(await commit(store, 6, [entry('f')]));
    await restarted.flushed();
    expect(again.published.map((p) => p.user)).toEqual(['f']);
    await restarted.stop();
  });

  it('sends again from the last confirmed entry after a failed publish, in order', async () => {
    const store = new MemoryStore();
    const fake = fakeJetStream();
    const lines: string[] = [];
    const publisher = new TransitionPublisher(fake.js, store, (line) => lines.push(line));
    await publisher.start();
    fake.failNext(1);
    publisher.notify(await commit(store, 1, [entry('a'), entry('b')]));
    await waitUntil(() => lines.length > 0, 'the failure reported');
    await publisher.flushed();
    // The failed page is sent again whole (the stream drops repeats by message id); the order holds.
    expect(fake.published.map((p) => p.user).slice(-2)).toEqual(['a', 'b']);
    expect(lines[0]).toContain('publishing transitions after 0 failed');
    await publisher.stop();
  });
});
