// Which top-level keys of an event's properties a plan can read: the first segment of every `where` path of its
// event-reading clauses (expressions, engagement clauses, transition clauses: E15, E20), and the engagement figures
// the trackers read (E6). A reader of stored events may build only these (server/domain/events/engine-reader.ts):
// a plan answers the same for an event whatever other top-level properties it carries, because nothing else reads
// them. Imported data (connections filters, segments) is not an event's properties and is not counted.

import type { Clause, Query, Where } from '../query/ast.js';
import { TRACKER_KEYS } from '../state/trackers.js';

/** The top-level property keys `queries` can read of an event; undefined when it may read the whole object. */
export function eventPropertyKeysOf(queries: readonly Query[]): ReadonlySet<string> | undefined {
  const keys = new Set<string>(TRACKER_KEYS);
  for (const query of queries) {
    for (const group of query.and) {
      for (const clause of group.or) {
        const where = eventWhereOf(clause);
        if (where === undefined) continue;
        for (const predicate of where.kind === 'predicate' ? [where] : where.items) {
          const first = predicate.path[0];
          // A path naming the properties object itself (the validator allows none, E15) would read it whole.
          if (first === undefined) return undefined;
          keys.add(first);
        }
      }
    }
  }
  return keys;
}

/** The `where` a clause applies to an event's properties (undefined: none, or the clause reads no event). */
function eventWhereOf(clause: Clause): Where | undefined {
  switch (clause.kind) {
    case 'expression':
    case 'engaged_time':
    case 'engaged_completion':
    case 'engaged_views':
    case 'transition':
      return clause.where;
    case 'membership':
    case 'connections':
      return undefined;
  }
}
