// `audience keys create|list|revoke` over the admin API (operations.md). A created key is printed once: the server
// stores only its hash (D5).

import { randomUUID } from 'node:crypto';
import type { Command } from 'commander';
import { withOfflineTenancy } from '../../server/bootstrap.js';
import type { Tenancy } from '../../server/domain/tenancy/index.js';
import { ServiceError } from '../../server/errors.js';
import { CliError, type CliIo } from '../io.js';
import { clientFor } from '../client.js';
import { CONNECTION_HELP, formatFields, formatTable, printResult } from '../format.js';
import { segment } from './args.js';

interface KeyInfoWire {
  id: string;
  type: 'public' | 'private';
  name: string | null;
  workspace_id: string;
  access: 'workspace' | 'descendants';
  created_at: string;
}

interface CreatedKeyWire extends KeyInfoWire {
  key: string;
}

interface CreateOptions {
  workspace: string;
  type: string;
  name?: string;
  access?: string;
  data?: string;
}

/** Offline work on a stopped server's data directory; a held lock or a missing directory is one line, exit 1. */
async function offline<T>(dir: string, work: (tenancy: Tenancy) => Promise<T>): Promise<T> {
  try {
    return await withOfflineTenancy(dir, work);
  } catch (error) {
    if (error instanceof ServiceError) throw new CliError(`${error.message}${error.detail === undefined ? '' : `: ${error.detail}`}`);
    throw new CliError(error instanceof Error ? error.message : String(error));
  }
}

export function registerKeysCommand(program: Command, io: CliIo): void {
  const keys = program
    .command('keys')
    .description('create, list and revoke API keys (needs a private key with descendants access)')
    .addHelpText('after', CONNECTION_HELP + '\nExample:\n  $ audience keys create --workspace 5f0c...e1 --type public --name "web site"\n  $ audience keys list');

  keys
    .command('create')
    .description('create an API key; the key is printed once (only its hash is stored, D5)')
    .requiredOption('--workspace <id>', 'workspace the key belongs to')
    .requiredOption('--type <type>', 'public (sites, apps) or private (servers, HTTPS only, D7)')
    .option('--name <name>', 'a name to recognise the key by')
    .option('--access <level>', 'workspace (default) or descendants (reaches workspaces below, D8)')
    .option('--data <dir>', "work offline on a stopped server's data directory (the way back when every key is lost)")
    .addHelpText(
      'after',
      CONNECTION_HELP + '\nExample:\n  $ audience keys create --workspace 5f0c...e1 --type private --access descendants --name ci --json',
    )
    .action(async (options: CreateOptions, command: Command) => {
      if (options.type !== 'public' && options.type !== 'private') throw new CliError(`--type must be public or private, not "${options.type}"`, 2);
      if (options.access !== undefined && options.access !== 'workspace' && options.access !== 'descendants') {
        throw new CliError(`--access must be workspace or descendants, not "${options.access}"`, 2);
      }
      const created: CreatedKeyWire =
        options.data !== undefined
          ? await offline(options.data, (tenancy) =>
              tenancy.createKey({ workspaceId: options.workspace, type: options.type as 'public' | 'private', name: options.name, access: options.access as 'workspace' | 'descendants' | undefined, now: new Date(), newId: randomUUID, newKey: randomUUID }),
            )
          : await clientFor(command, io).request<CreatedKeyWire>('POST', '/admin/v1/keys', {
              body: { workspace_id: options.workspace, type: options.type, name: options.name, access: options.access },
            });
      printResult(io, command, created, () =>
        formatFields([
          ['key', created.key],
          ['id', created.id],
          ['type', created.type],
          ['access', created.access],
          ['name', created.name],
          ['workspace', created.workspace_id],
        ]) + 'The key is shown once; only its hash is stored.\n',
      );
    });

  keys
    .command('list')
    .description('list the keys of the workspaces the key administers (never the key values)')
    .option('--data <dir>', "list every key of a stopped server's data directory, offline")
    .addHelpText('after', CONNECTION_HELP + '\nExample:\n  $ audience keys list\n  $ audience keys list --data ./data --json')
    .action(async (options: { data?: string }, command: Command) => {
      const list: KeyInfoWire[] =
        options.data !== undefined
          ? await offline(options.data, async (tenancy) => tenancy.allKeys())
          : await clientFor(command, io).request<KeyInfoWire[]>('GET', '/admin/v1/keys');
      printResult(io, command, list, () =>
        formatTable(list, [
          { header: 'ID', value: (key) => key.id },
          { header: 'TYPE', value: (key) => key.type },
          { header: 'ACCESS', value: (key) => key.access },
          { header: 'WORKSPACE', value: (key) => key.workspace_id },
          { header: 'CREATED', value: (key) => key.created_at },
          { header: 'NAME', value: (key) => key.name },
        ]),
      );
    });

  keys
    .command('revoke')
    .description('delete a key by its id; it stops working at once')
    .argument('<id>', 'id of the key (from `audience keys list`, not the key itself)')
    .addHelpText('after', CONNECTION_HELP + '\nExample:\n  $ audience keys revoke 9b1d...77')
    .action(async (id: string, _options: unknown, command: Command) => {
      const revoked = await clientFor(command, io).request<KeyInfoWire>('DELETE', `/admin/v1/keys/${segment(id)}`);
      printResult(io, command, revoked, () => `revoked key ${revoked.id}\n`);
    });
}
