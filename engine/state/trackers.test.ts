// Effective time, sessions and views (E1–E3, D31) as the trackers derive them.

import { describe, expect, it } from 'vitest';
import { MINUTE, T0, ev } from '../../test/support/engine-queries.js';
import { SESSION_CHANGED, VIEW_CHANGED, advanceTrackers } from './trackers.js';
import { newUserState } from './user-state.js';

function changesOf(events: ReturnType<typeof ev>[]) {
  const u = newUserState();
  return events.map((event) => {
    const changes = advanceTrackers(u, event);
    return { session: (changes & SESSION_CHANGED) !== 0, view: (changes & VIEW_CHANGED) !== 0, time: u.time, sessionStart: u.sessionStartIndex, viewStart: u.viewStartIndex };
  });
}

describe('trackers (E1–E3)', () => {
  it('E1: effective time never goes back', () => {
    expect(changesOf([ev('A', T0 + 10), ev('A', T0), ev('A', T0 + 20)]).map((c) => c.time)).toEqual([T0 + 10, T0 + 10, T0 + 20]);
  });

  it('E2: a derived session continues under 30 minutes and restarts at 30 minutes exactly', () => {
    const out = changesOf([ev('A', T0), ev('A', T0 + 30 * MINUTE - 1), ev('A', T0 + 60 * MINUTE - 1)]);
    expect(out.map((c) => c.session)).toEqual([true, false, true]);
  });

  it('E2: session_id wins; a null session_id within 30 minutes keeps the previous key, even a given one', () => {
    const out = changesOf([
      ev('A', T0, {}, { session_id: 's1' }),
      ev('A', T0 + 1, {}, { session_id: null }),
      ev('A', T0 + 2, {}, { session_id: 's1' }),
      ev('A', T0 + 3, {}, { session_id: 's2' }),
      ev('A', T0 + 40 * MINUTE, {}, { session_id: 's2' }),
      ev('A', T0 + 80 * MINUTE),
      ev('A', T0 + 81 * MINUTE, {}, { session_id: 's2' }),
    ]);
    expect(out.map((c) => c.session)).toEqual([true, false, false, true, false, true, true]);
    expect(out.map((c) => c.sessionStart)).toEqual([0, 0, 0, 3, 3, 5, 6]);
  });

  it('E3: a Pageview without view_id opens a view; other events stay in it; view_id wins', () => {
    const out = changesOf([
      ev('A', T0),
      ev('B', T0 + 1),
      ev('Pageview', T0 + 2),
      ev('B', T0 + 3),
      ev('Pageview', T0 + 4),
      ev('B', T0 + 5, {}, { view_id: 'v' }),
      ev('B', T0 + 6),
      ev('Pageview', T0 + 7, {}, { view_id: 'v' }),
      ev('B', T0 + 8, {}, { view_id: 'w' }),
    ]);
    expect(out.map((c) => c.view)).toEqual([true, false, true, false, true, true, false, false, true]);
  });
});
