// Driving the real binary over HTTP for the crash tests (crash.test.ts, crash-resident.test.ts): start `audience
// serve` on a data directory (killed with SIGKILL at cleanup if still running), its listening address, and a JSON
// call through a keep-alive agent.

import { Agent, request as httpRequest } from 'node:http';
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

