// A group's compute (tick.ts): every user with work, grouped by organization, in ONE executor task; the plan's
// cohorts are attached for the organizations the executor asks for (needPlan) and the task is sent again.

import type { Executor } from './executor.js';
import type { PlanInfo } from './plan-info.js';
import { needsCompute, type UserWork } from './tick.js';
import type { WorkGroup, WorkStep, WorkUser } from './work.js';

/** Runs the users' steps on the executor and stores each user's result in `work.result`. */
export async function compute(executor: Executor, users: Map<string, UserWork>, plans: Map<string, PlanInfo>): Promise<void> {
  const byOrg = new Map<string, UserWork[]>();
  for (const work of users.values()) {
    if (!needsCompute(work)) continue;
    const list = byOrg.get(work.org) ?? [];
    list.push(work);
    byOrg.set(work.org, list);
  }
  if (byOrg.size === 0) return;
  const orgs = [...byOrg.keys()];
  const attach = new Set<string>();
  for (let attempt = 0; attempt < 3; attempt++) {
    const groups: WorkGroup[] = orgs.map((org) => {
      const plan = plans.get(org) as PlanInfo;
      const group = { org, version: plan.version, users: (byOrg.get(org) as UserWork[]).map(toWorkUser) };
      return attach.has(org) ? { ...group, cohorts: plan.cohorts, inactive: plan.inactive } : group;
    });
    const reply = await executor.run({ groups });
    if (reply.needPlan === true) {
      for (const org of reply.orgs) attach.add(org);
      continue;
    }
    orgs.forEach((org, g) => {
      const results = reply.groups[g] ?? [];
      (byOrg.get(org) as UserWork[]).forEach((work, u) => {
        work.result = results[u];
      });
    });
    return;
  }
  throw new Error('the executor kept asking for plans it was sent');
}

function toWorkUser(work: UserWork): WorkUser {
  const steps = work.steps.map((step): WorkStep => {
    if (step.item.kind === 'append') return { kind: 'events', events: step.fresh.map((fresh) => fresh.engine) };
    if (step.item.kind === 'evaluate') return { kind: 'evaluate', now: step.item.now };
    return { kind: 'read' };
  });
  const user = { state: work.base.bytes.length > 0 ? work.base.bytes : null, replay: work.replay, steps, ctx: work.ctx };
  return work.decision?.kind === 'inline' ? { ...user, catchup: work.decision.catchup } : user;
}
