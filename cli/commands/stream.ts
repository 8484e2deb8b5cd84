// `audience stream [--cohorts CODES] [--after CURSOR] [--json]`: live cohort entries and exits as lines (D38), over
// the WebSocket of GET /reactions-api/v1/stream (the `ws` client: Node 20 has none built in). Runs until SIGINT or
// SIGTERM (exit 0); the server closing (4410: cursor too old, 4429: reading too slowly) or refusing is exit 1.

import type { Command } from 'commander';
import WebSocket from 'ws';
import { CliError, type CliIo } from '../io.js';
import { clientFor, parseErrorResponse } from '../client.js';
import { CONNECTION_HELP } from '../format.js';

import type { StreamMessage } from '../../server/reactions/stream/hub.js';

const CLOSE_REASONS: Record<number, string> = {
  4410: 'the cursor is older than the transitions the server keeps (start without --after)',
  4429: 'the server dropped this client for reading too slowly',
  1001: 'the server is stopping',
};

export function registerStreamCommand(program: Command, io: CliIo): void {
  program
    .command('stream')
    .description('print live cohort entries and exits as they happen (D38; a private key)')
    .option('--cohorts <codes>', 'only these cohort codes, comma-separated')
    .option('--after <cursor>', 'first replay what happened after this cursor (from an earlier --json line)')
    .addHelpText('after', CONNECTION_HELP + '\nExample:\n  $ audience stream\n  $ audience stream --cohorts 3,7 --json | jq .user_id')
    .action(async (options: { cohorts?: string; after?: string }, command: Command) => {
      const client = clientFor(command, io);
      const json = command.optsWithGlobals<{ json?: boolean }>().json === true;
      const url = new URL(`${client.baseUrl}/reactions-api/v1/stream`);
      url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
      if (options.cohorts !== undefined) url.searchParams.set('cohorts', options.cohorts);
      if (options.after !== undefined) url.searchParams.set('after', options.after);
      await new Promise<void>((resolve, reject) => {
        const socket = new WebSocket(url, { headers: { 'X-API-Key': client.key } });
        let stopping = false;
        const stop = () => {
          stopping = true;
          socket.close(1000);
        };
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
        socket.on('message', (data) => {
          const message = JSON.parse(String(data)) as StreamMessage;
          io.stdout(json ? `${JSON.stringify(message)}\n` : `${message.time} ${message.kind} cohort ${message.cohort.code} user ${message.user_id}\n`);
        });
        socket.on('unexpected-response', (_request, response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => reject(parseErrorResponse(response.statusCode ?? 0, response.statusMessage ?? '', Buffer.concat(chunks).toString('utf8'))));
        });
        socket.on('error', (error) => reject(new CliError(`cannot stream from ${client.baseUrl}: ${error.message}`)));
        socket.on('close', (code) => {
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          if (stopping || code === 1000) resolve();
          else reject(new CliError(`stream closed (${code}): ${CLOSE_REASONS[code] ?? 'the connection ended'}`));
        });
      });
    });
}
