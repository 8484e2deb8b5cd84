// bench/owner.ts: its arguments, and a small run over this project's build (npm test builds dist/ first).

import { fileURLToPath } from 'node:url';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseOwnerArgs, runOwnerBench } from '../../bench/owner.js';

const DIST = resolve(fileURLToPath(new URL('../../dist', import.meta.url)));

describe('bench/owner.ts', () => {
  it('reads its settings and refuses what it does not know', () => {
    expect(parseOwnerArgs([], DIST)).toEqual({ users: 30_000, perTask: 20, rounds: 6, withData: 1 / 3, dists: [DIST] });
    expect(parseOwnerArgs(['--users', '50', '--with-data', '1', '--dist', 'a', '--dist', 'b'], DIST)).toMatchObject({ users: 50, withData: 1, dists: [resolve('a'), resolve('b')] });
    expect(() => parseOwnerArgs(['--users', '0'], DIST)).toThrow(/--users/);
    expect(() => parseOwnerArgs(['--with-data', '2'], DIST)).toThrow(/--with-data/);
    expect(() => parseOwnerArgs(['--fast', '1'], DIST)).toThrow(/unknown argument/);
    expect(parseOwnerArgs(['--decoded-states', '8192'], DIST)).toMatchObject({ decodedStates: 8192 });
    expect(parseOwnerArgs(['--context-each-task', '--users', '50'], DIST)).toMatchObject({ contextEachTask: true, users: 50 });
    expect(() => parseOwnerArgs(['--decoded-states', '0'], DIST)).toThrow(/--decoded-states/);
  });

  it('times each part of an owner task per event, in alternating rounds', async () => {
    const lines: string[] = [];
    const rounds = await runOwnerBench({ users: 400, perTask: 20, rounds: 2, withData: 0.5, dists: [DIST] }, (line) => lines.push(line));
    expect(rounds.map((r) => r.round)).toEqual([1, 2]);
    for (const r of rounds) {
      expect(r.run).toBeGreaterThan(0);
      expect(r.total).toBeCloseTo(r.unpack + r.run + r.pack, 1);
    }
    expect(lines.at(-1)).toMatch(/medians unpack .* total/);
  });
});
