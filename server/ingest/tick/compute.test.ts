// splitByHistory: a group's users for one owner go as one task unless they carry at least twice `taskEvents` history
// events (catch-ups, replays); then as parts of about `taskEvents` each, every user once, in order, by organization.

import { describe, expect, it } from 'vitest';
import type { UserWork } from './tick.js';
import { splitByHistory } from './compute.js';

/** A user with `history` events of catch-up (or of replay when `replay`). */
function user(key: string, history: number, replay = false): UserWork {
  const events = { bytes: new Uint8Array(0), count: history };
  return {
    key,
    replay: replay ? Array.from({ length: history }, () => ({ name: 'Pageview', time: 0, properties: {}, session_id: null, view_id: null })) : [],
    decision: replay || history === 0 ? { kind: 'none', mark: 1 } : { kind: 'inline', mark: 2, stale: [1], catchup: { source: null, events, stale: [1] } },
  } as unknown as UserWork;
}

const keys = (parts: Map<string, UserWork[]>[]) => parts.map((part) => [...part].map(([org, users]) => `${org}:${users.map((work) => work.key).join(',')}`).join(' '));

describe('splitByHistory', () => {
  it('keeps a group with little history whole (the usual live group)', () => {
    const byOrg = new Map([['o1', [user('a', 0), user('b', 3), user('c', 5, true)]]]);
    expect(splitByHistory(byOrg, 5)).toEqual([byOrg]);
  });

  it('cuts a group heavy with history into parts of about taskEvents, every user once and in order', () => {
    const byOrg = new Map([
      ['o1', [user('a', 4), user('b', 4), user('c', 0), user('d', 9)]],
      ['o2', [user('e', 2, true), user('f', 3)]],
    ]);
    expect(keys(splitByHistory(byOrg, 6))).toEqual(['o1:a,b', 'o1:c,d', 'o2:e,f']);
    expect(keys(splitByHistory(byOrg, 100))).toEqual(['o1:a,b,c,d o2:e,f']);
  });
});
