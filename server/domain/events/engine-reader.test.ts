// The replay reader (engine-reader.ts) against what it replaces: for any stored records, the engine events it reads
// are exactly `decodeValues` then `toEngineEvent` (same values, same key order, same types), whether it builds them
// itself or leaves a record or a string to msgpackr; bytes msgpackr cannot read fail it too.

import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import { concatValues, decodeValues, encodeValue } from '../../store/values.js';
import { createRng, type Rng } from '../../../test/differential/random.js';
import { toEngineEvent, unpackEngineEvents, type StoredEvent } from './record.js';

const WORDS = ['look', 'buy', '/p/12', 'été', '日本語', '😀 ok', 'a'.repeat(40), 'b'.repeat(300), 'c'.repeat(5000), 'ü'.repeat(70), '', '__proto__'];
const KEYS = ['kind', 'path', '__proto__', 'constructor', '1', '007', 'clé', 'k'.repeat(33), '', 'toString'];

function randomValue(rng: Rng, depth: number, exotic: boolean): unknown {
  const roll = rng.int(0, exotic ? 15 : 12);
  switch (roll) {
    case 0:
      return rng.int(0, 127);
    case 1:
      return rng.int(-32, -1);
    case 2:
      return rng.pick([200, 70_000, 4_000_000_000, -100, -40_000, -3_000_000_000, 2 ** 40, -(2 ** 45), Number.MAX_SAFE_INTEGER, -0]);
    case 3:
      return rng.pick([0.5, -1.25, 1e300, Number.MIN_VALUE, 3.14159]);
    case 4:
    case 5:
      return rng.pick(WORDS);
    case 6:
      return rng.pick([true, false, null]);
    case 7:
    case 8:
      return depth > 2 ? rng.pick(WORDS) : Array.from({ length: rng.pick([0, 1, 3, 20]) }, () => randomValue(rng, depth + 1, exotic));
    case 9:
    case 10:
    case 11:
    case 12:
      return depth > 2 ? rng.int(0, 9) : randomObject(rng, depth + 1, exotic);
    case 13:
      return Uint8Array.from([1, 2, 3]);
    case 14:
      return BigInt(2) ** BigInt(60);
    default:
      return new Date(Date.UTC(2026, 0, rng.int(1, 28)));
  }
}

function randomObject(rng: Rng, depth: number, exotic: boolean): Record<string, unknown> {
  const object: Record<string, unknown> = {};
  const size = rng.pick([0, 1, 2, 4, 17]);
  for (let i = 0; i < size; i++) {
    const key = rng.chance(0.3) ? rng.pick(KEYS) : `p${rng.int(0, 40)}`;
    Object.defineProperty(object, key, { value: randomValue(rng, depth, exotic), enumerable: true, writable: true, configurable: true });
  }
  return object;
}

/** A stored record, sometimes with the shapes older or odd data may have (other key orders, extra keys, gaps). */
function randomRecord(rng: Rng, seq: number, exotic: boolean): Record<string, unknown> {
  const timeMs = Date.UTC(2026, 0, 1) + rng.int(0, 10_000_000) * 1000;
  const record: Record<string, unknown> = {
    id: `e-${seq}-${rng.int(0, 1e9)}`,
    user_id: rng.pick(['u1', 'ünïcode-user', 'x'.repeat(36)]),
    // Names of the same length differing in one byte, first or last (the reader reuses a name read before).
    name: rng.pick(['Pageview', 'Click', 'Share', 'Clicm', 'Évènement', 'n'.repeat(40)]),
    time: new Date(timeMs).toISOString(),
    properties: randomObject(rng, 0, exotic),
    seq,
    timeMs,
  };
  if (rng.chance(0.3)) record['session_id'] = rng.pick(['s1', 'séance', null]);
  if (rng.chance(0.3)) record['view_id'] = rng.pick(['v1', 'vue-é', null]);
  if (rng.chance(0.1)) record['extra_field_with_a_long_name_over_32_bytes'] = randomValue(rng, 0, exotic);
  if (rng.chance(0.1)) delete record['timeMs'];
  if (rng.chance(0.2)) return Object.fromEntries(Object.entries(record).reverse());
  return record;
}

function expectSameEvents(bytes: Uint8Array): void {
  const expected = decodeValues<StoredEvent>(bytes).map(toEngineEvent);
  const read = unpackEngineEvents({ bytes, count: expected.length });
  // Node's strict comparison: vitest's would compare a `constructor` property (a key like any other here) by identity.
  expect(isDeepStrictEqual(read, expected)).toBe(true);
  // Same property order at every level (the comparison above does not look at it).
  const order = (value: unknown): unknown =>
    value !== null && typeof value === 'object' && !(value instanceof Uint8Array) && !(value instanceof Date)
      ? Object.entries(value).map(([key, inner]) => [key, order(inner)])
      : typeof value === 'bigint'
        ? `${value}n`
        : value;
  expect(order(read)).toStrictEqual(order(expected));
}

describe('reading stored records as engine events', () => {
  it('gives what decoding the records and converting them gives, for JSON-like records', () => {
    const rng = createRng(12);
    for (let round = 0; round < 60; round++) {
      const records = Array.from({ length: rng.int(1, 40) }, (_, i) => encodeValue(randomRecord(rng, round * 100 + i, false)));
      expectSameEvents(concatValues(records));
    }
  });

  it('leaves records with binary, dates, big integers or other shapes to msgpackr, with the same answer', () => {
    const rng = createRng(34);
    for (let round = 0; round < 60; round++) {
      const records = Array.from({ length: rng.int(1, 30) }, (_, i) => encodeValue(randomRecord(rng, round * 100 + i, true)));
      expectSameEvents(concatValues(records));
    }
    // Not a map at all, and a map with a non-string key in the properties.
    expectSameEvents(concatValues([encodeValue(7), encodeValue({ name: 'x', timeMs: 1, properties: new Map([[1, 'one']]) })]));
  });

  it('builds the record itself when nothing needs msgpackr, stepping over the fields the engine does not read', () => {
    const record = { id: 'e1', user_id: 'u1', name: 'Pageview', time: '2026-01-01T00:00:00.000Z', properties: { path: '/a', n: 3, tags: ['x', { y: null }] }, seq: 9, timeMs: 1767225600000, session_id: 's' };
    const [event] = unpackEngineEvents({ bytes: encodeValue(record), count: 1 });
    expect(event).toStrictEqual({ name: 'Pageview', time: 1767225600000, properties: { path: '/a', n: 3, tags: ['x', { y: null }] }, session_id: 's', view_id: null });
  });

  it('with a plan\'s keys, builds only those top-level properties (the rest stepped over), or the whole record when left to msgpackr', () => {
    const rng = createRng(56);
    for (let round = 0; round < 80; round++) {
      const keys = new Set(rng.pick([['kind'], ['p1', 'p7', '__proto__'], ['clé', 'constructor', 'k'.repeat(33)], [], KEYS.slice(0, 5)]));
      const exotic = round % 2 === 1;
      const records = Array.from({ length: rng.int(1, 30) }, (_, i) => randomRecord(rng, round * 100 + i, exotic));
      const bytes = concatValues(records.map(encodeValue));
      const expected = decodeValues<StoredEvent>(bytes).map(toEngineEvent);
      const read = unpackEngineEvents({ bytes, count: expected.length }, keys);
      expect(read.length).toBe(expected.length);
      read.forEach((event, i) => {
        const whole = expected[i] as ReturnType<typeof toEngineEvent>;
        expect(isDeepStrictEqual({ ...event, properties: null }, { ...whole, properties: null })).toBe(true);
        // Left to msgpackr (a key `__proto_...`, a value it decodes): the whole properties.
        if (Object.keys(event.properties).some((key) => !keys.has(key))) {
          expect(isDeepStrictEqual(event.properties, whole.properties)).toBe(true);
          return;
        }
        const wanted: Record<string, unknown> = {};
        for (const [key, value] of Object.entries(whole.properties)) {
          if (keys.has(key)) Object.defineProperty(wanted, key, { value, enumerable: true, writable: true, configurable: true });
        }
        expect(isDeepStrictEqual(event.properties, wanted)).toBe(true);
        expect(Object.keys(event.properties)).toEqual(Object.keys(wanted));
      });
    }
  });

  it('with a plan\'s keys, steps over the properties it does not read', () => {
    const record = (properties: Record<string, unknown>) => ({ id: 'e1', user_id: 'u1', name: 'Click', time: '2026-01-01T00:00:00.000Z', properties, seq: 9, timeMs: 1767225600000 });
    const bytes = concatValues([record({ path: '/a', kind: 'buy', n: [1, { x: 'é' }] }), record({ path: '/b' }), record({})].map(encodeValue));
    const [a, b, c] = unpackEngineEvents({ bytes, count: 3 }, new Set(['kind', 'engaged_time']));
    expect(a?.properties).toStrictEqual({ kind: 'buy' });
    expect(b?.properties).toStrictEqual({});
    expect(c?.properties).toStrictEqual({});
    expect(unpackEngineEvents({ bytes, count: 3 }, new Set(['n', 'path']))[0]?.properties).toStrictEqual({ path: '/a', n: [1, { x: 'é' }] });
  });

  it('fails on bytes that end inside a record, as decoding them always did', () => {
    const bytes = concatValues([encodeValue({ name: 'a', timeMs: 1, properties: {} }), encodeValue({ name: 'b', timeMs: 2, properties: { long: 'z'.repeat(50) } })]);
    const cut = bytes.subarray(0, bytes.length - 10);
    expect(() => decodeValues(cut)).toThrow();
    expect(() => unpackEngineEvents({ bytes: cut, count: 2 })).toThrow();
  });
});
