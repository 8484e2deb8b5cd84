// CohortSeries (the dashboard's per-minute series): live entries/exits by commit minute, replays moving sizes only,
// sizes exact back from the current size, the window trimmed, entries from the startup read arriving out of order.

import { describe, expect, it } from 'vitest';
import { CohortSeries } from './series.js';
import type { TransitionLogEntry } from '../reactions/contract.js';

const MINUTE = 60_000;
const T0 = Date.parse('2026-11-25T10:00:00.000Z');
const entry = (at: number, kinds: ('entered' | 'exited')[], replay = false, cohort = 1): TransitionLogEntry => ({
  org: 'o',
  user: 'u',
  event_id: null,
  at,
  transitions: kinds.map((kind) => ({ cohort, kind, time: at })),
  ...(replay ? { replay: true as const } : {}),
});

describe('CohortSeries', () => {
  it('counts live transitions per commit minute and walks sizes back from now', () => {
    const series = new CohortSeries(5);
    series.add(entry(T0 + 1000, ['entered']));
    series.add(entry(T0 + 2 * MINUTE, ['entered', 'entered']));
    series.add(entry(T0 + 2 * MINUTE + 5, ['exited']));
    series.add(entry(T0 + 3 * MINUTE, ['entered'], true)); // a catch-up: size only
    series.add(entry(T0 + 3 * MINUTE, ['entered'], false, 2)); // another cohort
    const points = series.read('o', 1, T0 + 4 * MINUTE + 10, 3);
    expect(points.map((p) => [p.time.slice(11, 16), p.size, p.entered, p.exited])).toEqual([
      ['10:00', 1, 1, 0],
      ['10:01', 1, 0, 0],
      ['10:02', 2, 2, 1],
      ['10:03', 3, 0, 0],
      ['10:04', 3, 0, 0],
    ]);
  });

  it('adds entries read out of order and drops minutes that left the window', () => {
    const series = new CohortSeries(3);
    series.add(entry(T0 + 5 * MINUTE, ['entered']));
    series.add(entry(T0 + 1 * MINUTE, ['entered'])); // older: kept in order
    series.add(entry(T0 + 4 * MINUTE, ['exited']));
    const points = series.read('o', 1, T0 + 5 * MINUTE, 1);
    expect(points.map((p) => [p.time.slice(11, 16), p.size, p.entered, p.exited])).toEqual([
      ['10:03', 1, 0, 0],
      ['10:04', 0, 0, 1],
      ['10:05', 1, 1, 0],
    ]);
    // A cohort never seen: flat at its size; sizes never negative.
    expect(series.read('o', 9, T0, 0).every((p) => p.size === 0 && p.entered === 0)).toBe(true);
    expect(series.read('o', 1, T0 + 5 * MINUTE, 0).map((p) => p.size)).toEqual([0, 0, 0]);
  });
});
