// The bench cohorts' wire form: every query the server would validate (D18), a fixed point of wire -> AST -> wire,
// and the mix the benchmark claims (every clause kind).

import { describe, expect, it } from 'vitest';
import { validateQuery } from '../../engine/index.js';
import { countClauseKinds, generateWireCohorts, renumber, toWireQuery } from '../../bench/workload/cohorts.js';

describe('bench cohorts in wire form', () => {
  const { wire, definitions } = generateWireCohorts(42, 100);

  it('validates every query and converts back to the same wire JSON (D18)', () => {
    for (const cohort of wire) {
      const result = validateQuery(cohort.query);
      expect(result.ok, JSON.stringify(cohort.query)).toBe(true);
      if (result.ok) expect(toWireQuery(result.query)).toEqual(cohort.query);
    }
  });

  it('mixes every clause kind', () => {
    const kinds = countClauseKinds(definitions);
    for (const kind of ['expression', 'engaged_time', 'engaged_completion', 'engaged_views', 'transition', 'membership', 'connections']) {
      expect(kinds[kind] ?? 0).toBeGreaterThan(0);
    }
  });

  it('renumbers transition clauses to the codes the server assigned, and refuses unknown codes', () => {
    const query = { and: [{ has_entered: { segment: 3, during: 'this_session' } }, { or: [{ event: 'Buy' }, { has_exited: { segment: 1 } }] }] };
    expect(renumber(query, new Map([[3, 13], [1, 11]]))).toEqual({
      and: [{ has_entered: { segment: 13, during: 'this_session' } }, { or: [{ event: 'Buy' }, { has_exited: { segment: 11 } }] }],
    });
    expect(() => renumber(query, new Map([[3, 13]]))).toThrow();
  });
});
