// `audience cohorts list|get|create|update|delete|recompute` over the Cohorts API (spec, D14–D20). A bad query is
// shown as the server's one-line path-and-reason cause (D18), never a stack.

import type { Command } from 'commander';
import { CliError, type CliIo } from '../io.js';
import { clientFor } from '../client.js';
import { CONNECTION_HELP, formatFields, formatTable, printResult } from '../format.js';
import { parseList, readJsonArgument, segment } from './args.js';
import { startProgress } from '../progress.js';

interface CohortWire {
  id: string;
  code: number;
  name: string;
  description?: string;
  tags?: string[];
  state: string;
  workspace_id: string;
  segment_type: string;
  live_audience_size?: number;
  created_at: string;
  last_updated_at: string;
  query?: unknown;
}

interface CreateOptions {
  name: string;
  query: string;
  description?: string;
  tags?: string;
  offline?: boolean;
  workspace?: string;
}

interface UpdateOptions {
  name?: string;
  /** false for --no-description (D16: null deletes it). */
  description?: string | false;
  query?: string;
  tags?: string;
  enable?: boolean;
  disable?: boolean;
}

const BASE = '/cohorts-api/v2/cohorts';

export function registerCohortsCommand(program: Command, io: CliIo): void {
  const cohorts = program
    .command('cohorts')
    .description('list, read, create, update, delete and recompute cohorts (needs a private key, D6)')
    .addHelpText('after', CONNECTION_HELP + '\nExample:\n  $ audience cohorts create --name "Five pageviews" --query five-pageviews.json\n  $ audience cohorts list');

  cohorts
    .command('list')
    .description("list the cohorts of the key's workspace and those inherited from its parents")
    .option('--include-child-workspaces', 'also cohorts of workspaces below (a descendants key, D8)')
    .addHelpText('after', CONNECTION_HELP + '\nExample:\n  $ audience cohorts list --include-child-workspaces\n  $ audience cohorts list --json')
    .action(async (options: { includeChildWorkspaces?: boolean }, command: Command) => {
      const query = options.includeChildWorkspaces ? { 'include-child-workspaces': 'true' } : undefined;
      const list = await clientFor(command, io).request<CohortWire[]>('GET', BASE, { query });
      printResult(io, command, list, () => describeCohortList(list));
    });

  cohorts
    .command('get')
    .description('show one cohort with its query and live audience size (D15)')
    .argument('<id>', 'cohort id (UUID)')
    .addHelpText('after', CONNECTION_HELP + '\nExample:\n  $ audience cohorts get 3f6b...9a\n  $ audience cohorts get 3f6b...9a --json | jq .query')
    .action(async (id: string, _options: unknown, command: Command) => {
      const cohort = await clientFor(command, io).request<CohortWire>('GET', `${BASE}/${segment(id)}`);
      printResult(io, command, cohort, () => describeCohort(cohort));
    });

  cohorts
    .command('create')
    .description('create a cohort from a query file (D14); it is evaluated over stored history (D19)')
    .requiredOption('--name <name>', 'name of the cohort')
    .requiredOption('--query <file>', 'the cohort query as JSON (- for stdin)')
    .option('--description <text>', 'a description')
    .option('--tags <list>', 'comma-separated tags, e.g. sports,premium')
    .option('--offline', 'an offline cohort: computed on demand by `cohorts recompute`, not per event (D20)')
    .option('--workspace <id>', "owning workspace (default: the key's)")
    .addHelpText(
      'after',
      CONNECTION_HELP + '\nExample:\n  $ audience cohorts create --name "Five pageviews" --query five-pageviews.json --tags web,engaged\n' +
        '  $ echo \'{"event":"Pageview","frequency":{"greater_than_or_equal_to":5}}\' | audience cohorts create --name Fans --query -',
    )
    .action(async (options: CreateOptions, command: Command) => {
      const client = clientFor(command, io);
      const query = await readJsonArgument(io, options.query, 'query');
      const body = {
        name: options.name,
        query,
        description: options.description,
        tags: options.tags === undefined ? undefined : parseList(options.tags),
        segment_type: options.offline ? 'offline' : undefined,
        workspace_id: options.workspace,
      };
      const created = await client.request<CohortWire>('POST', BASE, { body });
      printResult(io, command, created, () => `created cohort ${created.id} (code ${created.code})\n`);
    });

  cohorts
    .command('update')
    .description('change a cohort; fields not given stay unchanged (D16)')
    .argument('<id>', 'cohort id (UUID)')
    .option('--name <name>', 'new name')
    .option('--description <text>', 'new description')
    .option('--no-description', 'delete the description')
    .option('--query <file>', 'new query as JSON (- for stdin); re-evaluated over history (D19)')
    .option('--tags <list>', 'new comma-separated tags ("" clears them)')
    .option('--enable', 'set the state to Enabled (evaluated again over history, D19)')
    .option('--disable', 'set the state to Disabled (no longer evaluated, no members)')
    .addHelpText('after', CONNECTION_HELP + '\nExample:\n  $ audience cohorts update 3f6b...9a --query seven-pageviews.json --no-description\n  $ audience cohorts update 3f6b...9a --disable')
    .action(async (id: string, options: UpdateOptions, command: Command) => {
      if (options.enable && options.disable) throw new CliError('--enable and --disable exclude each other', 2);
      const body: Record<string, unknown> = {};
      if (options.name !== undefined) body['name'] = options.name;
      if (options.description !== undefined) body['description'] = options.description === false ? null : options.description;
      if (options.tags !== undefined) body['tags'] = parseList(options.tags);
      if (options.enable) body['state'] = 'Enabled';
      if (options.disable) body['state'] = 'Disabled';
      if (options.query === undefined && Object.keys(body).length === 0) {
        throw new CliError('nothing to update: give --name, --description, --no-description, --query, --tags, --enable or --disable', 2);
      }
      const client = clientFor(command, io);
      if (options.query !== undefined) body['query'] = await readJsonArgument(io, options.query, 'query');
      const updated = await client.request<CohortWire>('PATCH', `${BASE}/${segment(id)}`, { body });
      printResult(io, command, updated, () => `updated cohort ${updated.id} (code ${updated.code})\n`);
    });

  cohorts
    .command('delete')
    .description('delete a cohort (409 while another cohort names it, D18)')
    .argument('<id>', 'cohort id (UUID)')
    .addHelpText('after', CONNECTION_HELP + '\nExample:\n  $ audience cohorts delete 3f6b...9a')
    .action(async (id: string, _options: unknown, command: Command) => {
      await clientFor(command, io).request('DELETE', `${BASE}/${segment(id)}`);
      printResult(io, command, { id, deleted: true }, () => `deleted cohort ${id}\n`);
    });

  cohorts
    .command('recompute')
    .description('compute a cohort over stored history now (D20) and follow it to the end with a progress bar')
    .argument('<id>', 'cohort id (UUID)')
    .option('--no-wait', 'print the server\'s first answer and return while the computation runs')
    .addHelpText('after', CONNECTION_HELP + '\nExample:\n  $ audience cohorts recompute 3f6b...9a\n  $ audience cohorts recompute 3f6b...9a --no-wait --json')
    .action(async (id: string, options: { wait: boolean }, command: Command) => {
      const client = clientFor(command, io);
      let answer = await client.request<unknown>('POST', `${BASE}/${segment(id)}/recompute`);
      if (options.wait) {
        const progress = startProgress(io, 1, 'recompute');
        try {
          // Follows the cohort's read model until it reports no computation under way (its `backfill` goes away).
          for (let running = progressOf(answer); running !== undefined && running['state'] !== 'done'; running = progressOf(answer)) {
            const total = Number(running['users_total'] ?? 0);
            const done = Number(running['users_done'] ?? 0);
            progress.update(total > 0 ? done / total : 0, usersLabel(done, total));
            await new Promise((resolve) => setTimeout(resolve, POLL_MS));
            answer = await client.request<unknown>('GET', `${BASE}/${segment(id)}`);
          }
        } finally {
          progress.finish();
        }
      }
      printResult(io, command, answer ?? { id, recomputed: true }, () => describeRecompute(id, answer));
    });
}

/** How often `recompute` reads the cohort back while its computation runs. */
const POLL_MS = 250;

function asRecord(answer: unknown): Record<string, unknown> {
  return answer !== null && typeof answer === 'object' && !Array.isArray(answer) ? (answer as Record<string, unknown>) : {};
}

/** The computation's progress a cohort reports (`backfill`), or undefined once there is none. */
function progressOf(answer: unknown): Record<string, unknown> | undefined {
  const backfill = asRecord(answer)['backfill'];
  return backfill !== null && typeof backfill === 'object' ? (backfill as Record<string, unknown>) : undefined;
}

/** Progress in users; before the users are counted (a total of 0) it says so rather than "0 of 0". */
export function usersLabel(done: number, total: number): string {
  return total > 0 ? `${done} of ${total} users` : 'counting users';
}

/** The server's answer for people: the computation's state and progress, or the size once it is done. */
function describeRecompute(id: string, answer: unknown): string {
  const record = asRecord(answer);
  const progress = progressOf(answer);
  const code = record['code'] === undefined ? '' : ` (code ${String(record['code'])})`;
  if (progress === undefined) {
    const size = record['live_audience_size'] === undefined ? '' : `: ${String(record['live_audience_size'])} users`;
    return `recompute of cohort ${id}${code} done${size}\n`;
  }
  const counts = progress['users_total'] === undefined ? '' : `, ${usersLabel(Number(progress['users_done'] ?? 0), Number(progress['users_total']))}`;
  return `recompute of cohort ${id}${code}: ${String(progress['state'] ?? 'unknown')}${counts}\n`;
}

/** A running computation's state and progress ("running, 400 of 1000 users"), or undefined when there is none. */
function backfillLabel(cohort: CohortWire): string | undefined {
  const progress = progressOf(cohort);
  if (progress === undefined) return undefined;
  return `${String(progress['state'] ?? 'running')}, ${usersLabel(Number(progress['users_done'] ?? 0), Number(progress['users_total'] ?? 0))}`;
}

/** The list for people: one row a cohort, with a running computation's progress in BACKFILL (D19). */
export function describeCohortList(list: readonly CohortWire[]): string {
  return formatTable(list, [
    { header: 'ID', value: (c) => c.id },
    { header: 'CODE', value: (c) => c.code },
    { header: 'STATE', value: (c) => c.state },
    { header: 'TYPE', value: (c) => c.segment_type },
    { header: 'SIZE', value: (c) => c.live_audience_size },
    { header: 'BACKFILL', value: (c) => backfillLabel(c) ?? '-' },
    { header: 'WORKSPACE', value: (c) => c.workspace_id },
    { header: 'TAGS', value: (c) => c.tags },
    { header: 'NAME', value: (c) => c.name },
  ]);
}

export function describeCohort(cohort: CohortWire): string {
  // D19: while a backfill (or an offline computation) runs, the size is not final yet.
  const label = backfillLabel(cohort);
  const backfill: Array<[string, unknown]> = label === undefined ? [] : [['backfill', label]];
  return (
    formatFields([
      ['id', cohort.id],
      ['code', cohort.code],
      ['name', cohort.name],
      ['description', cohort.description],
      ['state', cohort.state],
      ['type', cohort.segment_type],
      ['workspace', cohort.workspace_id],
      ['tags', cohort.tags],
      ['audience size', cohort.live_audience_size],
      ...backfill,
      ['created', cohort.created_at],
      ['updated', cohort.last_updated_at],
    ]) + `query\n${JSON.stringify(cohort.query, null, 2)}\n`
  );
}
