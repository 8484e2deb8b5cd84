// Where a tick's compute runs: a piscina pool of `threads` workers, or inline in the main thread (threads = 0).
// Both run work.ts; the worker file is the compiled dist/server/ingest/worker.js (Node cannot load .ts sources).

import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { PlanCache, runWork, type WorkReply, type WorkTask } from './work.js';

export interface Executor {
  run(task: WorkTask): Promise<WorkReply>;
  /** Forgets the compiled plans of an organization (the inline cache; workers re-request by version). */
  dropPlans(org: string): void;
  close(): Promise<void>;
}

export function createExecutor(threads: number): Executor {
  return threads >= 1 ? new PoolExecutor(threads) : new InlineExecutor();
}

class InlineExecutor implements Executor {
  private readonly plans = new PlanCache();

  async run(task: WorkTask): Promise<WorkReply> {
    return runWork(task, this.plans);
  }

  dropPlans(org: string): void {
    this.plans.drop(org);
  }

  async close(): Promise<void> {}
}

class PoolExecutor implements Executor {
  private readonly pool: Piscina;

  constructor(threads: number) {
    this.pool = new Piscina({ filename: workerFilename(), minThreads: threads, maxThreads: threads, idleTimeout: Infinity });
  }

  run(task: WorkTask): Promise<WorkReply> {
    return this.pool.run(task) as Promise<WorkReply>;
  }

  dropPlans(): void {}

  async close(): Promise<void> {
    await this.pool.destroy();
  }
}

/**
 * The worker's compiled file: the sibling worker.js when running from dist/, else (TypeScript sources under vitest)
 * dist/server/ingest/worker.js of the project, which `npm run build` produces.
 */
export function workerFilename(): string {
  const sibling = fileURLToPath(new URL('./worker.js', import.meta.url));
  if (existsSync(sibling)) return sibling;
  const built = fileURLToPath(new URL('../../dist/server/ingest/worker.js', import.meta.url));
  if (existsSync(built)) return built;
  throw new Error(`the ingest worker is not built: run \`npm run build\` (looked for ${sibling} and ${built})`);
}
