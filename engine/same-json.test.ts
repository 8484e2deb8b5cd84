// sameJson: deep equality of decoded data, as the state codec and the ingest owner's contexts use it.

import { describe, expect, it } from 'vitest';
import { sameJson } from './same-json.js';

describe('sameJson', () => {
  it('compares decoded values deeply', () => {
    expect(sameJson({ a: [1, 'x', null, { b: true }] }, { a: [1, 'x', null, { b: true }] })).toBe(true);
    expect(sameJson({ a: 1, b: 2 }, { b: 2, a: 1 })).toBe(true);
    expect(sameJson({ a: 1 }, { a: 1, b: undefined })).toBe(false);
    expect(sameJson([1, 2], { 0: 1, 1: 2 })).toBe(false);
    expect(sameJson({ a: '1' }, { a: 1 })).toBe(false);
    expect(sameJson(0, -0)).toBe(false);
    expect(sameJson(null, {})).toBe(false);
    expect(sameJson([[1]], [[2]])).toBe(false);
    expect(sameJson({ a: Object.create(null) }, { a: {} })).toBe(true);
    // Objects other than plain ones and arrays equal only themselves.
    expect(sameJson(new Date(1), new Date(1))).toBe(false);
    expect(sameJson(new Uint8Array([1]), new Uint8Array([1]))).toBe(false);
    const date = new Date(1);
    expect(sameJson({ d: date }, { d: date })).toBe(true);
    // Nested past 32 levels: different unless the same object (no deep recursion on hostile data).
    const deep = (): unknown => Array.from({ length: 40 }).reduce<unknown>((inner) => [inner], 1);
    expect(sameJson(deep(), deep())).toBe(false);
    expect(sameJson([[[1]]], [[[1]]])).toBe(true);
  });});
