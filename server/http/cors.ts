// D43 CORS. Routes marked `cors: 'public'` (those a public key may call, D6) allow any origin unless the operator
// lists origins (`--cors-origins`); every other route allows only the listed origins (none by default). An allowed
// origin is echoed in Access-Control-Allow-Origin (never `*`), with `Vary: Origin` on every response so caches keep
// answers for different origins apart. No Allow-Credentials: keys travel in a header, not in cookies.

export type CorsPolicy = 'public' | 'private';

export const CORS_ALLOW_HEADERS = 'Content-Type, X-API-Key, X-Request-Id';
export const CORS_EXPOSE_HEADERS = 'X-Request-Id, Link';
export const CORS_MAX_AGE = '600';

/**
 * The canonical form of an origin given by the operator (`https://example.com`, `http://localhost:3000`): scheme,
 * lower-case host, port only when not the scheme's default. Throws a clear Error for anything else (a path, a query,
 * credentials, another scheme, `*`).
 */
export function parseCorsOrigin(text: string): string {
  const trimmed = text.trim();
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    throw new Error(`"${text}" is not an origin (expected e.g. https://example.com)`);
  }
  const bare = trimmed.replace(/\/$/, '');
  if (
    (url.protocol !== 'http:' && url.protocol !== 'https:') ||
    url.username !== '' ||
    url.password !== '' ||
    url.pathname !== '/' ||
    url.search !== '' ||
    url.hash !== '' ||
    /[/?#@]/.test(bare.slice(url.protocol.length + 2))
  ) {
    throw new Error(`"${text}" is not an origin: only scheme, host and optional port (e.g. https://example.com)`);
  }
  return url.origin;
}

/** Canonical form of a request's Origin header, or undefined when it is not an http(s) origin (e.g. `null`). */
function canonicalRequestOrigin(origin: string): string | undefined {
  try {
    const url = new URL(origin);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
    if (url.pathname !== '/' || url.search !== '' || url.hash !== '' || url.username !== '') return undefined;
    return url.origin;
  } catch {
    return undefined;
  }
}

export class CorsRules {
  private readonly listed: ReadonlySet<string> | undefined;

  /** `origins` empty or undefined: public routes allow any origin, other routes none. */
  constructor(origins: readonly string[] | undefined) {
    this.listed = origins !== undefined && origins.length > 0 ? new Set(origins.map(parseCorsOrigin)) : undefined;
  }

  /** Whether a request from `origin` (its Origin header as sent) may read the response of a route of `policy`. */
  allows(policy: CorsPolicy, origin: string): boolean {
    const canonical = canonicalRequestOrigin(origin);
    if (canonical === undefined) return false;
    if (this.listed === undefined) return policy === 'public';
    return this.listed.has(canonical);
  }

  /** Headers every response carries: Vary always; Allow-Origin (echoed) and Expose-Headers when the origin is allowed. */
  headers(policy: CorsPolicy, origin: string | undefined): Record<string, string> {
    if (origin === undefined || !this.allows(policy, origin)) return { Vary: 'Origin' };
    return { Vary: 'Origin', 'Access-Control-Allow-Origin': origin, 'Access-Control-Expose-Headers': CORS_EXPOSE_HEADERS };
  }
}
