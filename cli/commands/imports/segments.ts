// `audience imports segments create|list|update|delete`: the taxonomy of an import's segments (spec, D26).
// The list follows `pagination.next_token` to the end.

import type { Command } from 'commander';
import { CliError, type CliIo } from '../../io.js';
import { clientFor, type ApiClient } from '../../client.js';
import { CONNECTION_HELP, formatFields, formatTable, printResult } from '../../format.js';
import { parseList, parseNonNegative, segment } from '../args.js';

interface SegmentWire {
  id: string;
  code: string;
  name: string;
  import_id?: string;
  importId?: string;
  description?: string | null;
  cpm?: number | null;
  categories?: string[];
  updated_at?: string;
  updatedAt?: string;
}

interface SegmentPageWire {
  elements: SegmentWire[];
  pagination?: { next_token?: string; total_count?: number };
}

interface SegmentFieldOptions {
  name?: string;
  description?: string;
  cpm?: string;
  categories?: string;
}

export function registerSegmentsCommand(imports: Command, io: CliIo): void {
  const segments = imports
    .command('segments')
    .description('create, list, update and delete the segments of an import (D26)')
    .addHelpText('after', CONNECTION_HELP + '\nExample:\n  $ audience imports segments create 7c2e...10 --name Sports --code sports --cpm 1.5\n  $ audience imports segments list 7c2e...10');

  segments
    .command('create')
    .description('create a segment in an import; its code never changes')
    .argument('<import>', 'import id (UUID)')
    .requiredOption('--name <name>', 'name of the segment')
    .requiredOption('--code <code>', 'code of the segment, unique within the import (queries name it)')
    .option('--cpm <number>', 'cost per mille, a number >= 0')
    .option('--description <text>', 'a description')
    .option('--categories <list>', 'comma-separated categories')
    .addHelpText('after', CONNECTION_HELP + '\nExample:\n  $ audience imports segments create 7c2e...10 --name "Sports fans" --code sports --cpm 1.5 --categories sports,leisure')
    .action(async (importId: string, options: SegmentFieldOptions & { name: string; code: string }, command: Command) => {
      const body = { code: options.code, ...segmentFields(options) };
      const created = await clientFor(command, io).request<SegmentWire>('POST', `${segmentsPath(importId)}`, { body });
      printResult(io, command, created, () => `created segment ${created.id} (code ${created.code})\n`);
    });

  segments
    .command('list')
    .description('list every segment of an import (all pages)')
    .argument('<import>', 'import id (UUID)')
    .addHelpText('after', CONNECTION_HELP + '\nExample:\n  $ audience imports segments list 7c2e...10\n  $ audience imports segments list 7c2e...10 --json | jq length')
    .action(async (importId: string, _options: unknown, command: Command) => {
      const list = await listAllSegments(clientFor(command, io), importId);
      printResult(io, command, list, () =>
        formatTable(list, [
          { header: 'ID', value: (s) => s.id },
          { header: 'CODE', value: (s) => s.code },
          { header: 'CPM', value: (s) => s.cpm },
          { header: 'CATEGORIES', value: (s) => s.categories },
          { header: 'UPDATED', value: (s) => s.updated_at ?? s.updatedAt },
          { header: 'NAME', value: (s) => s.name },
        ]),
      );
    });

  segments
    .command('update')
    .description('change the segment with code CODE; fields not given stay unchanged')
    .argument('<import>', 'import id (UUID)')
    .argument('<code>', 'segment code')
    .option('--name <name>', 'new name')
    .option('--description <text>', 'new description')
    .option('--cpm <number>', 'new cost per mille, a number >= 0')
    .option('--categories <list>', 'new comma-separated categories ("" clears them)')
    .addHelpText('after', CONNECTION_HELP + '\nExample:\n  $ audience imports segments update 7c2e...10 sports --cpm 2 --categories sports')
    .action(async (importId: string, code: string, options: SegmentFieldOptions, command: Command) => {
      const body = segmentFields(options);
      if (Object.keys(body).length === 0) throw new CliError('nothing to update: give --name, --description, --cpm or --categories', 2);
      const updated = await clientFor(command, io).request<SegmentWire>('PATCH', `${segmentsPath(importId)}/code/${segment(code)}`, { body });
      printResult(io, command, updated, () => `updated segment ${updated.id} (code ${updated.code})\n`);
    });

  segments
    .command('delete')
    .description('delete a segment by its id, with its memberships')
    .argument('<import>', 'import id (UUID)')
    .argument('<segment-id>', 'segment id (UUID, from `imports segments list`)')
    .addHelpText('after', CONNECTION_HELP + '\nExample:\n  $ audience imports segments delete 7c2e...10 0a9f...4c')
    .action(async (importId: string, segmentId: string, _options: unknown, command: Command) => {
      const deleted = await clientFor(command, io).request<SegmentWire>('DELETE', `${segmentsPath(importId)}/${segment(segmentId)}`);
      printResult(io, command, deleted, () =>
        formatFields([
          ['deleted segment', deleted.id],
          ['code', deleted.code],
          ['name', deleted.name],
        ]),
      );
    });
}

/** Follows `pagination.next_token` until the last page (D26). */
export async function listAllSegments(client: ApiClient, importId: string): Promise<SegmentWire[]> {
  const all: SegmentWire[] = [];
  const seen = new Set<string>();
  let token: string | undefined;
  for (;;) {
    const page = await client.request<SegmentPageWire>('GET', segmentsPath(importId), { query: { pagination_token: token } });
    all.push(...(page?.elements ?? []));
    token = page?.pagination?.next_token;
    if (token === undefined || token === '') return all;
    if (seen.has(token)) throw new CliError(`the server repeated the pagination token after ${all.length} segments`);
    seen.add(token);
  }
}

function segmentsPath(importId: string): string {
  return `/audience-api/v1/imports/${segment(importId)}/segments`;
}

function segmentFields(options: SegmentFieldOptions): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (options.name !== undefined) body['name'] = options.name;
  if (options.description !== undefined) body['description'] = options.description;
  if (options.cpm !== undefined) body['cpm'] = parseNonNegative(options.cpm, '--cpm');
  if (options.categories !== undefined) body['categories'] = parseList(options.categories);
  return body;
}
