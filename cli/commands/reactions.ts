// `audience reactions create|list|get|update|delete|deliveries|retry` over the Reactions API (D37): webhooks fired
// by a cohort's entries, exits or members' page loads. The signing secret is printed once, at creation.

import type { Command } from 'commander';
import { CliError, type CliIo } from '../io.js';
import { clientFor } from '../client.js';
import { CONNECTION_HELP, formatFields, formatTable, printResult } from '../format.js';
import { segment } from './args.js';

interface ReactionWire {
  id: string;
  name: string;
  cohort_id: string;
  cohort_code: number;
  trigger: string;
  action: { type: string; url: string };
  state: string;
  workspace_id: string;
  created_at: string;
  last_updated_at: string;
  secret?: string;
}

interface DeliveryWire {
  id: string;
  status: string;
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  created_at: string;
  next_attempt_at: string | null;
  trigger: string;
  user_id: string;
  time: string;
}

const BASE = '/reactions-api/v1/reactions';
const TRIGGERS = ['on_entry', 'on_exit', 'every_time'];

function describe(r: ReactionWire): string {
  return formatFields([
    ['id', r.id],
    ['name', r.name],
    ['cohort', `${r.cohort_id} (code ${r.cohort_code})`],
    ['trigger', r.trigger],
    ['url', r.action.url],
    ['state', r.state],
    ['workspace', r.workspace_id],
    ['created', r.created_at],
    ['updated', r.last_updated_at],
  ]);
}

export function registerReactionsCommand(program: Command, io: CliIo): void {
  const reactions = program
    .command('reactions')
    .description('webhooks on cohort entries, exits and page loads, and their deliveries (D37; a private key)')
    .addHelpText('after', CONNECTION_HELP + '\nExample:\n  $ audience reactions create --name welcome --cohort 3f6b...9a --trigger on_entry --webhook https://hooks.example.com/in\n  $ audience reactions deliveries 9c1d...02 --status failed');

  reactions
    .command('list')
    .description("list the reactions of the key's workspace and its parents")
    .action(async (_options: unknown, command: Command) => {
      const list = await clientFor(command, io).request<ReactionWire[]>('GET', BASE);
      printResult(io, command, list, () =>
        formatTable(list, [
          { header: 'ID', value: (r) => r.id },
          { header: 'STATE', value: (r) => r.state },
          { header: 'TRIGGER', value: (r) => r.trigger },
          { header: 'COHORT', value: (r) => r.cohort_code },
          { header: 'URL', value: (r) => r.action.url },
          { header: 'NAME', value: (r) => r.name },
        ]),
      );
    });

  reactions
    .command('get')
    .description('show one reaction')
    .argument('<id>', 'reaction id (UUID)')
    .action(async (id: string, _options: unknown, command: Command) => {
      const reaction = await clientFor(command, io).request<ReactionWire>('GET', `${BASE}/${segment(id)}`);
      printResult(io, command, reaction, () => describe(reaction));
    });

  reactions
    .command('create')
    .description('create a webhook reaction; prints its signing secret once')
    .requiredOption('--name <name>', 'name of the reaction')
    .requiredOption('--cohort <id>', 'the cohort (id) whose entries, exits or members fire it')
    .requiredOption('--trigger <trigger>', `one of ${TRIGGERS.join(', ')}`)
    .requiredOption('--webhook <url>', 'the webhook (http or https) that receives each delivery (--url is the server)')
    .option('--workspace <id>', "owning workspace (default: the key's)")
    .addHelpText('after', CONNECTION_HELP + '\nExample:\n  $ audience reactions create --name lapsed --cohort 3f6b...9a --trigger on_exit --webhook https://hooks.example.com/out')
    .action(async (options: { name: string; cohort: string; trigger: string; webhook: string; workspace?: string }, command: Command) => {
      if (!TRIGGERS.includes(options.trigger)) throw new CliError(`--trigger must be one of ${TRIGGERS.join(', ')}, not "${options.trigger}"`, 2);
      const body = { name: options.name, cohort_id: options.cohort, trigger: options.trigger, action: { type: 'webhook', url: options.webhook }, workspace_id: options.workspace };
      const created = await clientFor(command, io).request<ReactionWire>('POST', BASE, { body });
      printResult(io, command, created, () => `created reaction ${created.id}\nsigning secret (shown once): ${created.secret ?? ''}\n`);
    });

  reactions
    .command('update')
    .description('change a reaction; fields not given stay unchanged')
    .argument('<id>', 'reaction id (UUID)')
    .option('--name <name>', 'new name')
    .option('--webhook <url>', 'new webhook URL')
    .option('--enable', 'deliver again (pending deliveries go out)')
    .option('--disable', 'stop firing; pending deliveries wait')
    .action(async (id: string, options: { name?: string; webhook?: string; enable?: boolean; disable?: boolean }, command: Command) => {
      if (options.enable && options.disable) throw new CliError('--enable and --disable exclude each other', 2);
      const body: Record<string, unknown> = {};
      if (options.name !== undefined) body['name'] = options.name;
      if (options.webhook !== undefined) body['action'] = { type: 'webhook', url: options.webhook };
      if (options.enable) body['state'] = 'Enabled';
      if (options.disable) body['state'] = 'Disabled';
      if (Object.keys(body).length === 0) throw new CliError('nothing to update: give --name, --webhook, --enable or --disable', 2);
      const updated = await clientFor(command, io).request<ReactionWire>('PATCH', `${BASE}/${segment(id)}`, { body });
      printResult(io, command, updated, () => `updated reaction ${updated.id}\n`);
    });

  reactions
    .command('delete')
    .description('delete a reaction and its deliveries')
    .argument('<id>', 'reaction id (UUID)')
    .action(async (id: string, _options: unknown, command: Command) => {
      await clientFor(command, io).request('DELETE', `${BASE}/${segment(id)}`);
      printResult(io, command, { id, deleted: true }, () => `deleted reaction ${id}\n`);
    });

  reactions
    .command('deliveries')
    .description("list a reaction's recent deliveries, newest first")
    .argument('<id>', 'reaction id (UUID)')
    .option('--status <status>', 'pending, failed or delivered')
    .option('--limit <n>', 'at most this many (1..1000, default 100)')
    .action(async (id: string, options: { status?: string; limit?: string }, command: Command) => {
      const list = await clientFor(command, io).request<DeliveryWire[]>('GET', `${BASE}/${segment(id)}/deliveries`, { query: { status: options.status, limit: options.limit } });
      printResult(io, command, list, () =>
        formatTable(list, [
          { header: 'ID', value: (d) => d.id },
          { header: 'STATUS', value: (d) => d.status },
          { header: 'ATTEMPTS', value: (d) => d.attempts },
          { header: 'LAST', value: (d) => d.last_status ?? d.last_error ?? '' },
          { header: 'TRIGGER', value: (d) => d.trigger },
          { header: 'USER', value: (d) => d.user_id },
          { header: 'TIME', value: (d) => d.time },
        ]),
      );
    });

  reactions
    .command('retry')
    .description('send a failed delivery again (same id, a new 24-hour horizon)')
    .argument('<id>', 'reaction id (UUID)')
    .argument('<delivery>', 'delivery id (dlv_...)')
    .action(async (id: string, delivery: string, _options: unknown, command: Command) => {
      const answer = await clientFor(command, io).request<DeliveryWire>('POST', `${BASE}/${segment(id)}/deliveries/${segment(delivery)}/retry`);
      printResult(io, command, answer, () => `delivery ${answer.id} is pending again\n`);
    });
}
