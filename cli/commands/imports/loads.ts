// `audience imports members load IMPORT CODE FILE [--remove]` and `audience imports rows load IMPORT FILE` (D27):
// NDJSON streamed in batches with a progress bar on a TTY; re-running a load changes nothing (resume-safe).

import { createHash } from 'node:crypto';
import type { Command } from 'commander';
import { CliError, type CliIo } from '../../io.js';
import { clientFor } from '../../client.js';
import { CONNECTION_HELP, printResult } from '../../format.js';
import { pace, startProgress } from '../../progress.js';
import { segment } from '../args.js';
import { LineProblem, loadNdjsonInBatches } from './ndjson.js';

/** Lines per request by default; the server takes at most 10 000 references or rows per call. */
export const DEFAULT_BATCH_LINES = 5000;
const MAX_BATCH_LINES = 10_000;
/** Bytes of items per request, well under the default 1 MiB body limit (D2). */
const MAX_BATCH_BYTES = 512 * 1024;

type MemberRef = { user_id: string } | { alias: { tag: string; id: string } };

export function registerMembersCommand(imports: Command, io: CliIo): void {
  const members = imports
    .command('members')
    .description('load users into (or out of) an imported segment (D27)')
    .addHelpText('after', CONNECTION_HELP + '\nExample:\n  $ audience imports members load 7c2e...10 sports members.ndjson');

  members
    .command('load')
    .description('add (or with --remove, remove) the users of an NDJSON file to segment CODE of an import')
    .argument('<import>', 'import id (UUID)')
    .argument('<code>', 'segment code within the import')
    .argument('<file>', 'NDJSON, one user per line: {"user_id": "..."} or {"alias": {"tag": "...", "id": "..."}}')
    .option('--remove', 'remove the listed users from the segment instead of adding them')
    .option('--batch <lines>', `lines per request (1-${MAX_BATCH_LINES})`, String(DEFAULT_BATCH_LINES))
    .addHelpText(
      'after',
      CONNECTION_HELP +
        '\nLoads are idempotent: re-running a file adds nothing new, so an interrupted load is simply run again.\n' +
        '\nExample:\n  $ audience imports members load 7c2e...10 sports members.ndjson\n' +
        '  $ audience imports members load 7c2e...10 sports churned.ndjson --remove --json',
    )
    .action(async (importId: string, code: string, file: string, options: { remove?: boolean; batch: string }, command: Command) => {
      const maxLines = parseBatch(options.batch);
      const client = clientFor(command, io);
      const path = `/audience-api/v1/imports/${segment(importId)}/segments/code/${segment(code)}/members`;
      const field = options.remove ? 'remove' : 'add';
      let added = 0;
      let removed = 0;
      const progress = startProgress(io, 1, options.remove ? 'removing' : 'adding');
      const started = Date.now();
      try {
        const summary = await loadNdjsonInBatches<MemberRef>({
          file,
          maxLines,
          maxBytes: MAX_BATCH_BYTES,
          toItem: readMemberRef,
          send: async (items) => {
            const answer = await client.request<{ added?: unknown; removed?: unknown }>('POST', path, { body: { [field]: items } });
            added += countOf(answer?.added);
            removed += countOf(answer?.removed);
          },
          onProgress: (read, total, lines) => {
            const fraction = total === 0 ? 1 : read / total;
            progress.update(fraction, `${lines} lines, added ${added}, removed ${removed}  ${pace(fraction, lines, started, Date.now())}`);
          },
        });
        progress.finish();
        const result = { added, removed, lines: summary.lines, requests: summary.requests };
        printResult(io, command, result, () => `added ${added}, removed ${removed}, lines ${summary.lines}\n`);
      } finally {
        progress.finish();
      }
    });
}

export function registerRowsCommand(imports: Command, io: CliIo): void {
  const rows = imports
    .command('rows')
    .description('load rows of a connections import (D27)')
    .addHelpText('after', CONNECTION_HELP + '\nExample:\n  $ audience imports rows load 7c2e...10 purchases.ndjson');

  rows
    .command('load')
    .description('load the rows of an NDJSON file into a connections import')
    .argument('<import>', 'import id (UUID) of a connections import')
    .argument('<file>', 'NDJSON, one row per line: {"user_id"|"alias", "time"?, "properties", "id"?}')
    .option('--batch <lines>', `lines per request (1-${MAX_BATCH_LINES})`, String(DEFAULT_BATCH_LINES))
    .addHelpText(
      'after',
      CONNECTION_HELP +
        '\nA row without an "id" gets one derived from its line number and content, so re-running the same file\n' +
        'replaces its rows instead of adding them again (rows without a "time" then take the new load time).\n' +
        '\nExample:\n  $ audience imports rows load 7c2e...10 purchases.ndjson --json',
    )
    .action(async (importId: string, file: string, options: { batch: string }, command: Command) => {
      const maxLines = parseBatch(options.batch);
      const client = clientFor(command, io);
      const path = `/audience-api/v1/imports/${segment(importId)}/rows`;
      let loaded = 0;
      const progress = startProgress(io, 1, 'loading');
      const started = Date.now();
      try {
        const summary = await loadNdjsonInBatches<Record<string, unknown>>({
          file,
          maxLines,
          maxBytes: MAX_BATCH_BYTES,
          toItem: readRow,
          send: async (items) => {
            const answer = await client.request<{ loaded?: unknown }>('POST', path, { body: items });
            loaded += countOf(answer?.loaded);
          },
          onProgress: (read, total, lines) => {
            const fraction = total === 0 ? 1 : read / total;
            progress.update(fraction, `${lines} lines, loaded ${loaded}  ${pace(fraction, lines, started, Date.now())}`);
          },
        });
        progress.finish();
        const result = { loaded, lines: summary.lines, requests: summary.requests };
        printResult(io, command, result, () => `loaded ${loaded}, lines ${summary.lines}\n`);
      } finally {
        progress.finish();
      }
    });
}

/** `{user_id}` or `{alias: {tag, id}}` (D27); other fields of the line are ignored. */
export function readMemberRef(value: unknown): MemberRef {
  if (!isObject(value)) throw new LineProblem('expected a JSON object');
  const hasUser = value['user_id'] !== undefined;
  const hasAlias = value['alias'] !== undefined;
  if (hasUser === hasAlias) throw new LineProblem('expected exactly one of "user_id" or "alias"');
  if (hasUser) {
    const userId = value['user_id'];
    if (typeof userId !== 'string' || userId === '') throw new LineProblem('"user_id" must be a non-empty string');
    return { user_id: userId };
  }
  const alias = value['alias'];
  if (!isObject(alias) || typeof alias['tag'] !== 'string' || typeof alias['id'] !== 'string') {
    throw new LineProblem('"alias" must be {"tag": string, "id": string}');
  }
  return { alias: { tag: alias['tag'], id: alias['id'] } };
}

/** A row object as given; without an `id` it gets `L<line>-<hash of the line>` so a re-run replaces it. */
export function readRow(value: unknown, line: number, text: string): Record<string, unknown> {
  if (!isObject(value)) throw new LineProblem('expected a JSON object');
  if (value['id'] !== undefined) return value;
  const digest = createHash('sha256').update(text.trim()).digest('hex').slice(0, 24);
  return { ...value, id: `L${line}-${digest}` };
}

function parseBatch(text: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1 || value > MAX_BATCH_LINES) {
    throw new CliError(`--batch must be an integer from 1 to ${MAX_BATCH_LINES}, not "${text}"`, 2);
  }
  return value;
}

function countOf(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
