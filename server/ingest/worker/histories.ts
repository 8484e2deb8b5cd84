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
  const detach = new Detach(new Uint8Array(total));
  return { task: mapHistories(task, detach), histories: detach.histories };
}

/** The task as sent, its histories read back as views of `histories`. */
export function attachHistories(task: WorkTask, histories: Uint8Array): WorkTask {
  return mapHistories(task, new Attach(histories));
}

/**
 * How mapHistories maps each history. Classes and loops rather than callbacks made per task: closures made per call
 * lose their optimized code at each collection (V8 keeps it only while a closure holding it lives;
 * docs/performance.md).
 */
interface HistoryMap {
  map(events: PackedEvents): PackedEvents;
}

/** Copies each history into `histories`, in order, and answers where it is. */
class Detach implements HistoryMap {
  private at = 0;

  constructor(readonly histories: Uint8Array) {}

  map(events: PackedEvents): PackedEvents {
    this.histories.set(events.bytes, this.at);
    const where: SentHistory = { count: events.count, at: this.at, length: events.bytes.byteLength };
    this.at += where.length;
    return where as unknown as PackedEvents;
  }
}

/** Reads each history back as a view of `histories`. */
class Attach implements HistoryMap {
  constructor(private readonly histories: Uint8Array) {}

  map(events: PackedEvents): PackedEvents {
    const where = events as unknown as SentHistory;
    return { count: where.count, bytes: this.histories.subarray(where.at, where.at + where.length) };
  }
}

/** The task with each catch-up's and replay's events mapped (the same objects where there are none). */
function mapHistories(task: WorkTask, histories: HistoryMap): WorkTask {
  let changed = false;
  const groups: WorkTask['groups'][number][] = [];
  for (const group of task.groups) {
    let users: WorkTask['groups'][number]['users'][number][] | undefined;
    for (let u = 0; u < group.users.length; u++) {
      const user = group.users[u] as WorkTask['groups'][number]['users'][number];
      if (user.catchup === undefined) {
        users?.push(user);
        continue;
      }
      users ??= group.users.slice(0, u);
      users.push({ ...user, catchup: { ...user.catchup, events: histories.map(user.catchup.events) } });
    }
    if (users === undefined) {
      groups.push(group);
      continue;
    }
    changed = true;
    groups.push({ ...group, users });
  }
  let replays: NonNullable<WorkTask['replays']>[number][] | undefined;
  if (task.replays !== undefined) {
    replays = [];
    for (const replay of task.replays) {
      const items: (typeof replay.items)[number][] = [];
      for (const item of replay.items) items.push({ ...item, events: histories.map(item.events) });
      replays.push({ ...replay, items });
    }
    if (replays.length > 0) changed = true;
  }
  return changed ? { ...task, groups, ...(replays === undefined ? {} : { replays }) } : task;
}
