// The CLI's view of the outside world: output streams, files, stdin and the environment. Tests pass a fake;
// bin.ts passes the process. Commands fail by throwing CliError with the exit code the contract names.

import { readFile } from 'node:fs/promises';
import { safeWriter } from '../server/log.js';

export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  readFile(path: string): Promise<string>;
  readStdin(): Promise<string>;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Whether stdout is a terminal (progress bars, colours). */
  readonly isTTY: boolean;
}

/** A failure with the exit code of operations.md: 1 for an error, 2 for bad usage. */
export class CliError extends Error {
  readonly exitCode: 1 | 2;

  constructor(message: string, exitCode: 1 | 2 = 1) {
    super(message);
    this.name = 'CliError';
    this.exitCode = exitCode;
  }
}

export function processIo(): CliIo {
  // A failed write (EPIPE, ENOSPC on a full disk) is dropped: it never ends the process.
  return {
    stdout: safeWriter(process.stdout),
    stderr: safeWriter(process.stderr),
    readFile: (path) => readFile(path, 'utf8'),
    readStdin: async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    },
    env: process.env,
    isTTY: Boolean(process.stdout.isTTY),
  };
}
