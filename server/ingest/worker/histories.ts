// A task's histories crossing to its owner beside the message, not in it (executor.ts, worker.ts): the stored records
// of the catch-ups and replays (`PackedEvents`, server/backfill/README.md) are most of a backfill task's bytes, and
// inside the msgpack message they were copied into it, searched for `__proto_` keys (messages.ts: they hold none the
// message could confuse; the owner's reader handles the records' own), copied into the transferred buffer, then
// copied out again and searched on the owner. Here they are copied once into one buffer of their own, transferred
// with the message, and the owner reads them as views of it (kept only while the task runs).

import type { PackedEvents } from '../../domain/events/record.js';
import type { WorkTask } from './work.js';

/** What a pool's task is: the message and the histories beside it. */
export interface SentTask {
  readonly message: Uint8Array;
  readonly histories: Uint8Array;
}

/** A history as the message carries it: where its bytes are in the task's histories buffer. */
interface SentHistory {
  readonly count: number;
  readonly at: number;
  readonly length: number;
}

/** The task with every history moved into `histories` (one fresh buffer), each replaced by where it is. */
export function detachHistories(task: WorkTask): { task: WorkTask; histories: Uint8Array } {
  let total = 0;
  for (const group of task.groups) for (const user of group.users) total += user.catchup?.events.bytes.byteLength ?? 0;
  for (const replay of task.replays ?? []) for (const item of replay.items) total += item.events.bytes.byteLength;
  const histories = new Uint8Array(total);
  let at = 0;
  const sent = mapHistories(task, (events) => {
    histories.set(events.bytes, at);
    const where: SentHistory = { count: events.count, at, length: events.bytes.byteLength };
    at += where.length;
    return where as unknown as PackedEvents;
  });
  return { task: sent, histories };
}

/** The task as sent, its histories read back as views of `histories`. */
export function attachHistories(task: WorkTask, histories: Uint8Array): WorkTask {
  return mapHistories(task, (events) => {
    const where = events as unknown as SentHistory;
    return { count: where.count, bytes: histories.subarray(where.at, where.at + where.length) };
  });
}

/** The task with each catch-up's and replay's events mapped (the same objects where there are none). */
function mapHistories(task: WorkTask, map: (events: PackedEvents) => PackedEvents): WorkTask {
  let changed = false;
  const groups = task.groups.map((group) => {
    if (!group.users.some((user) => user.catchup !== undefined)) return group;
    changed = true;
    return { ...group, users: group.users.map((user) => (user.catchup === undefined ? user : { ...user, catchup: { ...user.catchup, events: map(user.catchup.events) } })) };
  });
  const replays = task.replays?.map((replay) => ({ ...replay, items: replay.items.map((item) => ({ ...item, events: map(item.events) })) }));
  if (replays !== undefined && replays.length > 0) changed = true;
  return changed ? { ...task, groups, ...(replays === undefined ? {} : { replays }) } : task;
}
