// Reading a request's method and headers: names a client chooses are data, never inherited members of an object
// (a method `CONSTRUCTOR` was once labelled in metrics as Object's constructor function).

import { describe, expect, it } from 'vitest';
import { normaliseMethod, readHeaders } from './request.js';

describe('normaliseMethod', () => {
  it('upper-cases known and unknown methods, whatever their name', () => {
    expect(normaliseMethod('get')).toBe('GET');
    expect(normaliseMethod('brew')).toBe('BREW');
    for (const name of ['constructor', '__proto__', 'tostring', 'hasownproperty']) expect(normaliseMethod(name)).toBe(name.toUpperCase());
  });
});

describe('readHeaders', () => {
  it('keeps every header as an own string, repeated ones joined, with names objects inherit', () => {
    const sent: Array<[string, string]> = [['constructor', 'a'], ['__proto__', 'b'], ['x', '1'], ['x', '2'], ['tostring', 'c'], ['__proto__', 'd']];
    const headers = readHeaders({ forEach: (visit: (name: string, value: string) => void) => sent.forEach(([name, value]) => visit(name, value)) });
    expect(Object.getPrototypeOf(headers)).toBe(Object.prototype);
    expect(Object.keys(headers)).toEqual(['constructor', '__proto__', 'x', 'tostring']);
    expect(headers['constructor']).toBe('a');
    expect(Object.getOwnPropertyDescriptor(headers, '__proto__')?.value).toBe('b, d');
    expect(headers['x']).toBe('1, 2');
    expect(Object.hasOwn(headers, 'origin')).toBe(false);
  });
});
