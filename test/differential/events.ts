// Random event streams and imported data for the differential test: a small vocabulary of names and properties
// whose values hit every condition family, including missing, null and wrong-typed values (D34, E15–E17).

import type { ConnectionRow, EngineEvent, SegmentContext } from '../../engine/api.js';
import type { Rng } from './random.js';

export const T0 = Date.parse('2026-03-01T00:00:00.000Z');
export const MINUTE = 60_000;
export const HOUR = 3_600_000;
export const DAY = 86_400_000;

export const EVENT_NAMES = ['Pageview', 'PageviewEngagement', 'Click', 'Purchase', 'Signup'] as const;

/** Date strings that properties carry and date conditions compare with (one written with an offset). */
export const DATES = ['2026-03-01T00:00:00.000Z', '2026-03-01T01:00:00+01:00', '2026-03-01T12:30:00Z', '2026-03-02T00:00:00.000Z', '2026-04-01T08:00:00Z'];
export const STRINGS = ['', 'a', 'ab', 'abc', 'b', 'Ab', 'xyz'];
export const INTEGERS = [0, 1, 2, 3, 4, 5];
export const FLOATS = [0, 0.5, 1.5, 2, 2.5, 3.25];

/** A value or one of the ways of being absent or wrong-typed; `undefined` means "leave the key out". */
function maybe(rng: Rng, good: () => unknown, wrong: readonly unknown[]): unknown {
  const roll = rng.next();
  if (roll < 0.7) return good();
  if (roll < 0.8) return undefined;
  if (roll < 0.87) return null;
  return rng.pick(wrong);
}

const randomString = (rng: Rng): unknown => maybe(rng, () => rng.pick(STRINGS), [3, ['a'], true]);
const randomNumber = (rng: Rng): unknown => maybe(rng, () => (rng.chance(0.75) ? rng.pick(INTEGERS) : rng.pick(FLOATS)), ['3', true, [2]]);
const randomDate = (rng: Rng): unknown => maybe(rng, () => rng.pick(DATES), ['not a date', '', T0, '2026-03-01']);
const randomBoolean = (rng: Rng): unknown => maybe(rng, () => rng.chance(0.5), ['true', 0]);

function randomList(rng: Rng): unknown {
  return maybe(
    rng,
    () =>
      rng.pick([
        () => [],
        () => Array.from({ length: rng.int(1, 3) }, () => rng.pick(STRINGS)),
        () => Array.from({ length: rng.int(1, 3) }, () => rng.pick(INTEGERS)),
        () => [rng.pick(FLOATS), rng.pick(INTEGERS)],
        () => [rng.pick(DATES), 'x'],
        () => ['a', 2, null, rng.pick(DATES)],
        () => ['1', 2, '2.5', 'ab'], // numbers written as strings are not numbers (E16)
      ])(),
    ['a', 2],
  );
}

function randomItem(rng: Rng): unknown {
  if (rng.chance(0.1)) return rng.pick([3, null, ['x'], 'key']);
  const item: Record<string, unknown> = {};
  assign(item, 'key', randomString(rng));
  assign(item, 'v', randomNumber(rng));
  assign(item, 'w', randomString(rng));
  assign(item, 'flag', randomBoolean(rng));
  if (rng.chance(0.3)) item['sub'] = { v: randomNumber(rng) };
  if (rng.chance(0.3)) item['parts'] = Array.from({ length: rng.int(0, 2) }, () => ({ v: randomNumber(rng) }));
  return item;
}

function assign(target: Record<string, unknown>, key: string, value: unknown): void {
  if (value !== undefined) target[key] = value;
}

/** Properties over the shared vocabulary: s, n, d, b, l, o (nested), items (list of objects). */
export function randomProperties(rng: Rng): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  assign(properties, 's', randomString(rng));
  assign(properties, 'n', randomNumber(rng));
  assign(properties, 'd', randomDate(rng));
  assign(properties, 'b', randomBoolean(rng));
  assign(properties, 'l', randomList(rng));
  assign(
    properties,
    'o',
    maybe(rng, () => ({ s: randomString(rng), n: randomNumber(rng), d: randomDate(rng), deep: { s: randomString(rng) } }), ['o', [1]]),
  );
  assign(
    properties,
    'items',
    maybe(rng, () => Array.from({ length: rng.int(0, 4) }, () => randomItem(rng)), ['items', { key: 'a' }]),
  );
  return JSON.parse(JSON.stringify(properties)) as Record<string, unknown>; // drop undefined nested values
}

export interface EventOptions {
  /** Chance that an event is earlier than the previous one (E1). */
  readonly lateChance?: number;
}

const GAPS = [0, 1000, MINUTE, MINUTE, 2 * MINUTE, 5 * MINUTE, 10 * MINUTE, 30 * MINUTE - 1, 30 * MINUTE, 31 * MINUTE, 2 * HOUR, DAY, 8 * DAY, 31 * DAY];

/** A user's stream: mostly increasing times with gaps around the 30-minute session boundary, a few late events. */
export function randomEvents(rng: Rng, n: number, options: EventOptions = {}): EngineEvent[] {
  const lateChance = options.lateChance ?? 0.08;
  const events: EngineEvent[] = [];
  let time = T0 + rng.pick([0, MINUTE, HOUR]);
  for (let i = 0; i < n; i++) {
    if (i > 0) time += rng.chance(lateChance) ? -rng.pick([1000, 5 * MINUTE, HOUR]) : rng.pick(GAPS);
    const name = rng.pick(['Pageview', 'Pageview', 'PageviewEngagement', 'PageviewEngagement', 'PageviewEngagement', 'Click', 'Click', 'Purchase', 'Signup']);
    const properties = randomProperties(rng);
    if (name === 'PageviewEngagement') {
      assign(properties, 'engaged_time', maybe(rng, () => rng.pick([0, 1, 5, 10, 30, 2.5]), [-3, '7']));
      // D32 says 0..1, but nothing enforces it: out-of-range completions are taken as given (E9, E8)
      assign(properties, 'completion', maybe(rng, () => rng.pick([0, 0.25, 0.5, 0.75, 1]), ['0.5', -0.25, -1, 1.5]));
    }
    const event: { -readonly [K in keyof EngineEvent]: EngineEvent[K] } = { name, time, properties };
    if (rng.chance(0.2)) event.session_id = rng.chance(0.8) ? rng.pick(['s1', 's2']) : null;
    if (rng.chance(0.15)) event.view_id = rng.chance(0.8) ? rng.pick(['v1', 'v2']) : null;
    events.push(event);
  }
  return events;
}

/** Imported data fixed for a run: segment memberships and connection rows with distinct times. */
export interface RandomContext extends SegmentContext {
  readonly segments: readonly string[];
  readonly rows: Readonly<Record<string, readonly ConnectionRow[]>>;
}

export function randomContext(rng: Rng, instants: readonly number[]): RandomContext {
  const segments: string[] = [];
  for (const relation of ['2nd', '3rd']) {
    for (const provider of ['p1', 'p2']) {
      for (const segment of ['a', 'b']) if (rng.chance(0.4)) segments.push(`${relation}/${provider}/${segment}`);
    }
  }
  const rows: Record<string, ConnectionRow[]> = {};
  for (const provider of ['c1', 'c2']) {
    const times = new Set<number>();
    const count = rng.int(0, 5);
    for (let i = 0; i < count; i++) times.add(randomRowTime(rng, instants));
    rows[provider] = [...times].map((time) => ({ time, properties: randomProperties(rng) }));
  }
  return contextOf(segments, rows);
}

function randomRowTime(rng: Rng, instants: readonly number[]): number {
  return rng.chance(0.6) && instants.length > 0 ? rng.pick(instants) + rng.pick([0, 0, 1, -1]) : T0 + rng.int(-2, 60) * HOUR;
}

function contextOf(segments: readonly string[], rows: Readonly<Record<string, readonly ConnectionRow[]>>): RandomContext {
  return {
    segments,
    rows,
    inImportedSegment: (relation, provider, segment) => segments.includes(`${relation}/${provider}/${segment}`),
    connectionRows: (provider) => rows[provider] ?? [],
    // Never changed once made (changeContext makes a new one): the engine keeps decisions that read it alone.
    constant: true,
  };
}

/**
 * Imported data after a load (D27): a segment membership added or removed, and/or rows added to a provider (new
 * lists: the engine may cache per rows list). Row times are distinct within a provider and often hit `instants`.
 */
export function changeContext(rng: Rng, ctx: RandomContext, instants: readonly number[]): RandomContext {
  const segments = [...ctx.segments];
  const rows: Record<string, readonly ConnectionRow[]> = { ...ctx.rows };
  const changes = rng.int(1, 3);
  for (let c = 0; c < changes; c++) {
    if (rng.chance(0.5)) {
      const key = `${rng.pick(['2nd', '3rd'])}/${rng.pick(['p1', 'p2'])}/${rng.pick(['a', 'b'])}`;
      const at = segments.indexOf(key);
      if (at >= 0) segments.splice(at, 1);
      else segments.push(key);
    } else {
      const provider = rng.pick(['c1', 'c2', 'c3']);
      const known = rows[provider] ?? [];
      const time = randomRowTime(rng, instants);
      if (known.some((row) => row.time === time)) continue;
      // Not always appended in time order: the engine sorts by time (E14).
      const row = { time, properties: randomProperties(rng) };
      rows[provider] = rng.chance(0.5) ? [...known, row] : [row, ...known];
    }
  }
  return contextOf(segments, rows);
}
