// `audience eval --query FILE --events FILE [--json]`: evaluates one cohort query over a user's NDJSON events
// offline with the engine, and prints each entry and exit with the event that caused it (operations.md).

import type { Command } from 'commander';
import { CliError, type CliIo } from '../io.js';
import { EMPTY_CONTEXT, type EngineEvent, type Transition } from '../../engine/api.js';
import { compilePlan, newUserState, segment, validateQuery } from '../../engine/index.js';
import type { Query } from '../../engine/query/ast.js';

interface EvalOptions {
  query: string;
  events: string;
  json?: boolean;
}

/** The query evaluated is cohort 1 of a one-cohort plan. */
const COHORT = 1;

export function registerEvalCommand(program: Command, io: CliIo): void {
  program
    .command('eval')
    .description('evaluate a cohort query over NDJSON events offline and print every entry and exit')
    .requiredOption('--query <file>', 'cohort query as JSON (- for stdin)')
    .requiredOption('--events <file>', 'events as NDJSON {name, time, properties?, session_id?, view_id?} (- for stdin)')
    .option('--json', 'one JSON object per transition, then {"member": true|false}')
    .addHelpText('after', '\nExample:\n  $ audience eval --query five-pageviews.json --events user.ndjson --json')
    .action(async (options: EvalOptions, command: Command) => {
      const json = Boolean(options.json ?? command.optsWithGlobals()['json']);
      if (options.query === '-' && options.events === '-') throw new CliError('--query and --events cannot both read stdin', 2);
      const read = (file: string): Promise<string> => (file === '-' ? io.readStdin() : io.readFile(file));
      const query = parseQuery(await readInput(read, options.query, '--query'));
      const events = parseEvents(await readInput(read, options.events, '--events'));
      const outcome = evaluateQuery(query, events);
      io.stdout(json ? formatJson(outcome) : formatText(outcome, events));
    });
}

async function readInput(read: (file: string) => Promise<string>, file: string, option: string): Promise<string> {
  try {
    return await read(file);
  } catch (error) {
    throw new CliError(`${option} ${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** Parses and validates the query; the first problem is reported as `query.<path>: <message>` (D18). */
function parseQuery(text: string): Query {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new CliError(`query: not valid JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  const result = validateQuery(json, 'query');
  if (!result.ok) {
    const [problem] = result.problems;
    throw new CliError(problem === undefined ? 'query: invalid' : `${problem.path}: ${problem.message}`);
  }
  return result.query;
}

const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})$/;

/** One event per non-blank line; a bad line is an error naming its line number (1-based). */
export function parseEvents(text: string): EngineEvent[] {
  const events: EngineEvent[] = [];
  text.split(/\r?\n/).forEach((line, index) => {
    if (line.trim() === '') return;
    const fail = (problem: string): never => {
      throw new CliError(`events line ${index + 1}: ${problem}`);
    };
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      fail('not valid JSON');
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return fail('expected a JSON object');
    const record = value as Record<string, unknown>;
    const { name, time, properties, session_id, view_id } = record;
    if (typeof name !== 'string' || name === '') return fail('"name" must be a non-empty string');
    const ms = typeof time === 'string' && ISO_DATE_TIME.test(time) ? Date.parse(time.replace(/([+-]\d{2})(\d{2})$/, '$1:$2')) : Number.NaN;
    if (!Number.isFinite(ms)) return fail('"time" must be an ISO 8601 date-time with an offset');
    if (properties !== undefined && (typeof properties !== 'object' || properties === null || Array.isArray(properties))) {
      return fail('"properties" must be an object');
    }
    for (const [key, id] of [['session_id', session_id], ['view_id', view_id]] as const) {
      if (id !== undefined && id !== null && typeof id !== 'string') return fail(`"${key}" must be a string or null`);
    }
    events.push({
      name,
      time: ms,
      properties: (properties ?? {}) as Record<string, unknown>,
      ...(session_id !== undefined && { session_id: session_id as string | null }),
      ...(view_id !== undefined && { view_id: view_id as string | null }),
    });
  });
  return events;
}

interface EvalOutcome {
  readonly transitions: readonly Transition[];
  readonly member: boolean;
}

/** Runs the engine: the query as cohort 1, every event in one `segment` call, no imported data. */
function evaluateQuery(query: Query, events: EngineEvent[]): EvalOutcome {
  let plan: ReturnType<typeof compilePlan>;
  try {
    plan = compilePlan([{ code: COHORT, query }], 1);
  } catch (error) {
    // e.g. a transition clause naming a cohort other than this one (ENGINE_UNKNOWN_COHORT) or itself (a cycle)
    throw new CliError(`query: ${error instanceof Error ? error.message : String(error)}`);
  }
  const outcome = segment(plan, newUserState(), events, EMPTY_CONTEXT);
  return {
    transitions: outcome.transitions.filter((t) => t.cohort === COHORT),
    member: outcome.memberships.includes(COHORT),
  };
}

function formatJson(outcome: EvalOutcome): string {
  const lines = outcome.transitions.map((t) =>
    JSON.stringify({ transition: t.kind, time: new Date(t.time).toISOString(), event: t.eventIndex }),
  );
  lines.push(JSON.stringify({ member: outcome.member }));
  return lines.join('\n') + '\n';
}

function formatText(outcome: EvalOutcome, events: readonly EngineEvent[]): string {
  const lines = outcome.transitions.map(
    (t) => `${t.kind} at ${new Date(t.time).toISOString()} (event ${t.eventIndex}: ${events[t.eventIndex]?.name ?? '?'})`,
  );
  lines.push(`member: ${outcome.member ? 'yes' : 'no'}`);
  return lines.join('\n') + '\n';
}
