// Driving the real binary over HTTP for the crash tests (crash.test.ts, crash-resident.test.ts): start `audience
// serve` on a data directory (killed with SIGKILL at cleanup if still running), its listening address, and a JSON
// call through a keep-alive agent.

import { Agent, request as httpRequest } from 'node:http';
import { expect } from 'vitest';
import { startCli, type RunningCli } from '../support/processes.js';

export interface Answer {
  readonly status: number;
  readonly body: any;
}

export interface WireEvent {
  id: string;
  user_id: string;
  name: string;
  time: string;
  properties: Record<string, unknown>;
}

/** `audience serve` on `data` with extra flags; `cleanups` gets its SIGKILL. */
export function serve(data: string, cleanups: Array<() => Promise<unknown>>, flags: readonly string[] = []): RunningCli {
  const running = startCli(['serve', '--data', data, '--port', '0', ...flags]);
  cleanups.push(async () => {
    if (running.child.exitCode === null && running.child.signalCode === null) {
      running.child.kill('SIGKILL');
      await running.exited;
    }
  });
  return running;
}

export async function listeningUrl(running: RunningCli): Promise<URL> {
  const match = await running.waitFor(/listening on (http:\/\/\S+)/);
  return new URL(match[1] as string);
}

export function call(agent: Agent, base: URL, method: string, path: string, key: string, body?: unknown): Promise<Answer> {
  const payload = body === undefined ? '' : JSON.stringify(body);
  const separator = path.includes('?') ? '&' : '?';
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: base.hostname,
        port: base.port,
        method,
        path: `${path}${separator}k=${key}`,
        agent,
        headers: { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(payload)) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, body: text === '' ? undefined : JSON.parse(text) });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}


export interface StreamUntilKill {
  readonly agent: Agent;
  readonly url: URL;
  readonly key: string;
  /** The server to SIGKILL once `acksBeforeKill` calls were acknowledged. */
  readonly server: RunningCli;
  readonly concurrency: number;
  readonly acksBeforeKill: number;
  /** The track body of the index-th call (its `id` names the acknowledgement). */
  body(index: number): { readonly id: string } & Record<string, unknown>;
}

export interface StreamOutcome {
  /** Acknowledged records by event id. */
  readonly acknowledged: Map<string, WireEvent>;
  /** Calls started. */
  readonly calls: number;
  /** Calls in flight when the kill was sent, besides the one whose answer triggered it. */
  readonly inFlightAtKill: number;
}

/**
 * Streams track calls from `concurrency` loops and SIGKILLs the server right after the `acksBeforeKill`-th
 * acknowledgement while others are in flight; only calls cut off by the kill may fail. Bounded in count: the loops
 * stop at four times `acksBeforeKill` calls if the kill never comes.
 */
export async function streamUntilKill(options: StreamUntilKill): Promise<StreamOutcome> {
  const acknowledged = new Map<string, WireEvent>();
  let next = 0;
  let killed = false;
  let inFlight = 0;
  let inFlightAtKill = 0;
  const stream = async (): Promise<void> => {
    while (!killed && next < options.acksBeforeKill * 4) {
      const body = options.body(next++);
      inFlight++;
      try {
        const answer = await call(options.agent, options.url, 'POST', '/v2.0/events', options.key, body);
        expect(answer.status).toBe(200);
        acknowledged.set(body.id, answer.body as WireEvent);
        if (acknowledged.size === options.acksBeforeKill && !killed) {
          killed = true;
          inFlightAtKill = inFlight - 1;
          options.server.child.kill('SIGKILL');
        }
      } catch (error) {
        if (!killed) throw error; // only requests cut off by the kill may fail
      } finally {
        inFlight--;
      }
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, stream));
  return { acknowledged, calls: next, inFlightAtKill };
}
