// The transitions log's stored form (log.ts): every entry reads back as it was logged, field by field and in the key
// order the cluster's message ids hash (cluster/transitions.ts); entries stored as maps (older data directories, or
// codes the compact form cannot hold) read as before; the log's reads take both.

import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../../store/memory.js';
import { encodeValue, decodeValue } from '../../store/values.js';
import { reactionsKeys, type TransitionLogEntry } from './contract.js';
import { logEntryOf, readTransitionLog, storedLogEntry, type StoredLogEntry } from './log.js';

const ORG = 'a0000000-0000-4000-8000-000000000001';
const USER = 'b0000000-0000-4000-8000-000000000002';
const EVENT = 'c0000000-0000-4000-8000-000000000003';
const T = Date.UTC(2026, 10, 28, 12, 0, 0, 123);

function entry(transitions: TransitionLogEntry['transitions'], extra: Partial<TransitionLogEntry> = {}): TransitionLogEntry {
  return { org: ORG, user: USER, event_id: EVENT, transitions, at: T + 5, ...extra };
}

/** Through the store's codec, as LevelDB keeps it. */
function roundTrip(logged: TransitionLogEntry): TransitionLogEntry {
  return logEntryOf(decodeValue<StoredLogEntry | TransitionLogEntry>(encodeValue(storedLogEntry(logged))));
}

const CASES: readonly [string, TransitionLogEntry][] = [
  ['one entry', entry([{ cohort: 7, kind: 'entered', time: T }])],
  ['one exit, of code 0', entry([{ cohort: 0, kind: 'exited', time: T }])],
  ['an entry of code 0 beside an exit of code 0', entry([{ cohort: 0, kind: 'entered', time: T }, { cohort: 0, kind: 'exited', time: T }])],
  ['moves in their order, one time', entry([{ cohort: 12, kind: 'exited', time: T }, { cohort: 3, kind: 'entered', time: T }, { cohort: 40, kind: 'entered', time: T }])],
  ['moves with times of their own', entry([{ cohort: 2, kind: 'entered', time: T }, { cohort: 5, kind: 'exited', time: T + 1 }, { cohort: 9, kind: 'entered', time: T }])],
  ['a deadline re-evaluation (no event)', entry([{ cohort: 1, kind: 'exited', time: T }], { event_id: null })],
  ['a replay', entry([{ cohort: 1, kind: 'entered', time: T }], { event_id: null, replay: true })],
  ['a quiet entry', entry([{ cohort: 1, kind: 'entered', time: T }], { quiet: true })],
  ['a quiet replay', entry([{ cohort: 1, kind: 'entered', time: T }], { event_id: null, replay: true, quiet: true })],
  ['large codes and times', entry([{ cohort: 2 ** 31 + 5, kind: 'exited', time: 8.64e15 }, { cohort: 65_536, kind: 'entered', time: -1 }])],
];

describe('the transitions log stored compactly (log.ts)', () => {
  it.each(CASES)('%s reads back as logged, in the same key order', (_, logged) => {
    const stored = storedLogEntry(logged);
    expect(Array.isArray(stored)).toBe(true);
    const read = roundTrip(logged);
    expect(read).toStrictEqual(logged);
    // The cluster's message id hashes JSON of the entry's fields: the same text whether read back or as logged.
    expect(JSON.stringify(read)).toBe(JSON.stringify(logged));
  });

  it('takes a fraction of the bytes of the entry as a map', () => {
    const five = entry([0, 1, 2, 3, 4].map((k) => ({ cohort: 10 + k * 7, kind: k % 2 === 0 ? 'entered' : 'exited', time: T })));
    const compact = encodeValue(storedLogEntry(five)).byteLength;
    const map = encodeValue(five).byteLength;
    expect(compact).toBeLessThan(map * 0.45);
  });

  it('keeps an entry it cannot hold as the map it is (codes that are not whole numbers from 0)', () => {
    for (const cohort of [-1, 1.5, Number.NaN, 2 ** 53]) {
      const odd = entry([{ cohort, kind: 'entered', time: T }]);
      expect(storedLogEntry(odd)).toBe(odd);
      expect(roundTrip(odd)).toStrictEqual(odd);
    }
    const kind = entry([{ cohort: 1, kind: 'moved' as 'entered', time: T }]);
    expect(storedLogEntry(kind)).toBe(kind);
  });

  it('reads a log holding both forms in cursor order (a data directory written before and after)', async () => {
    const store = new MemoryStore();
    const older = entry([{ cohort: 1, kind: 'entered', time: T }]);
    const newer = entry([{ cohort: 2, kind: 'exited', time: T + 9 }], { event_id: null, replay: true });
    await store.batch([
      { type: 'put', key: reactionsKeys.logEntry(1), value: older },
      { type: 'put', key: reactionsKeys.logEntry(2), value: storedLogEntry(newer) },
    ]);
    const read: [number, TransitionLogEntry][] = [];
    for await (const { cursor, entry: logged } of readTransitionLog(store)) read.push([cursor, logged]);
    expect(read).toStrictEqual([
      [1, older],
      [2, newer],
    ]);
  });
});
