// The piscina worker entry of a partition owner: runs its tasks (work.ts) with this thread's plan cache and the
// states it keeps resident (resident-states.ts); tasks and replies cross as one transferred msgpack buffer (messages.ts). Loaded from dist/
// (see executor.ts).

import { Piscina } from 'piscina';
import { OWNER_THREAD_NAME, nameThisThread } from './thread-name.js';
import type { PlanCache, Residents, WorkTask } from './work.js';
import type { SentTask } from './histories.js';
import type { CompactHeapTask } from './executor.js';

nameThisThread(OWNER_THREAD_NAME);

// The engine is imported on the first task, not statically: piscina may `require` this file first, and a module
// that fails to load would then surface as an opaque loader assertion instead of the task's own error.
let work: Promise<typeof import('./work.js')> | undefined;
let messages: Promise<typeof import('./messages.js')> | undefined;
let histories: Promise<typeof import('./histories.js')> | undefined;
let plans: PlanCache | undefined;
let residents: Residents | undefined;

/** The task before this one: tasks run one at a time, in the order they arrived (the pool posts several at once). */
let previous: Promise<unknown> = Promise.resolve();

/**
 * Runs `sent` after the tasks that arrived before it. The pool posts an owner several tasks at once (executor.ts
 * `TASKS_POSTED`), so that the owner starts the next as soon as it has answered one, not once the main thread has
 * read that answer; their order is kept here (a task's awaits would otherwise let the next one's start interleave).
 */
export default function runTask(sent: SentTask | CompactHeapTask): Promise<unknown> {
  const run = previous.then(() => ('compactHeap' in sent ? compactOwnHeap(sent.settle) : runOne(sent)));
  previous = run.catch(() => undefined);
  return run;
}

/** This owner's heap, where its decoded states live, compacted if fragmented (server/heap-compaction.ts). */
async function compactOwnHeap(settle: boolean): Promise<unknown> {
  return (await import('../../heap-compaction.js')).compactIfFragmented(settle);
}

async function runOne(sent: SentTask): Promise<unknown> {
  work ??= import('./work.js');
  const { PlanCache, runWork } = await work;
  const { packMessage, unpackMessage } = await (messages ??= import('./messages.js'));
  plans ??= new PlanCache();
  residents ??= new (await import('./resident-states.js')).ResidentStates((Piscina.workerData as { decodedStates?: number } | undefined)?.decodedStates);
  const { attachHistories } = await (histories ??= import('./histories.js'));
  const reply = runWork(attachHistories(unpackMessage<WorkTask>(sent.message), sent.histories), plans, residents);
  const packed = packMessage(reply);
  return Piscina.move(packed);
}
