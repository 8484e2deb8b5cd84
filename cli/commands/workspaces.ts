// `audience workspaces create NAME [--parent ID]` and `audience workspaces list` over the admin API
// (operations.md): a private key with `descendants` access over the target workspace.

import type { Command } from 'commander';
import { CliError, type CliIo } from '../io.js';
import { clientFor, type ApiClient } from '../client.js';
import { CONNECTION_HELP, formatFields, formatTable, printResult } from '../format.js';

export interface WorkspaceWire {
  id: string;
  name: string;
  parent_id: string | null;
  organization_id: string;
  created_at: string;
}

export function registerWorkspacesCommand(program: Command, io: CliIo): void {
  const workspaces = program
    .command('workspaces')
    .description('create and list workspaces (needs a private key with descendants access)')
    .addHelpText('after', CONNECTION_HELP + '\nExample:\n  $ audience workspaces create "Europe" --url https://audience.example.com\n  $ audience workspaces list --json');

  workspaces
    .command('create')
    .description("create a workspace below --parent (default: the key's own workspace)")
    .argument('<name>', 'name of the new workspace')
    .option('--parent <id>', "parent workspace id (default: the key's workspace)")
    .addHelpText('after', CONNECTION_HELP + '\nExample:\n  $ audience workspaces create "Europe"\n  $ audience workspaces create "France" --parent 5f0c...e1 --json')
    .action(async (name: string, options: { parent?: string }, command: Command) => {
      const client = clientFor(command, io);
      const parentId = options.parent ?? (await findKeyWorkspace(client)).id;
      const created = await client.request<WorkspaceWire>('POST', '/admin/v1/workspaces', { body: { name, parent_id: parentId } });
      printResult(io, command, created, () =>
        formatFields([
          ['created workspace', created.id],
          ['name', created.name],
          ['parent', created.parent_id],
          ['organization', created.organization_id],
        ]),
      );
    });

  workspaces
    .command('list')
    .description('list the workspaces the key administers')
    .addHelpText('after', CONNECTION_HELP + '\nExample:\n  $ audience workspaces list\n  $ audience workspaces list --json | jq -r ".[].id"')
    .action(async (_options: unknown, command: Command) => {
      const list = await clientFor(command, io).request<WorkspaceWire[]>('GET', '/admin/v1/workspaces');
      printResult(io, command, list, () =>
        formatTable(list, [
          { header: 'ID', value: (ws) => ws.id },
          { header: 'NAME', value: (ws) => ws.name },
          { header: 'PARENT', value: (ws) => ws.parent_id },
          { header: 'CREATED', value: (ws) => ws.created_at },
        ]),
      );
    });
}

/**
 * The key's own workspace: the root of the workspaces it reaches (the first listed whose parent is not itself
 * listed). The admin API has no "who am I"; the list holds the key's workspace and those below it.
 */
export async function findKeyWorkspace(client: ApiClient): Promise<WorkspaceWire> {
  const list = await client.request<WorkspaceWire[]>('GET', '/admin/v1/workspaces');
  const ids = new Set(list.map((ws) => ws.id));
  const root = list.find((ws) => ws.parent_id === null || !ids.has(ws.parent_id));
  if (root === undefined) throw new CliError('the server listed no workspace for this key; pass --parent ID');
  return root;
}
