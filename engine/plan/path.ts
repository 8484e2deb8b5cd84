// Property paths split at compile time into readers: `properties.a.b` reads `a`, then `b`, through nested plain
// objects (E15). Own properties only, so names such as `constructor` or `__proto__` read the data, not the prototype.

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

function readerOf(key: string): (value: unknown, key: string) => unknown {
  return key in Object.prototype ? readKey : readPlainKey;
}

/** A reader for a path given as segments relative to the object it is applied to. */
export function compilePath(path: readonly string[]): PathReader {
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
