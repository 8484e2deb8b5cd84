// Engagement clauses: exactly one of `engaged_time {seconds, during?, where?}`, `engaged_completion
// {completion, where?}`, `engaged_views {times, during?, where?, engaged_time | completion}` (spec, D32, E6-E9).

import type { During, EngagedCompletionClause, EngagedTimeClause, EngagedViewsClause, NumberComparison, Where } from '../ast.js';
import { hasKey, isObject, visitObject, type Findings, type JsonObject } from './findings.js';
import { readComparison } from './comparison.js';
import { readDuring } from './during.js';
import { readNumber } from './values.js';
import { readWhere } from './where.js';

export const ENGAGEMENT_KEYS: readonly string[] = ['engaged_time', 'engaged_completion', 'engaged_views'];

type EngagementClause = EngagedTimeClause | EngagedCompletionClause | EngagedViewsClause;
type PerView = EngagedViewsClause['per_view'];

/** Reads the body of the engagement key `key`. Comparisons take any finite number (seconds, fractions, counts). */
export function readEngagement(findings: Findings, key: string, value: unknown, path: string): EngagementClause | undefined {
  const before = findings.count;
  const required = key === 'engaged_time' ? 'seconds' : key === 'engaged_completion' ? 'completion' : 'times';
  let amount: NumberComparison | undefined;
  let during: During | undefined;
  let where: Where | undefined;
  const perView: PerView[] = [];
  if (key === 'engaged_views' && isObject(value)) checkOnePerView(findings, value, path); // object-level, so first
  visitObject(findings, value, path, [required], (field, operand, at) => {
    if (field === required) amount = readComparison(findings, operand, at, readNumber);
    else if (field === 'where') where = readWhere(findings, operand, at, 'event', 0);
    else if (field === 'during' && key !== 'engaged_completion') during = readDuring(findings, operand, at);
    else if ((field === 'engaged_time' || field === 'completion') && key === 'engaged_views') {
      const comparison = readComparison(findings, operand, at, readNumber);
      if (comparison !== undefined) perView.push({ measure: field, comparison });
    } else return false;
    return true;
  });
  if (findings.count !== before || amount === undefined) return undefined;
  const options = { ...(during && { during }), ...(where && { where }) };
  if (key === 'engaged_time') return { kind: 'engaged_time', seconds: amount, ...options };
  if (key === 'engaged_completion') return { kind: 'engaged_completion', completion: amount, ...options };
  const [per_view] = perView;
  return per_view === undefined ? undefined : { kind: 'engaged_views', times: amount, ...options, per_view };
}

/** `engaged_views` needs exactly one of `engaged_time` and `completion`. */
function checkOnePerView(findings: Findings, value: JsonObject, path: string): void {
  const present = ['engaged_time', 'completion'].filter((key) => hasKey(value, key));
  if (present.length === 0) findings.problem(path, 'missing key "engaged_time" or "completion"');
  if (present.length === 2) findings.problem(path, 'expected exactly one of "engaged_time" and "completion", got both');
}
