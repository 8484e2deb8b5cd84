// `audience imports create|list` (D25) and the subcommands of an import: segments (D26), members and rows loads
// (D27). Everything here needs a private key (D6); errors arrive in the taxonomy envelope (D13).

import type { Command } from 'commander';
import { CliError, type CliIo } from '../../io.js';
import { clientFor } from '../../client.js';
import { CONNECTION_HELP, formatTable, printResult } from '../../format.js';
import { parseList, readJsonArgument } from '../args.js';
import { registerSegmentsCommand } from './segments.js';
import { registerMembersCommand, registerRowsCommand } from './loads.js';

interface ImportWire {
  id: string;
  name: string;
  code: string;
  relation: string;
  kind: string;
  identifiers?: string[];
  schema?: Record<string, string>;
  workspace_id?: string;
  created_at?: string;
}

interface CreateOptions {
  name: string;
  code: string;
  relation: string;
  kind: string;
  identifiers?: string;
  schema?: string;
}

const BASE = '/audience-api/v1/imports';

export function registerImportsCommand(program: Command, io: CliIo): void {
  const imports = program
    .command('imports')
    .description('imports of 2nd/3rd-party data: segments, their members, connections rows (needs a private key)')
    .addHelpText(
      'after',
      CONNECTION_HELP + '\nExample:\n  $ audience imports create --name "Acme DMP" --code acme --relation 3rd --kind segments --identifiers email\n' +
        '  $ audience imports members load 7c2e...10 sports members.ndjson',
    );

  imports
    .command('create')
    .description('create an import (D25); its code is the `provider` that queries name')
    .requiredOption('--name <name>', 'name of the import')
    .requiredOption('--code <code>', 'code, unique in the organization')
    .requiredOption('--relation <relation>', '2nd or 3rd (party)')
    .requiredOption('--kind <kind>', 'segments (memberships) or connections (rows)')
    .option('--identifiers <list>', 'comma-separated alias tags the import matches users by')
    .option('--schema <file>', 'connections only: JSON object of property name -> string|number|boolean|date|list')
    .addHelpText(
      'after',
      CONNECTION_HELP + '\nExample:\n  $ audience imports create --name "Acme DMP" --code acme --relation 3rd --kind segments\n' +
        '  $ audience imports create --name CRM --code crm --relation 2nd --kind connections --schema crm-schema.json --json',
    )
    .action(async (options: CreateOptions, command: Command) => {
      if (options.relation !== '2nd' && options.relation !== '3rd') throw new CliError(`--relation must be 2nd or 3rd, not "${options.relation}"`, 2);
      if (options.kind !== 'segments' && options.kind !== 'connections') {
        throw new CliError(`--kind must be segments or connections, not "${options.kind}"`, 2);
      }
      const client = clientFor(command, io);
      const body: Record<string, unknown> = { name: options.name, code: options.code, relation: options.relation, kind: options.kind };
      if (options.identifiers !== undefined) body['identifiers'] = parseList(options.identifiers);
      if (options.schema !== undefined) body['schema'] = await readJsonArgument(io, options.schema, 'schema');
      const created = await client.request<ImportWire>('POST', BASE, { body });
      printResult(io, command, created, () => `created import ${created.id} (code ${created.code})\n`);
    });

  imports
    .command('list')
    .description('list the imports of the organization')
    .addHelpText('after', CONNECTION_HELP + '\nExample:\n  $ audience imports list\n  $ audience imports list --json')
    .action(async (_options: unknown, command: Command) => {
      const answer = await clientFor(command, io).request<ImportWire[] | { elements: ImportWire[] }>('GET', BASE);
      const list = Array.isArray(answer) ? answer : answer.elements;
      printResult(io, command, list, () =>
        formatTable(list, [
          { header: 'ID', value: (i) => i.id },
          { header: 'CODE', value: (i) => i.code },
          { header: 'RELATION', value: (i) => i.relation },
          { header: 'KIND', value: (i) => i.kind },
          { header: 'IDENTIFIERS', value: (i) => i.identifiers },
          { header: 'NAME', value: (i) => i.name },
        ]),
      );
    });

  registerSegmentsCommand(imports, io);
  registerMembersCommand(imports, io);
  registerRowsCommand(imports, io);
}
