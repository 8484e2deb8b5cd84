// bench/helpers.ts runs every helper it names and answers a median per helper (a smoke run with few calls).

import { describe, expect, it } from 'vitest';
import { measureHelpers } from '../../bench/helpers.js';

describe('bench/helpers.ts', () => {
  it('times each helper and its predecessor, in ns per call', () => {
    const result = measureHelpers(2_000, 2);
    expect(result).toMatchObject({ calls: 2_000, rounds: 2 });
    expect(Object.keys(result.ns).sort()).toEqual(
      ['isoTime', 'isoTimeOncePerMs', 'mintEventId', 'needsIdIndex', 'randomUUID', 'requestLineDirect', 'requestLineViaPino', 'membershipsByFlagScan', 'membershipsOf'].sort(),
    );
    for (const ns of Object.values(result.ns)) expect(ns).toBeGreaterThan(0);
    expect(result.membershipsPerUser).toBeGreaterThan(0);
  });
});
