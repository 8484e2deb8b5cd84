// bench/variants.ts: the `--variant NAME=DIST[,FLAG...]` argument both A/B scripts take.

import { describe, expect, it } from 'vitest';
import { parseVariantArg } from '../../bench/variants.js';

describe('--variant arguments', () => {
  it('splits the name, the build and the flags (a flag may hold "=")', () => {
    expect(parseVariantArg('after=dist')).toEqual({ name: 'after', dist: 'dist', flags: [] });
    expect(parseVariantArg('engine=floor,--engine')).toEqual({ name: 'engine', dist: 'floor', flags: ['--engine'] });
    expect(parseVariantArg('v=ab/x,node:--max-semi-space-size=16,env:A=b=c')).toEqual({ name: 'v', dist: 'ab/x', flags: ['node:--max-semi-space-size=16', 'env:A=b=c'] });
  });

  it('refuses a missing name or build', () => {
    for (const bad of ['dist', '=dist', 'name=', 'name=,--fsync']) expect(() => parseVariantArg(bad)).toThrow(/--variant NAME=DIST/);
  });
});
