// The partition owners (server/ingest/README.md): `threads` piscina workers, each a pool of ONE thread so that a
// partition's tasks always reach the same thread and its users' decoded states stay resident there (owner =
// partition mod threads), or the main thread itself (threads = 0). Every owner runs work.ts; the worker file is the
// compiled dist/server/ingest/worker/worker.js (Node cannot load .ts sources).

import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { PlanCache, runWork, type Residents, type WorkReply, type WorkTask } from './work.js';
import { DECODED_STATES, ResidentStates } from './resident-states.js';
import { packMessage, unpackMessage } from './messages.js';
import { detachHistories, type SentTask } from './histories.js';
import type { HeapCompaction } from '../../heap-compaction.js';

/** A task that asks an owner thread to compact its heap if fragmented (worker.ts; server/heap-compaction.ts). */
export interface CompactHeapTask {
  readonly compactHeap: true;
  /** compactIfFragmented's `settle`. */
  readonly settle: boolean;
}

export interface Executor {
  /** How many owners there are (at least one: the main thread with threads = 0). */
  readonly owners: number;
  /** The owner of a partition. */
  ownerOf(partition: number): number;
  /**
   * Runs a task on one owner, in the order tasks were given to it. Tasks with resident users must name their owner;
   * replays alone may go anywhere (undefined: the next owner in turn).
   */
  run(task: WorkTask, owner?: number): Promise<WorkReply>;
  /** Each owner thread's heap compacted if fragmented, one after another (none without owner threads). */
  compactHeaps(settle: boolean): Promise<ReadonlyArray<HeapCompaction | undefined>>;
  /** Forgets the compiled plans of an organization (the inline cache; workers re-request by version). */
  dropPlans(org: string): void;
  close(): Promise<void>;
}

/** `decodedStates`: how many states each owner keeps decoded (resident-states.ts; the others it keeps packed). */
export function createExecutor(threads: number, decodedStates: number = DECODED_STATES): Executor {
  return threads >= 1 ? new PoolExecutor(threads, decodedStates) : new InlineExecutor(decodedStates);
}

class InlineExecutor implements Executor {
  readonly owners = 1;
  private readonly plans = new PlanCache();
  private readonly residents: Residents;

  constructor(decodedStates: number) {
    this.residents = new ResidentStates(decodedStates);
  }

  ownerOf(): number {
    return 0;
  }

  async run(task: WorkTask): Promise<WorkReply> {
    return runWork(task, this.plans, this.residents);
  }

  async compactHeaps(): Promise<ReadonlyArray<HeapCompaction | undefined>> {
    return []; // the owner is the main thread: its heap is the caller's to compact
  }

  dropPlans(org: string): void {
    this.plans.drop(org);
  }

  async close(): Promise<void> {
    this.residents.clear();
  }
}

/**
 * Tasks posted to an owner before it has answered the ones before them (piscina's `concurrentTasksPerWorker`): a
 * group's tasks (several when heavy with catch-ups, tick/compute.ts) reach the owner at once and it runs them one
 * after another (worker.ts keeps their order), instead of waiting, after each answer, for the main thread's event
 * loop to read it and post the next. Piscina then posts them in the order given (`stricterFIFO`: by default a task it
 * cannot post yet goes back to the end of its queue).
 */
export const TASKS_POSTED = 16;

class PoolExecutor implements Executor {
  private readonly pools: Piscina[];
  private turn = 0;

  constructor(threads: number, decodedStates: number) {
    const filename = workerFilename();
    const workerData = { decodedStates };
    this.pools = Array.from({ length: threads }, () => new Piscina({ filename, minThreads: 1, maxThreads: 1, idleTimeout: Infinity, concurrentTasksPerWorker: TASKS_POSTED, stricterFIFO: true, workerData }));
  }

  get owners(): number {
    return this.pools.length;
  }

  ownerOf(partition: number): number {
    return partition % this.pools.length;
  }

  async run(task: WorkTask, owner?: number): Promise<WorkReply> {
    const index = owner ?? this.turn++ % this.pools.length;
    // One transferred buffer each way (messages.ts): cheaper for the main thread than cloning the objects; the
    // task's histories in a second one beside it (histories.ts).
    const { task: sent, histories } = detachHistories(task);
    const message = packMessage(sent);
    const transferList = [message.buffer as ArrayBuffer, ...(histories.byteLength > 0 ? [histories.buffer as ArrayBuffer] : [])];
    const reply = (await (this.pools[index] as Piscina).run({ message, histories } satisfies SentTask, { transferList })) as Uint8Array;
    return unpackMessage<WorkReply>(reply);
  }

  async compactHeaps(settle: boolean): Promise<ReadonlyArray<HeapCompaction | undefined>> {
    const done: Array<HeapCompaction | undefined> = [];
    // One at a time: a compaction pauses its owner; two at once would take both cores from whatever arrives.
    for (const pool of this.pools) done.push((await pool.run({ compactHeap: true, settle } satisfies CompactHeapTask)) as HeapCompaction | undefined);
    return done;
  }

  dropPlans(): void {}

  async close(): Promise<void> {
    await Promise.all(this.pools.map((pool) => pool.destroy()));
  }
}

let chosenWorkerFile: string | undefined;

/** The single executable (cli/package) writes its bundled worker file out and names it here before any pool starts. */
export function setWorkerFilename(path: string): void {
  chosenWorkerFile = path;
}

/**
 * The worker's compiled file: the sibling worker.js when running from dist/, else (TypeScript sources under vitest)
 * dist/server/ingest/worker/worker.js of the project, which `npm run build` produces.
 */
export function workerFilename(): string {
  if (chosenWorkerFile !== undefined) return chosenWorkerFile;
  const sibling = fileURLToPath(new URL('./worker.js', import.meta.url));
  if (existsSync(sibling)) return sibling;
  const built = fileURLToPath(new URL('../../../dist/server/ingest/worker/worker.js', import.meta.url));
  if (existsSync(built)) return built;
  throw new Error(`the ingest worker is not built: run \`npm run build\` (looked for ${sibling} and ${built})`);
}
