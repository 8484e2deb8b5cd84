// The `--variant NAME=DIST[,FLAG...]` argument of the A/B scripts (bench/ab.ts, bench/engine-ab.ts): a name, a build
// (a copy of dist/, or a word the script knows), and the flags after it.

export interface VariantArg {
  readonly name: string;
  readonly dist: string;
  readonly flags: readonly string[];
}

/** Splits `NAME=DIST[,FLAG...]`; throws when the name or the build is missing. */
export function parseVariantArg(value: string): VariantArg {
  const [name, rest] = value.split(/=(.*)/s);
  const [dist, ...flags] = (rest ?? '').split(',');
  if (!name || !dist) throw new Error(`--variant NAME=DIST[,FLAG...], not "${value}"`);
  return { name, dist, flags };
}
