// bench/variants.ts: the `--variant NAME=DIST[,FLAG...]` argument the A/B scripts take, and the in-process ones' arguments.

import { describe, expect, it } from 'vitest';
import { parseAbArgs, parseVariantArg } from '../../bench/variants.js';

describe('--variant arguments', () => {
  it('splits the name, the build and the flags (a flag may hold "=")', () => {
    expect(parseVariantArg('after=dist')).toEqual({ name: 'after', dist: 'dist', flags: [] });
    expect(parseVariantArg('engine=floor,--engine')).toEqual({ name: 'engine', dist: 'floor', flags: ['--engine'] });
    expect(parseVariantArg('v=ab/x,node:--max-semi-space-size=16,env:A=b=c')).toEqual({ name: 'v', dist: 'ab/x', flags: ['node:--max-semi-space-size=16', 'env:A=b=c'] });
  });

  it('refuses a missing name or build', () => {
    for (const bad of ['dist', '=dist', 'name=', 'name=,--fsync']) expect(() => parseVariantArg(bad)).toThrow(/--variant NAME=DIST/);
  });

  it('reads an in-process A/B script\'s variants and rounds, and passes every other argument on', () => {
    expect(parseAbArgs(['--variant', 'a=ab/a', '--users', '10', '--variant', 'b=dist,env:X=1', '--rounds', '4'], 3)).toEqual({
      variants: [
        { name: 'a', dist: 'ab/a', flags: [] },
        { name: 'b', dist: 'dist', flags: ['env:X=1'] },
      ],
      rounds: 4,
      settings: ['--users', '10'],
    });
    expect(parseAbArgs(['--variant', 'a=x', '--variant', 'b=y'], 3).rounds).toBe(3);
    expect(() => parseAbArgs(['--variant', 'a=x'], 3)).toThrow(/at least two/);
    expect(() => parseAbArgs(['--variant', 'a=x', '--variant', 'b=y', '--rounds', '0'], 3)).toThrow(/--rounds/);
  });
});
