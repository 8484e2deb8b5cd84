// A task's histories cross beside its message (histories.ts): detached into one buffer and attached back as views,
// every catch-up's and replay's events arrive as they were sent, and a task without any crosses unchanged.

import { describe, expect, it } from 'vitest';
import { attachHistories, detachHistories } from './histories.js';
import { packMessage, unpackMessage } from './messages.js';
import type { WorkTask, WorkUser } from './work.js';
import { EMPTY_CONTEXT_DATA } from '../tick/context.js';

const bytes = (n: number, fill: number): Uint8Array => new Uint8Array(n).fill(fill);

function user(key: string, events?: Uint8Array): WorkUser {
  return {
    key,
    resident: false,
    state: null,
    replay: [],
    snapshot: false,
    steps: [],
    ctx: { segments: [], rows: [] } as unknown as WorkUser['ctx'],
    ...(events === undefined ? {} : { catchup: { source: bytes(3, 9), events: { bytes: events, count: events.byteLength }, stale: [1] } }),
  };
}

describe('histories beside the message', () => {
  it('detaches every catch-up and replay history into one buffer and attaches them back as they were', () => {
    const task: WorkTask = {
      groups: [
        { org: 'o1', version: 1, users: [user('a', bytes(100_000, 1)), user('b'), user('c', bytes(0, 0))] },
        { org: 'o2', version: 2, users: [user('d', bytes(7, 2))] },
      ],
      replays: [{ org: 'o1', version: 1, items: [{ source: null, events: { bytes: bytes(4, 3), count: 2 }, ctx: EMPTY_CONTEXT_DATA }] }],
    };
    const { task: sent, histories } = detachHistories(task);
    expect(histories.byteLength).toBe(100_011);
    // The message carries where each history is, not its bytes; it crosses as msgpack like any task.
    const message = packMessage(sent);
    expect(message.byteLength).toBeLessThan(2_000);
    const back = attachHistories(unpackMessage<WorkTask>(message), histories);
    expect(back.groups[0]?.users[0]?.catchup?.events).toEqual({ count: 100_000, bytes: bytes(100_000, 1) });
    expect(back.groups[0]?.users[1]?.catchup).toBeUndefined();
    expect(back.groups[0]?.users[2]?.catchup?.events).toEqual({ count: 0, bytes: bytes(0, 0) });
    expect(back.groups[1]?.users[0]?.catchup?.events).toEqual({ count: 7, bytes: bytes(7, 2) });
    expect(back.groups[1]?.users[0]?.catchup?.source).toEqual(bytes(3, 9));
    expect(back.replays?.[0]?.items[0]?.events).toEqual({ count: 2, bytes: bytes(4, 3) });
    // The task itself is not changed by detaching it.
    expect(task.groups[0]?.users[0]?.catchup?.events.bytes).toEqual(bytes(100_000, 1));
  });

  it('leaves a task without histories as it is', () => {
    const task: WorkTask = { groups: [{ org: 'o1', version: 1, users: [user('a')] }], drops: ['k'] };
    const { task: sent, histories } = detachHistories(task);
    expect(sent).toBe(task);
    expect(histories.byteLength).toBe(0);
    expect(attachHistories(task, histories)).toBe(task);
  });
});
