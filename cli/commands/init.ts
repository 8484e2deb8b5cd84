// `audience init --data DIR`: creates the organization, a private `descendants` key and a public key (printed once).
// Refuses an initialised directory and changes nothing there (operations.md).

import type { Command } from 'commander';
import { CliError, type CliIo } from '../io.js';
import { initialiseDataDir, type InitResult } from '../../server/bootstrap.js';

export function registerInitCommand(program: Command, io: CliIo): void {
  program
    .command('init')
    .description('create an organization with a private and a public key in a data directory')
    .requiredOption('--data <dir>', 'data directory (created if missing)')
    .option('--org-name <name>', 'name of the organization', 'Default organization')
    .option('--json', 'print exactly one JSON object')
    .addHelpText('after', '\nExample:\n  $ audience init --data ./data --org-name "Acme" --json')
    .action(async (options: { data: string; orgName: string; json?: boolean }, command: Command) => {
      const json = Boolean(options.json ?? command.optsWithGlobals()['json']);
      const result = await initialiseDataDir(options.data, options.orgName);
      if (result === 'already-initialised') {
        throw new CliError(`${options.data} is already initialised; nothing was changed`);
      }
      io.stdout(json ? JSON.stringify(result) + '\n' : describeKeys(result));
    });
}

/** The human form of the first keys, shown once: they are stored only as hashes. */
export function describeKeys(result: InitResult, url = 'http://127.0.0.1:8080'): string {
  const unknownPort = url.endsWith(':PORT');
  return [
    `organization ${result.organization_id} (workspace ${result.workspace_id})`,
    `private key (descendants access; keep it secret): ${result.private_key}`,
    `public key:  ${result.public_key}`,
    'These keys are shown once; only their hashes are stored.',
    `Try: curl -X POST '${url}/v2.0/users?k=${result.public_key}'${unknownPort ? ' (PORT: the one "listening on" names)' : ''}`,
    '',
  ].join('\n');
}

/**
 * The address `serve --host --port` answers on, for the example call printed with the keys (before it listens, so a
 * port of 0, picked at listen time, is written PORT).
 */
export function serveUrl(host: string, port: number, tls: boolean): string {
  const name = host.includes(':') ? `[${host}]` : host;
  return `${tls ? 'https' : 'http'}://${name}:${port === 0 ? 'PORT' : String(port)}`;
}
