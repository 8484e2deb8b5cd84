// The stream hub (D38) over a memory store with fake sockets: catch-up then live without loss or duplicates while
// entries keep being published, catch-ups wait for a backed-up socket, a slow client is dropped with 4429, a cursor
// older than the pruned log closes with 4410, catch-up (replayed) entries and other organizations never show.

import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../../store/memory.js';
import { reactionsKeys, type TransitionLogEntry } from '../../domain/reactions/contract.js';
import { StreamHub, parsePosition, type StreamSocket, type Subscription } from './hub.js';
import { waitUntil } from '../../../test/support/wait.js';

const ORG = 'org-1';
const T0 = Date.UTC(2026, 10, 24);

class FakeSocket implements StreamSocket {
  readonly sent: { cursor: string; cohort: { code: number } }[] = [];
  buffered = 0;
  /** Bytes each send adds to the backlog (0: the client reads at once). */
  growth = 0;
  closedWith: number | undefined;
  send(text: string): boolean {
    this.sent.push(JSON.parse(text));
    this.buffered += this.growth;
    return true;
  }
  bufferedAmount(): number {
    return this.buffered;
  }
  end(code: number): void {
    this.closedWith = code;
  }
}

const entry = (cohorts: number[], extra: Partial<TransitionLogEntry> = {}): TransitionLogEntry => ({
  org: ORG,
  user: 'u',
  event_id: null,
  transitions: cohorts.map((cohort) => ({ cohort, kind: 'entered' as const, time: T0 })),
  at: T0,
  ...extra,
});

const sub = (extra: Partial<Subscription> = {}): Subscription => ({ org: ORG, canSee: () => true, cohortId: (code) => `c${code}`, ...extra });

async function commit(store: MemoryStore, hub: StreamHub, cursor: number, value: TransitionLogEntry): Promise<void> {
  await store.batch([
    { type: 'put', key: reactionsKeys.logEntry(cursor), value },
    { type: 'put', key: reactionsKeys.logCursor(), value: cursor },
  ]);
  hub.publish([{ cursor, entry: value }]);
}

describe('the stream hub (D38)', () => {
  it('parses cursors: "{entry}.{index}" and a bare entry; rejects anything else', () => {
    expect(parsePosition('12.3')).toEqual({ cursor: 12, index: 3 });
    expect(parsePosition('12')).toEqual({ cursor: 12, index: Number.MAX_SAFE_INTEGER });
    for (const bad of ['', '-1', '1.2.3', 'x', '1e3', ' 1']) expect(parsePosition(bad)).toBeUndefined();
  });

  it('a catch-up while entries keep being committed turns live with nothing lost or repeated', async () => {
    const store = new MemoryStore();
    const hub = await StreamHub.open({ store, now: () => T0 });
    for (let c = 1; c <= 1200; c++) await commit(store, hub, c, entry([1, 2]));
    const socket = new FakeSocket();
    await hub.subscribe(socket, sub({ after: { cursor: 3, index: 0 } }));
    // Commit more while the catch-up pages through the stored log.
    for (let c = 1201; c <= 1300; c++) {
      await commit(store, hub, c, entry([1, 2]));
      if (c % 10 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    await waitUntil(() => socket.sent.length === (1300 - 3) * 2 + 1, 'every transition after 3.0');
    const cursors = socket.sent.map((m) => m.cursor);
    expect(cursors[0]).toBe('3.1');
    expect(new Set(cursors).size).toBe(cursors.length);
    expect(cursors.at(-1)).toBe('1300.1');
    await commit(store, hub, 1301, entry([1]));
    expect(socket.sent.at(-1)?.cursor).toBe('1301.0');
    await hub.close();
  });

  it('skips catch-up (replayed) entries, other organizations, hidden and filtered cohorts', async () => {
    const store = new MemoryStore();
    const hub = await StreamHub.open({ store, now: () => T0 });
    const socket = new FakeSocket();
    await hub.subscribe(socket, sub({ canSee: (code) => code !== 3, only: new Set([1, 3]) }));
    await commit(store, hub, 1, entry([1], { replay: true }));
    await commit(store, hub, 2, entry([1], { org: 'org-2' }));
    await commit(store, hub, 3, entry([1, 2, 3]));
    expect(socket.sent.map((m) => m.cursor)).toEqual(['3.0']);
    await hub.close();
  });

  it('drops a client whose unsent backlog passes the bound with 4429; the hub forgets it', async () => {
    const store = new MemoryStore();
    const hub = await StreamHub.open({ store, now: () => T0, maxBufferedBytes: 1000 });
    const slow = new FakeSocket();
    slow.growth = 300;
    const fast = new FakeSocket();
    await hub.subscribe(slow, sub());
    await hub.subscribe(fast, sub());
    for (let c = 1; c <= 10; c++) await commit(store, hub, c, entry([1]));
    expect(slow.closedWith).toBe(4429);
    expect(slow.sent).toHaveLength(4);
    expect(fast.sent).toHaveLength(10);
    expect(hub.clients).toBe(1);
    await hub.close();
  });

  it('a catch-up waits while the socket is backed up and goes on when it drains', async () => {
    const store = new MemoryStore();
    const hub = await StreamHub.open({ store, now: () => T0, maxBufferedBytes: 1_000_000 });
    for (let c = 1; c <= 1500; c++) await commit(store, hub, c, entry([1]));
    const socket = new FakeSocket();
    socket.growth = 1500; // a page of 500 messages makes 750 KB: past half the bound, under the bound
    await hub.subscribe(socket, sub({ after: { cursor: 0, index: Number.MAX_SAFE_INTEGER } }));
    await waitUntil(() => hub.waitingForDrain(socket), 'the catch-up to wait for the drain');
    expect(socket.sent.length).toBeGreaterThanOrEqual(500);
    expect(socket.sent.length).toBeLessThanOrEqual(501);
    // The client catches up on reading: nothing stays queued from now on.
    socket.buffered = 0;
    socket.growth = 0;
    hub.drained(socket);
    await waitUntil(() => socket.sent.length === 1500, 'the rest after the drain');
    expect(socket.closedWith).toBeUndefined();
    await hub.close();
  });

  it('prunes entries past the retention and closes a cursor older than what is kept with 4410', async () => {
    const store = new MemoryStore();
    let now = T0;
    const hub = await StreamHub.open({ store, now: () => now, retentionMs: 24 * 3_600_000 });
    for (let c = 1; c <= 5; c++) await commit(store, hub, c, entry([1], { at: T0 + c }));
    now = T0 + 24 * 3_600_000 + 3; // entries 1 and 2 are older than a day
    await hub.prune();
    const left: string[] = [];
    for await (const [key] of store.iterate({ gte: 't!', lt: 't"' })) left.push(key);
    expect(left).toEqual([3, 4, 5].map((c) => reactionsKeys.logEntry(c)));
    const old = new FakeSocket();
    await hub.subscribe(old, sub({ after: { cursor: 1, index: 0 } }));
    expect(old.closedWith).toBe(4410);
    const kept = new FakeSocket();
    await hub.subscribe(kept, sub({ after: { cursor: 2, index: Number.MAX_SAFE_INTEGER } }));
    await waitUntil(() => kept.sent.length === 3, 'the kept entries');
    expect(kept.closedWith).toBeUndefined();
    await hub.close();
  });
});
