// Reads of the global transitions log `t!{cursor}` (contract.ts; written by server/ingest/tick/commit-log.ts).

import type { Store } from '../../store/contract.js';
import { fromSeqPart } from '../../store/layout.js';
import { reactionsKeys, type TransitionLogEntry } from './contract.js';

export interface LoggedEntry {
  readonly cursor: number;
  readonly entry: TransitionLogEntry;
}

/** The log's entries after `afterCursor` (0: from the start), in commit order; at most `limit` when given. */
export async function* readTransitionLog(store: Store, afterCursor = 0, limit?: number): AsyncIterable<LoggedEntry> {
  const range = { gt: reactionsKeys.logEntry(afterCursor), lt: 't"', ...(limit === undefined ? {} : { limit }) };
  for await (const [key, entry] of store.iterate<TransitionLogEntry>(range)) {
    yield { cursor: fromSeqPart(key.slice(key.lastIndexOf('!') + 1)), entry };
  }
}
