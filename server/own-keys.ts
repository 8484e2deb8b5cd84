// Objects keyed by names that clients choose (event properties, an import's schema and rows, request headers, what
// msgpack decodes): `__proto__`, `constructor` and `toString` are valid names there (D29, D25), so such an object
// is read by own keys only and written by defining its keys (an assignment to `__proto__` would set the prototype,
// or do nothing, instead).

/** The value of an own property, or undefined: an inherited member (`constructor`, `toString`) is not a name here. */
export function ownValue<T>(object: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(object, key) ? object[key] : undefined;
}

/** Sets an own enumerable property, `__proto__` included, as JSON.parse makes it. */
export function setOwn<T>(object: Record<string, T>, key: string, value: T): void {
  if (key === '__proto__') Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
  else object[key] = value;
}
