// Deep equality of decoded data (msgpack or JSON): what the state codec compares encoded slot tuples with, and what
// the ingest owner compares a user's imported rows with (server/ingest/tick/context.ts).

/**
 * Deep equality of decoded JSON-like values: arrays item by item, plain objects by their own keys, primitives by
 * `Object.is`. Any other object (a Date, binary), and anything nested past 32 levels, equals only itself: a false
 * "different" costs only work (a new context, a tuple written that could have been left out), never a wrong answer.
 */
export function sameJson(a: unknown, b: unknown, depth = 0): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null || depth > 32) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (!Array.isArray(a) && (!isPlain(a) || !isPlain(b))) return false;
  if (Array.isArray(a)) {
    const other = b as readonly unknown[];
    if (a.length !== other.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], other[i], depth + 1)) return false;
    return true;
  }
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  const keys = Object.keys(left);
  if (keys.length !== Object.keys(right).length) return false;
  for (const key of keys) if (!Object.hasOwn(right, key) || !sameJson(left[key], right[key], depth + 1)) return false;
  return true;
}

function isPlain(value: object): boolean {
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
