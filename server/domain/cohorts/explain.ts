// "Why is this user (not) in this cohort?" (the dashboard's explain, issue 16): the cohort's query taken apart into
// its conjunctive normal form (the spec's query format: a clause, an `or`, or an `and` of clauses and `or`s), each
// clause evaluated as a cohort of its own over the user's whole history with the engine, at `now` (so windows that
// closed since the last event are closed, D36). A clause naming another cohort (transition clauses) is evaluated with
// that cohort in the plan, as the live evaluation does. Pure: events, imported data and time come in.

import { compilePlan, evaluateAt, newUserState, segment, validateQuery, type CohortDefinition, type EngineEvent, type Query, type SegmentContext } from '../../../engine/index.js';

export interface ClauseVerdict {
  /** JSON path of the clause in the cohort's query (`query.and[1].or[0]`). */
  readonly path: string;
  readonly clause: unknown;
  readonly holds: boolean;
}

/** One item of the `and`: it holds when any of its clauses does. */
export interface GroupVerdict {
  readonly path: string;
  readonly holds: boolean;
  readonly clauses: readonly ClauseVerdict[];
}

export interface Explanation {
  /** Whether the whole query holds for the user at `now` (every group does). */
  readonly member: boolean;
  readonly groups: readonly GroupVerdict[];
  /** How many events of the user were replayed. */
  readonly events: number;
}

export interface ExplainInput {
  /** The cohort's query as stored (validated JSON) and its validated AST. */
  readonly query: unknown;
  readonly ast: Query;
  /** The organization's cohorts the clauses may name, as the live plan has them; inactive codes beside them. */
  readonly cohorts: readonly CohortDefinition[];
  readonly inactive: readonly number[];
  readonly events: readonly EngineEvent[];
  readonly context: SegmentContext;
  readonly now: number;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The query's groups: each a list of [path, clause JSON]. */
function groupsOf(query: unknown): { path: string; clauses: [string, unknown][] }[] {
  const orGroup = (value: Record<string, unknown>, path: string) => ({
    path,
    clauses: (value['or'] as unknown[]).map((clause, i): [string, unknown] => [`${path}.or[${i}]`, clause]),
  });
  if (isObject(query) && Array.isArray(query['and'])) {
    return (query['and'] as unknown[]).map((item, i) => {
      const path = `query.and[${i}]`;
      return isObject(item) && Array.isArray(item['or']) ? orGroup(item, path) : { path, clauses: [[path, item]] };
    });
  }
  if (isObject(query) && Array.isArray(query['or'])) return [orGroup(query, 'query')];
  return [{ path: 'query', clauses: [['query', query]] }];
}

export function explainQuery(input: ExplainInput): Explanation {
  const groups = groupsOf(input.query);
  let next = Math.max(0, ...input.cohorts.map((c) => c.code), ...input.inactive) + 1;
  const whole = next++;
  const definitions: CohortDefinition[] = [...input.cohorts];
  const clauseCodes: number[][] = groups.map((group) =>
    group.clauses.map(([, clause]) => {
      const validated = validateQuery(clause, 'query');
      if (!validated.ok) throw new Error(`explain: a clause of a stored query does not validate: ${validated.problems[0]?.message ?? ''}`);
      const code = next++;
      definitions.push({ code, query: validated.query });
      return code;
    }),
  );
  definitions.push({ code: whole, query: input.ast });
  const plan = compilePlan(definitions, 1, { inactive: input.inactive });
  const state = newUserState();
  segment(plan, state, input.events, input.context);
  const members = new Set(evaluateAt(plan, state, input.now, input.context).memberships);
  return {
    member: members.has(whole),
    events: input.events.length,
    groups: groups.map((group, g) => {
      const clauses = group.clauses.map(([path, clause], c): ClauseVerdict => ({ path, clause, holds: members.has(clauseCodes[g]?.[c] as number) }));
      return { path: group.path, holds: clauses.some((clause) => clause.holds), clauses };
    }),
  };
}
