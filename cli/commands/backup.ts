// `audience backup` and `audience restore` (operations.md, second round). `backup` against a running server
// (`--url`, a root admin key) asks it for a snapshot-consistent copy (POST /admin/v1/backups) and, with `--out`,
// copies the file it wrote (the server's data directory is on this machine); `backup --data DIR --out FILE` copies a
// stopped server's directory. `restore FILE --data DIR` fills an empty data directory from a backup.

import { copyFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { CliError, type CliIo } from '../io.js';
import { clientFor } from '../client.js';
import { CONNECTION_HELP, printResult } from '../format.js';
import { restoreBackup, writeBackup } from '../../server/backup.js';
import { openLevelStore } from '../../server/store/level.js';

interface BackupAnswer {
  file: string;
  keys: number;
  bytes: number;
  started_at?: string;
}

export function registerBackupCommands(program: Command, io: CliIo): void {
  program
    .command('backup')
    .description("copy the whole store: a running server's (consistent while it serves) or a stopped one's (--data)")
    .option('--out <file>', 'where to write the backup (required with --data)')
    .option('--data <dir>', "a stopped server's data directory, read offline")
    .addHelpText('after', CONNECTION_HELP + '\nExample:\n  $ audience backup --out audience.backup\n  $ audience backup --data ./data --out audience.backup')
    .action(async (options: { out?: string; data?: string }, command: Command) => {
      let answer: BackupAnswer;
      if (options.data !== undefined) {
        if (options.out === undefined) throw new CliError('--out is required with --data', 2);
        const store = await openLevelStore(options.data).catch((error: unknown) => {
          throw new CliError(error instanceof Error ? error.message : String(error));
        });
        try {
          answer = await writeBackup(store, options.out);
        } finally {
          await store.close();
        }
      } else {
        answer = await clientFor(command, io).request<BackupAnswer>('POST', '/admin/v1/backups');
        if (options.out !== undefined) {
          await copyFile(answer.file, options.out).catch((error: unknown) => {
            throw new CliError(`the server wrote ${answer.file}, which cannot be copied from here: ${error instanceof Error ? error.message : String(error)}`);
          });
          answer = { ...answer, file: options.out };
        }
      }
      printResult(io, command, answer, () => `backup of ${answer.keys} keys (${answer.bytes} bytes) in ${answer.file}\n`);
    });

  program
    .command('restore')
    .description('fill an empty data directory from a backup (then serve it)')
    .argument('<file>', 'a file written by `audience backup`')
    .requiredOption('--data <dir>', 'an empty (or new) data directory')
    .addHelpText('after', '\nExample:\n  $ audience restore audience.backup --data ./restored && audience serve --data ./restored')
    .action(async (file: string, options: { data: string }, command: Command) => {
      const keys = await restoreBackup(file, options.data).catch((error: unknown) => {
        throw new CliError(error instanceof Error ? error.message : String(error));
      });
      printResult(io, command, { keys, data: options.data }, () => `restored ${keys} keys into ${options.data}\n`);
    });
}
