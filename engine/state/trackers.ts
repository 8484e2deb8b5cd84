// Time, session and view trackers (E1–E3, D31) and the engagement figures of an event (E6), advanced once per event
// before any slot sees it.

import type { EngineEvent } from '../api.js';
import { ENGAGEMENT_EVENT } from './slots/engaged-time.js';
import { VIEW_DERIVED, VIEW_GIVEN, VIEW_NONE, type UserState } from './user-state.js';

export const SESSION_CHANGED = 1;
export const VIEW_CHANGED = 2;

/** E2: a gap of this many ms or more (with no session_id) starts a new derived session. */
export const SESSION_GAP_MS = 1_800_000;

const PAGEVIEW = 'Pageview';

/** The properties of an engagement event the trackers read (E6): its engaged seconds and its completion. */
export const TRACKER_KEYS = ['engaged_time', 'completion'] as const;
const [ENGAGED_TIME, COMPLETION] = TRACKER_KEYS;

/** Advances the trackers to `event`; returns which runs changed (SESSION_CHANGED | VIEW_CHANGED). */
export function advanceTrackers(u: UserState, event: EngineEvent): number {
  const first = u.count === 0;
  // E1: effective time never goes back; a non-finite time counts as "now" (the previous effective time).
  const given = Number.isFinite(event.time) ? event.time : first ? 0 : u.time;
  const t = first ? given : Math.max(given, u.time);
  // E2 measures the gap from the previous event, not from a re-evaluation (E20); E1's max includes both.
  const gap = first ? 0 : t - u.eventTime;
  u.prevTime = first ? t : u.time;
  u.time = t;
  u.eventTime = t;
  u.index = u.count;
  u.count++;

  let changes = 0;
  const sessionId = event.session_id;
  if (sessionId !== undefined && sessionId !== null) {
    if (first || u.sessionKey !== sessionId) changes |= SESSION_CHANGED;
    u.sessionKey = sessionId;
  } else if (first || gap >= SESSION_GAP_MS) {
    changes |= SESSION_CHANGED;
    u.sessionKey = null;
  }

  const viewId = event.view_id;
  if (viewId !== undefined && viewId !== null) {
    if (first || u.viewKind !== VIEW_GIVEN || u.viewKey !== viewId) changes |= VIEW_CHANGED;
    u.viewKind = VIEW_GIVEN;
    u.viewKey = viewId;
  } else if (event.name === PAGEVIEW) {
    changes |= VIEW_CHANGED;
    u.viewKind = VIEW_DERIVED;
    u.viewKey = null;
  } else if (first) {
    changes |= VIEW_CHANGED;
    u.viewKind = VIEW_NONE;
    u.viewKey = null;
  }

  if ((changes & SESSION_CHANGED) !== 0) {
    u.sessionStartIndex = u.index;
    u.sessionStartTime = t;
  }
  if ((changes & VIEW_CHANGED) !== 0) {
    u.viewStartIndex = u.index;
    u.viewStartTime = t;
  }

  if (event.name === ENGAGEMENT_EVENT) {
    const seconds = event.properties[ENGAGED_TIME];
    const completion = event.properties[COMPLETION];
    u.engagedSeconds = typeof seconds === 'number' && Number.isFinite(seconds) && seconds >= 0 ? seconds : 0;
    u.engagedCompletion = typeof completion === 'number' && Number.isFinite(completion) ? completion : Number.NaN;
  }
  return changes;
}
