// The cluster's event log on a real nats-server (issue 15): the partition count is the first node's, a repeated event
// id is stored once (Nats-Msg-Id dedupe), and a partition reads back in order from any sequence, then live.

import { describe, expect, it } from 'vitest';
import { EventLog } from '../../server/cluster/event-log.js';
import { useNatsServer } from '../support/nats.js';
import { waitUntil } from '../support/wait.js';

const nats = useNatsServer();

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (data: Uint8Array) => new TextDecoder().decode(data);

describe('the cluster event log', () => {
  it('keeps the first node\'s partition count, stores a repeated id once, reads a partition in order from a sequence', async () => {
    const log = await EventLog.open(nats.connection(), { partitions: 16, replicas: 1 });
    expect(log.partitions).toBe(16);
    const second = await EventLog.open(nats.connection(), { partitions: 4, replicas: 1 });
    expect(second.partitions).toBe(16);

    const a = await log.publish(3, bytes('a'), 'id-a');
    const other = await log.publish(5, bytes('x'), 'id-x');
    const b = await log.publish(3, bytes('b'), 'id-b');
    const again = await second.publish(3, bytes('a, retried'), 'id-a');
    expect(again).toEqual({ seq: a.seq, duplicate: true });
    expect(other.seq).toBeGreaterThan(a.seq);

    const read: [number, string][] = [];
    const reader = await log.read(3, 0, async (seq, data) => void read.push([seq, text(data)]));
    await waitUntil(() => read.length === 2, 'partition 3 read back');
    expect(read).toEqual([[a.seq, 'a'], [b.seq, 'b']]);
    const c = await log.publish(3, bytes('c'), 'id-c');
    await waitUntil(() => read.length === 3, 'a live event');
    expect(read[2]).toEqual([c.seq, 'c']);
    await reader.stop();

    const resumed: string[] = [];
    const after = await log.read(3, a.seq, async (_seq, data) => void resumed.push(text(data)));
    await waitUntil(() => resumed.length === 2, 'partition 3 after the first event');
    expect(resumed).toEqual(['b', 'c']);
    await after.stop();

    // A failing apply ends the read and says why; nothing after it is applied.
    const seen: string[] = [];
    const failing = await log.read(3, 0, async (_seq, data) => {
      seen.push(text(data));
      if (seen.length === 2) throw new Error('store refused');
    });
    await expect(failing.done).rejects.toThrow('store refused');
    expect(seen).toEqual(['a', 'b']);
  });
});
