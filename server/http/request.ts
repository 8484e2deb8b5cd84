// Reading a request: headers copied out of uWS's stack-allocated HttpRequest, the body gathered under the D2 cap,
// JSON parsing with D1's "empty means none", and the API key of D5 (header X-API-Key, else query k).

import type { HttpRequest } from 'uWebSockets.js';
import { badBody } from '../errors.js';
import { ownValue, setOwn } from '../own-keys.js';
import type { RequestContext } from './types.js';
import { assertWellFormedJson, decodeUtf8Body, mayHoldSurrogateEscape, parseQueryStrict } from './unicode.js';

const METHODS: Readonly<Record<string, string>> = {
  get: 'GET',
  post: 'POST',
  patch: 'PATCH',
  delete: 'DELETE',
  put: 'PUT',
  head: 'HEAD',
  options: 'OPTIONS',
};

/** uWS gives the method lower-cased. */
export function normaliseMethod(lower: string): string {
  // Own entries only: a method named `constructor` is not Object's constructor.
  return ownValue(METHODS, lower) ?? lower.toUpperCase();
}

/**
 * Copies every header (names are lower-case in uWS); repeated ones are joined with ", ". A client names the headers,
 * so they are own properties only: a header `constructor` or `__proto__` is a header, not an inherited member.
 */
export function readHeaders(req: Pick<HttpRequest, 'forEach'>): Record<string, string> {
  const headers: Record<string, string> = {};
  req.forEach((name, value) => {
    const previous = ownValue(headers, name);
    const joined = previous === undefined ? value : `${previous}, ${value}`;
    setOwn(headers, name, joined);
  });
  return headers;
}

export const EMPTY_BODY: Buffer = Buffer.alloc(0);

/**
 * Gathers body chunks (uWS neuters each chunk's ArrayBuffer after the callback, so chunks are copied) and stops
 * growing past the limit.
 */
export class BodyReader {
  private chunks: Buffer[] | undefined;
  private single: Buffer | undefined;
  private size = 0;

  constructor(private readonly limit: number) {}

  /** Adds a chunk; false when the body now exceeds the limit (nothing more is kept). */
  push(chunk: ArrayBuffer): boolean {
    const length = chunk.byteLength;
    if (length === 0) return true;
    this.size += length;
    if (this.size > this.limit) {
      this.chunks = undefined;
      this.single = undefined;
      return false;
    }
    const copy = Buffer.from(new Uint8Array(chunk));
    if (this.single === undefined && this.chunks === undefined) this.single = copy;
    else {
      this.chunks ??= [this.single as Buffer];
      this.single = undefined;
      this.chunks.push(copy);
    }
    return true;
  }

  body(): Buffer {
    if (this.single !== undefined) return this.single;
    if (this.chunks !== undefined) return Buffer.concat(this.chunks, this.size);
    return EMPTY_BODY;
  }
}

/** True when the buffer holds only JSON whitespace (an empty body is no body, D1). */
function isBlank(raw: Buffer): boolean {
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return false;
  }
  return true;
}

/**
 * The parsed body, or undefined for none; invalid JSON throws 400 code 1002 with the parser's complaint as cause.
 * D40: bytes that are not UTF-8, and strings (keys or values, at any depth) holding a lone surrogate, are 400 code
 * 1002 too, so that every string a route stores reads back byte for byte. Done here, once, for every area.
 */
export function parseJsonBody(raw: Buffer): unknown {
  if (raw.length === 0 || isBlank(raw)) return undefined;
  const text = decodeUtf8Body(raw);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw badBody(`the body is not valid JSON: ${(error as Error).message}`);
  }
  // Text decoded from UTF-8 holds no surrogate: only a \uD8xx-\uDFxx escape can bring one in.
  if (mayHoldSurrogateEscape(text)) assertWellFormedJson(value);
  return value;
}

/** The RequestContext handed to handlers; the query is parsed on first use (most requests never read it). */
export class Context implements RequestContext {
  private parsedQuery: URLSearchParams | undefined;
  readonly apiKey: string | undefined;

  constructor(
    readonly method: string,
    readonly path: string,
    readonly params: Readonly<Record<string, string>>,
    private readonly rawQuery: string,
    readonly headers: Readonly<Record<string, string>>,
    readonly body: unknown,
    readonly rawBody: Buffer,
    readonly requestId: string,
    readonly transportSecure: boolean,
    readonly remoteAddress: string,
  ) {
    // D40: escapes that are not UTF-8 are refused now (400 1002), before the handler, never turned into U+FFFD.
    if (rawQuery.includes('%')) this.parsedQuery = parseQueryStrict(rawQuery);
    // D5: the header wins over the query parameter; an empty value counts as absent.
    this.apiKey = headers['x-api-key'] || (rawQuery === '' ? undefined : this.query.get('k') || undefined);
  }

  get query(): URLSearchParams {
    this.parsedQuery ??= parseQueryStrict(this.rawQuery);
    return this.parsedQuery;
  }
}
