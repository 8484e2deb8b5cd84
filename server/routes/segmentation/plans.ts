// The compiled plan of each organization's enabled real-time cohorts (D9) for stateless segmentation, cached in the
// main thread per (organization, plan version) and recompiled when the registry's version moves.

import { compilePlan, type CohortDefinition, type Plan, type Query } from '../../../engine/index.js';
import type { CohortRegistry } from '../../domain/cohorts/index.js';

export class PlanCache {
  private readonly plans = new Map<string, { readonly version: number; readonly plan: Plan }>();

  constructor(private readonly cohorts: CohortRegistry) {}

  planFor(org: string): Plan {
    const version = this.cohorts.planVersion(org);
    const cached = this.plans.get(org);
    if (cached !== undefined && cached.version === version) return cached.plan;
    const plan = compilePlan(definitionsOf(this.cohorts, org), version, { inactive: this.cohorts.inactiveCodes(org) });
    this.plans.set(org, { version, plan });
    return plan;
  }
}

/** The enabled real-time cohorts as engine definitions, the same set the ingest pipeline's plan is built from. */
function definitionsOf(cohorts: CohortRegistry, org: string): CohortDefinition[] {
  return cohorts.enabledRealTime(org).map((cohort) => ({ code: cohort.code, query: cohort.ast as Query }));
}
