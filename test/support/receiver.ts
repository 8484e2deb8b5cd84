// A real webhook receiver for the reactions tests (D37): an HTTP server on an ephemeral port that records every
// request (headers and raw body) and answers with the statuses it is told to give, in order (then 200).

import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { waitUntil } from './wait.js';

export interface Received {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly raw: string;
  readonly body: any;
  /** The status this request was answered with. */
  readonly answered: number;
}

export interface Receiver {
  readonly url: string;
  readonly received: Received[];
  /** The next requests are answered with these statuses, in order (afterwards 200). */
  answerNext(...statuses: number[]): void;
  /** Forgets the statuses still queued: 200 from now on. */
  clearAnswers(): void;
  /** Waits until `check` holds over the received requests (bounded). */
  until(check: (received: readonly Received[]) => boolean, what: string, limitMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  const queue: number[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const status = queue.shift() ?? 200;
      let body: unknown;
      try {
        body = JSON.parse(raw);
      } catch {
        body = undefined;
      }
      received.push({ path: req.url ?? '', headers: req.headers, raw, body, answered: status });
      res.writeHead(status, { 'Content-Type': 'text/plain' }).end(status < 300 ? 'ok' : 'no');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    answerNext: (...statuses) => queue.push(...statuses),
    clearAnswers: () => {
      queue.length = 0;
    },
    until: (check, what, limitMs = 20_000) => waitUntil(() => check(received), `${what} at the receiver`, limitMs),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
