// The piscina worker entry of a partition owner: runs its tasks (work.ts) with this thread's plan cache and the
// decoded states it keeps resident, and transfers encoded snapshots back instead of copying them. Loaded from dist/
// (see executor.ts).

import { Piscina } from 'piscina';
import type { PlanCache, Residents, WorkReply, WorkTask } from './work.js';

// The engine is imported on the first task, not statically: piscina may `require` this file first, and a module
// that fails to load would then surface as an opaque loader assertion instead of the task's own error.
let work: Promise<typeof import('./work.js')> | undefined;
let plans: PlanCache | undefined;
const residents: Residents = new Map();

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
  const reply = runWork(task, plans, residents);
  if (reply.needPlan === true || reply.lost !== undefined) return reply;
  const buffers = new Set<ArrayBufferLike>();
  const move = (bytes: Uint8Array | null | undefined): void => {
    // encodeState answers a copy in its own buffer, so moving the whole buffer moves nothing else.
    if (bytes != null && bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength) buffers.add(bytes.buffer);
  };
  for (const results of reply.groups) for (const result of results) move(result.state);
  for (const results of reply.replays ?? []) for (const result of results) move(result.state);
  for (const bytes of reply.snapshots ?? []) move(bytes);
  return buffers.size === 0 ? reply : Piscina.move(new MovedReply(reply, [...buffers]) as never);
}
