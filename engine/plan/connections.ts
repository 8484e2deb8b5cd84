// Connections import clauses (E14): count the user's rows of an import that pass `filters` and lie within `during`,
// compared with `frequency`. Rows come from the context at each event; per-rows-list work is cached by identity.

import type { ConnectionRow } from '../api.js';
import type { ConnectionsClause } from '../query/ast.js';
import { compileComparison } from './comparison.js';
import { compileWhere } from './conditions/index.js';
import type { ContextMemo } from './context-memo.js';
import type { ClauseTest } from './plan.js';
import { inFixedWindow } from '../state/slots/window.js';

interface PreparedRows {
  readonly times: Float64Array;
  readonly pass: Uint8Array;
  /** For all-time, fixed windows, `first N`, `last N`: the count, which does not depend on now. */
  readonly fixedCount: number | undefined;
}

export function compileConnections(clause: ConnectionsClause, memo: ContextMemo): ClauseTest {
  const filter = clause.filters === undefined ? undefined : compileWhere(clause.filters);
  const test = compileComparison(clause.frequency);
  const negate = clause.op === 'not_in_connections_import_segment';
  const provider = clause.provider;
  const providerIndex = memo.providerIndex(provider);
  const during = clause.during;
  const preparedSlot = memo.preparedSlot();

  const prepare = (rows: readonly ConnectionRow[]): PreparedRows => {
    const times = Float64Array.from(rows, (row) => row.time);
    const pass = Uint8Array.from(rows, (row) => (filter === undefined || filter(row.properties) ? 1 : 0));
    return { times, pass, fixedCount: countFixed(times, pass) };
  };

  const countFixed = (times: Float64Array, pass: Uint8Array): number | undefined => {
    const kind = during?.kind;
    if (kind === 'the_last' || kind === 'this_session' || kind === 'current_view') return undefined;
    if (kind === 'first' || kind === 'last') {
      // E14: among the N earliest / latest rows by time (ties keep the context's order).
      const order = Array.from(times.keys()).sort((a, b) => (times[a] as number) - (times[b] as number) || a - b);
      const n = (during as { count: number }).count;
      const chosen = kind === 'first' ? order.slice(0, n) : order.slice(Math.max(0, order.length - n));
      return chosen.reduce((sum, i) => sum + (pass[i] as number), 0);
    }
    let count = 0;
    for (let i = 0; i < times.length; i++) if (pass[i] === 1 && inFixedWindow(during, times[i] as number)) count++;
    return count;
  };

  return (u, ctx) => {
    const rows = memo.connectionRows(ctx, providerIndex, provider);
    let count = 0;
    if (rows.length > 0) {
      // Prepared once per rows list (kept by the memo by list identity, with the other clauses' preparations).
      const byClause = memo.preparedOf(providerIndex);
      let prepared = byClause[preparedSlot] as PreparedRows | undefined;
      if (prepared === undefined) {
        prepared = prepare(rows);
        byClause[preparedSlot] = prepared;
      }
      if (prepared.fixedCount !== undefined) {
        count = prepared.fixedCount;
      } else {
        const now = u.time;
        const from =
          during?.kind === 'the_last' ? now - during.ms : during?.kind === 'this_session' ? u.sessionStartTime : u.viewStartTime;
        const fromInclusive = during?.kind !== 'the_last';
        const { times, pass } = prepared;
        for (let i = 0; i < times.length; i++) {
          const t = times[i] as number;
          if (pass[i] === 1 && t <= now && (fromInclusive ? t >= from : t > from)) count++;
        }
      }
    }
    return test(count) !== negate;
  };
}
