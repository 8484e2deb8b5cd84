// An organization's plan as the main thread knows it (server/backfill/README.md): what to compile, what the context must answer,
// and each cohort's generation — the plan version at which its evaluation last started over (created, query
// changed, enabled), raised to the generations of the cohorts it names (their changes change it, D35).

import type { CohortDefinition } from '../../engine/api.js';
import { probesOf, type ContextProbes } from './tick/context.js';

export interface PlanInfo {
  readonly version: number;
  readonly cohorts: readonly CohortDefinition[];
  /** Codes named by the plan's cohorts that exist but are not evaluated (E21). */
  readonly inactive: readonly number[];
  readonly probes: ContextProbes;
  /** Effective generation by cohort code (0 when the plan source gives none: no backfill). */
  readonly gens: ReadonlyMap<number, number>;
  /** The largest generation: a state whose mark is at least this is up to date with every cohort. */
  readonly maxGen: number;
}

/** What a PlanSource answers. */
export interface PlanSpec {
  readonly version: number;
  readonly cohorts: readonly CohortDefinition[];
  readonly inactive?: readonly number[];
  readonly generations?: ReadonlyMap<number, number>;
}

export function toPlanInfo(spec: PlanSpec): PlanInfo {
  const byCode = new Map(spec.cohorts.map((cohort) => [cohort.code, cohort]));
  const gens = new Map<number, number>();
  const visiting = new Set<number>();
  const genOf = (code: number): number => {
    const known = gens.get(code);
    if (known !== undefined) return known;
    const cohort = byCode.get(code);
    if (cohort === undefined || visiting.has(code)) return 0;
    visiting.add(code);
    let gen = spec.generations?.get(code) ?? 0;
    for (const ref of referencesOf(cohort)) gen = Math.max(gen, genOf(ref));
    visiting.delete(code);
    gens.set(code, gen);
    return gen;
  };
  let maxGen = 0;
  for (const cohort of spec.cohorts) maxGen = Math.max(maxGen, genOf(cohort.code));
  return { version: spec.version, cohorts: spec.cohorts, inactive: spec.inactive ?? [], probes: probesOf(spec.cohorts), gens, maxGen };
}

/** Codes of the cohorts a state caught up with plan version `mark` has not been evaluated over history for. */
export function staleCodes(plan: PlanInfo, mark: number): number[] {
  if (plan.maxGen <= mark) return [];
  const out: number[] = [];
  for (const [code, gen] of plan.gens) if (gen > mark) out.push(code);
  return out.sort((a, b) => a - b);
}

/** Codes of the cohorts a cohort's transition clauses name. */
export function referencesOf(cohort: CohortDefinition): number[] {
  const out: number[] = [];
  for (const group of cohort.query.and) for (const clause of group.or) if (clause.kind === 'transition') out.push(clause.segment);
  return out;
}
