// The `audience` program: buildProgram(io) assembles the commander tree, runCli maps outcomes to exit codes
// (0 success, 1 error with one line on stderr, 2 usage error with help), as operations.md requires.

import { Command, CommanderError } from 'commander';
import { packageVersion } from '../server/version.js';
import { CliError, type CliIo } from './io.js';
import { HttpError } from './client.js';
import { registerInitCommand } from './commands/init.js';
import { registerServeCommand } from './commands/serve.js';
import { registerEvalCommand } from './commands/eval.js';
import { registerWorkspacesCommand } from './commands/workspaces.js';
import { registerKeysCommand } from './commands/keys.js';
import { registerCohortsCommand } from './commands/cohorts.js';
import { registerImportsCommand } from './commands/imports/index.js';
import { registerReactionsCommand } from './commands/reactions.js';
import { registerStreamCommand } from './commands/stream.js';
import { registerBackupCommands } from './commands/backup.js';

export function buildProgram(io: CliIo): Command {
  const program = new Command('audience')
    .description('Real-time audience data platform: serve the API, administer it, evaluate queries offline.')
    .option('--url <url>', 'server address (env AUDIENCE_URL)', io.env['AUDIENCE_URL'] ?? 'http://127.0.0.1:8080')
    // No default from the environment here: commander prints defaults in --help, and the key is a secret.
    .option('--key <key>', 'API key (env AUDIENCE_KEY)')
    .option('--json', 'machine-readable output')
    .version(packageVersion(), '-V, --version', 'print the version')
    .addHelpText('after', '\nExample:\n  $ audience serve --data ./data\n  $ audience init --data ./data --json');
  configureForIo(program, io);
  registerInitCommand(program, io);
  registerServeCommand(program, io);
  registerEvalCommand(program, io);
  registerWorkspacesCommand(program, io);
  registerKeysCommand(program, io);
  registerCohortsCommand(program, io);
  registerImportsCommand(program, io);
  registerReactionsCommand(program, io);
  registerStreamCommand(program, io);
  registerBackupCommands(program, io);
  return program;
}

/** Applies io-bound output and exit handling to a command; subcommands inherit it when created with .command(). */
function configureForIo(command: Command, io: CliIo): void {
  command
    .exitOverride()
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({ writeOut: (text) => io.stdout(text), writeErr: (text) => io.stderr(text) });
}

const HELP_CODES = new Set(['commander.helpDisplayed', 'commander.help', 'commander.version']);

/** A CLI error as JSON: the message, and for an HTTP error its status, code, cause and request id. */
function errorObject(error: CliError): Record<string, unknown> {
  if (!(error instanceof HttpError)) return { message: error.message, exit_code: error.exitCode };
  return {
    message: error.serverMessage,
    status: error.status,
    ...(error.code === undefined ? {} : { code: error.code }),
    ...(error.detail === undefined ? {} : { cause: error.detail }),
    ...(error.requestId === undefined ? {} : { request_id: error.requestId }),
  };
}

/** Runs the program on argv (without node and script) and answers the exit code; never throws. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const program = buildProgram(io);
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) return HELP_CODES.has(error.code) ? 0 : 2;
    // Under --json an error is one JSON object on stderr (scripts parse it); otherwise one line for people.
    const json = argv.includes('--json');
    if (error instanceof CliError) {
      if (json) {
        io.stderr(`${JSON.stringify({ error: errorObject(error) })}\n`);
        return error.exitCode;
      }
      if (error.exitCode === 2) {
        io.stderr(`error: ${error.message}\n(run with --help for usage)\n`);
        return 2;
      }
      io.stderr(`error: ${error.message}\n`);
      return 1;
    }
    const message = (error instanceof Error ? error.message : String(error)).split('\n')[0] as string;
    io.stderr(json ? `${JSON.stringify({ error: { message } })}\n` : `error: ${message}\n`);
    return 1;
  }
}
