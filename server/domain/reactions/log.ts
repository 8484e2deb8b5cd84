// The global transitions log `t!{cursor}` (contract.ts; written by server/ingest/tick/commit-log.ts): how an entry is
// stored, and the log's reads.

import type { Store } from '../../store/contract.js';
import { fromSeqPart } from '../../store/layout.js';
import { reactionsKeys, type TransitionLogEntry } from './contract.js';

export interface LoggedEntry {
  readonly cursor: number;
  readonly entry: TransitionLogEntry;
}

/**
 * An entry as stored: `[org, user, event_id, at, moves, time, flags?]`. `moves` are the transitions in order, an
 * entry as its cohort's code and an exit as `-(code + 1)`; `time` is the transitions' time when they share one (an
 * event's do), else one per move; `flags` 1 = replay, 2 = quiet, absent when neither. About 40 % of the bytes of the
 * entry as a map with named fields, which entries written before 2026-11-28 night are, and which an entry whose codes
 * are not whole numbers from 0 stays. The log is ~0.9 writes per tracked event and kept 24 hours (D38), so its bytes
 * are a large part of what LevelDB writes and compacts (bench/store-keys.ts `log-entries` against `log-compact`).
 */
export type StoredLogEntry = readonly [string, string, string | null, number, readonly number[], number | readonly number[], number?];

/** The stored form of an entry (`StoredLogEntry`, or the entry itself where that cannot hold it). */
export function storedLogEntry(entry: TransitionLogEntry): StoredLogEntry | TransitionLogEntry {
  const { transitions } = entry;
  const first = transitions[0]?.time;
  const moves: number[] = [];
  let shared = true;
  for (const t of transitions) {
    if (!Number.isSafeInteger(t.cohort) || t.cohort < 0 || (t.kind !== 'entered' && t.kind !== 'exited')) return entry;
    moves.push(t.kind === 'entered' ? t.cohort : -(t.cohort + 1));
    if (t.time !== first) shared = false;
  }
  // One time when the moves share it (an event's do): no array of times is made for them.
  const time = shared && first !== undefined ? first : transitions.map((t) => t.time);
  const flags = (entry.replay === true ? 1 : 0) | (entry.quiet === true ? 2 : 0);
  return flags === 0 ? [entry.org, entry.user, entry.event_id, entry.at, moves, time] : [entry.org, entry.user, entry.event_id, entry.at, moves, time, flags];
}

/** The entry a stored value holds: the compact form, or an entry stored as a map (older data directories). */
export function logEntryOf(stored: StoredLogEntry | TransitionLogEntry): TransitionLogEntry {
  if (!Array.isArray(stored)) return stored as TransitionLogEntry;
  const [org, user, event_id, at, moves, time, flags = 0] = stored as StoredLogEntry;
  const transitions = moves.map((move, i) => ({
    cohort: move >= 0 ? move : -move - 1,
    kind: move >= 0 ? ('entered' as const) : ('exited' as const),
    time: typeof time === 'number' ? time : (time[i] as number),
  }));
  const entry: { -readonly [K in keyof TransitionLogEntry]: TransitionLogEntry[K] } = { org, user, event_id, transitions, at };
  if ((flags & 1) !== 0) entry.replay = true;
  if ((flags & 2) !== 0) entry.quiet = true;
  return entry;
}

/** The log's entries after `afterCursor` (0: from the start), in commit order; at most `limit` when given. */
export async function* readTransitionLog(store: Store, afterCursor = 0, limit?: number): AsyncIterable<LoggedEntry> {
  const range = { gt: reactionsKeys.logEntry(afterCursor), lt: 't"', ...(limit === undefined ? {} : { limit }) };
  for await (const [key, stored] of store.iterate<StoredLogEntry | TransitionLogEntry>(range)) {
    yield { cursor: fromSeqPart(key.slice(key.lastIndexOf('!') + 1)), entry: logEntryOf(stored) };
  }
}
