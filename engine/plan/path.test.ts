// Property path readers (E15): the generated reader (keys as JSON string literals in its code) answers exactly what
// the closures answer, own properties only, and no key can break out of its literal.

import { describe, expect, it } from 'vitest';
import { compilePath, compilePathClosures, generatePath } from './path.js';

/** Keys that would end or escape a string literal written naively, and keys every object inherits. */
const BREAKING_KEYS = [
  '"];throw new Error("injected");//',
  "'];throw new Error('injected');//",
  '\\',
  '\\"',
  '`${(() => { throw new Error("injected") })()}`',
  '\n}); throw new Error("injected"); (function(){',
  '\r',
  '\u2028',
  '\u2029',
  '\ud800',
  '\udfff',
  '\u0000',
  '</script>',
  '',
  ' ',
  '__proto__',
  'constructor',
  'toString',
  'hasOwnProperty',
  'valueOf',
  'length',
  '0',
];

const SHAPES: unknown[] = [undefined, null, 0, 'text', true, [], [1, 2], {}, Object.create(null), new Date(0)];

/** Objects holding `key` at depths 1 to 3, with values of every kind, and objects lacking it. */
function samples(key: string): unknown[] {
  const out: unknown[] = [...SHAPES];
  for (const value of [...SHAPES, 42, 'x', { [key]: 7 }]) {
    const own = JSON.parse(`{${JSON.stringify(key)}: ${JSON.stringify(value) ?? 'null'}}`) as unknown;
    out.push(own, { [key]: value }, { outer: { [key]: value } }, JSON.parse(`{${JSON.stringify(key)}: {${JSON.stringify(key)}: 5}}`));
  }
  return out;
}

describe('generated path readers', () => {
  it('are generated here (the test runs with code generation on)', () => {
    expect(generatePath(['price'])).toBeTypeOf('function');
  });

  for (const key of BREAKING_KEYS) {
    it(`read ${JSON.stringify(key)} at depths 1, 2 and 3 exactly as the closures do`, () => {
      for (const path of [[key], [key, key], ['outer', key], [key, 'x', key]]) {
        const generated = generatePath(path);
        expect(generated).toBeTypeOf('function');
        const closures = compilePathClosures(path);
        for (const sample of samples(key)) {
          expect(Object.is((generated as (root: unknown) => unknown)(sample), closures(sample))).toBe(true);
        }
      }
    });
  }

  it('read own properties only: an inherited name reads undefined, an own one its data', () => {
    const read = compilePath(['constructor']);
    expect(read({})).toBeUndefined();
    expect(read(JSON.parse('{"constructor": 3}'))).toBe(3);
    const proto = compilePath(['__proto__']);
    expect(proto({})).toBeUndefined();
    expect(proto(JSON.parse('{"__proto__": {"a": 1}}'))).toEqual({ a: 1 });
    expect(compilePath(['a', 'toString'])({ a: { b: 1 } })).toBeUndefined();
  });

  it('read through plain objects only: arrays, null and primitives read undefined', () => {
    const read = compilePath(['a', 'b']);
    expect(read({ a: { b: 1 } })).toBe(1);
    expect(read({ a: [1] })).toBeUndefined();
    expect(read({ a: null })).toBeUndefined();
    expect(read({ a: 'b' })).toBeUndefined();
    expect(read([{ a: { b: 1 } }])).toBeUndefined();
    expect(compilePath(['0'])(['x'])).toBeUndefined();
  });

  it('one reader per path, shared by plans compiled again', () => {
    expect(generatePath(['a', 'b'])).toBe(generatePath(['a', 'b']));
    expect(generatePath(['a', 'b'])).not.toBe(generatePath(['a', 'c']));
  });
});
