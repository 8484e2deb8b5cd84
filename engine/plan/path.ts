// Property paths split at compile time into readers: `properties.a.b` reads `a`, then `b`, through nested plain
// objects (E15). Own properties only, so names such as `constructor` or `__proto__` read the data, not the prototype.
//
// A path's reader is generated once per path with its keys written into the code as constants (V8 loads a property
// whose key is a constant in the code through an inline cache of its own; a key passed in as a value goes through a
// generic keyed load: engine/PERFORMANCE.md). The keys enter the source only as JSON string literals: JSON.stringify
// escapes the quote, the backslash and every control character, and since ES2019 every other character (U+2028 and
// U+2029 included) may stand in a string literal, so no key can end the literal (path.test.ts compiles breaking
// keys). Where code cannot be generated (`--disallow-code-generation-from-strings`), the closures below read the same.

export type PathReader = (root: unknown) => unknown;

const hasOwn = Object.prototype.hasOwnProperty;

/** Reads one own property of a plain object (not an array), else undefined. */
export function readKey(value: unknown, key: string): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  return hasOwn.call(value, key) ? (value as Record<string, unknown>)[key] : undefined;
}

/**
 * Reads a key that no object inherits (decided at compile time): a plain read cannot reach the prototype, so the
 * own-property check is skipped on the hot path.
 */
function readPlainKey(value: unknown, key: string): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  return (value as Record<string, unknown>)[key];
}

/** Whether a plain object can inherit `key` (then only an own property may answer it). */
function inherited(key: string): boolean {
  return key in Object.prototype;
}

function readerOf(key: string): (value: unknown, key: string) => unknown {
  return inherited(key) ? readKey : readPlainKey;
}

/** A reader for a path given as segments relative to the object it is applied to. */
export function compilePath(path: readonly string[]): PathReader {
  return generatePath(path) ?? compilePathClosures(path);
}

/** The reader as closures over the keys (no generated code): the same answers as the generated one. */
export function compilePathClosures(path: readonly string[]): PathReader {
  const segments = [...path];
  if (segments.length === 1) {
    const a = segments[0] as string;
    const readA = readerOf(a);
    return (root) => readA(root, a);
  }
  if (segments.length === 2) {
    const a = segments[0] as string;
    const b = segments[1] as string;
    const readA = readerOf(a);
    const readB = readerOf(b);
    return (root) => readB(readA(root, a), b);
  }
  return (root) => {
    let value = root;
    for (let i = 0; i < segments.length; i++) {
      value = readKey(value, segments[i] as string);
      if (value === undefined) return undefined;
    }
    return value;
  };
}

/** Generated readers by path (a path's segments as JSON): plans compiled again reuse them. */
const generated = new Map<string, PathReader>();
const GENERATED_LIMIT = 10_000;

/** The reader with its keys as constants in generated code, or undefined when code cannot be generated here. */
export function generatePath(path: readonly string[]): PathReader | undefined {
  if (path.length === 0) return undefined;
  const id = JSON.stringify(path);
  const known = generated.get(id);
  if (known !== undefined) return known;
  const lines: string[] = [];
  for (let i = 0; i < path.length; i++) {
    const key = JSON.stringify(path[i] as string);
    const from = i === 0 ? 'r' : 'v';
    lines.push(`if (typeof ${from} !== 'object' || ${from} === null || isArray(${from})) return undefined;`);
    const read = inherited(path[i] as string) ? `(hasOwn.call(${from}, ${key}) ? ${from}[${key}] : undefined)` : `${from}[${key}]`;
    lines.push(i === path.length - 1 ? `return ${read};` : `v = ${read};`);
    if (i < path.length - 1) lines.push('if (v === undefined) return undefined;');
  }
  let reader: PathReader;
  try {
    // eslint-disable-next-line @typescript-eslint/no-implied-eval
    const factory = new Function('hasOwn', 'isArray', `"use strict"; return function (r) { let v; ${lines.join(' ')} };`) as (
      own: typeof hasOwn,
      isArray: typeof Array.isArray,
    ) => PathReader;
    reader = factory(hasOwn, Array.isArray);
  } catch {
    return undefined;
  }
  if (generated.size >= GENERATED_LIMIT) generated.clear();
  generated.set(id, reader);
  return reader;
}
