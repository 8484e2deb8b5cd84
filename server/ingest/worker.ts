// The piscina worker entry: runs a partition tick's compute (work.ts) with this thread's plan cache and transfers
// the encoded states back instead of copying them. Loaded from dist/ (see executor.ts).

import { Piscina } from 'piscina';
import type { PlanCache, WorkReply, WorkTask } from './work.js';

// The engine is imported on the first task, not statically: piscina may `require` this file first, and a module
// that fails to load would then surface as an opaque loader assertion instead of the task's own error.
let work: Promise<typeof import('./work.js')> | undefined;
let plans: PlanCache | undefined;

/** A reply whose state buffers move to the main thread (piscina's Transferable protocol). */
class MovedReply {
  constructor(
    private readonly reply: WorkReply,
    private readonly buffers: ArrayBufferLike[],
  ) {}

  get [Piscina.transferableSymbol](): ArrayBufferLike[] {
    return this.buffers;
  }

  get [Piscina.valueSymbol](): WorkReply {
    return this.reply;
  }
}

export default async function runTask(task: WorkTask): Promise<unknown> {
  work ??= import('./work.js');
  const { PlanCache, runWork } = await work;
  plans ??= new PlanCache();
  const reply = runWork(task, plans);
  if (reply.needPlan === true) return reply;
  const buffers = new Set<ArrayBufferLike>();
  for (const results of [...reply.groups, ...(reply.replays ?? [])]) {
    for (const result of results) {
      // encodeState answers a copy in its own buffer, so moving the whole buffer moves nothing else.
      if (result.state.byteOffset === 0 && result.state.byteLength === result.state.buffer.byteLength) buffers.add(result.state.buffer);
    }
  }
  return Piscina.move(new MovedReply(reply, [...buffers]) as never);
}
