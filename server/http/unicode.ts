// D40: every string that enters the service must be well-formed Unicode, so that what is stored reads back byte for
// byte. A lone surrogate (JSON `"\udc00"`) or bytes that are not UTF-8 (a body, or a `%ED%B0%80` in the URL) are
// refused with 400 code 1002 naming where they were, never replaced by U+FFFD.

import { isUtf8 } from 'node:buffer';
import { badBody } from '../errors.js';

const LONE_SURROGATE = 'not well-formed Unicode (lone surrogate)';
const NOT_UTF8 = 'not well-formed Unicode (invalid UTF-8)';

/**
 * The body as text; bytes that are not UTF-8 are a 400 (Buffer#toString would silently turn them into U+FFFD).
 */
export function decodeUtf8Body(raw: Buffer): string {
  if (!isUtf8(raw)) throw badBody(`body: ${NOT_UTF8}`);
  return raw.toString('utf8');
}

/**
 * True when JSON text decoded from valid UTF-8 may hold a surrogate: only a `\uD800`-`\uDFFF` escape can put one
 * into the parsed value (a false positive such as `\\ud800` just costs a walk that finds nothing).
 */
export function mayHoldSurrogateEscape(text: string): boolean {
  return text.includes('\\u') && /\\u[dD][89A-Fa-f]/.test(text);
}

/** Where a key sits under `path`, readable in a cause: `properties.x`, `items[2]`, `properties["a b"]`. */
function childPath(path: string, key: string): string {
  if (/^[A-Za-z_$][\w$]*$/.test(key)) return path === '' ? key : `${path}.${key}`;
  // JSON.stringify escapes a lone surrogate as \udXXX, so the cause itself stays well-formed.
  return `${path}[${JSON.stringify(key)}]`;
}

/** Throws 400 code 1002 at the first string (object key or value, at any depth) that is not well-formed. */
export function assertWellFormedJson(value: unknown, path = ''): void {
  if (typeof value === 'string') {
    if (!isWellFormed(value)) throw badBody(`${path === '' ? 'body' : path}: ${LONE_SURROGATE}`);
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) assertWellFormedJson(value[i], `${path}[${i}]`);
    return;
  }
  for (const key of Object.keys(value)) {
    const at = childPath(path, key);
    if (!isWellFormed(key)) throw badBody(`${at}: ${LONE_SURROGATE} in a key`);
    assertWellFormedJson((value as Record<string, unknown>)[key], at);
  }
}

const HEX = /^[0-9A-Fa-f]{2}$/;

/** String.prototype.isWellFormed (Node 20; the ES2022 lib this repo compiles against does not declare it). */
function isWellFormed(text: string): boolean {
  return (text as unknown as { isWellFormed(): boolean }).isWellFormed();
}

/**
 * application/x-www-form-urlencoded decoding (WHATWG URL: `+` is a space, `%XX` a byte, a `%` not followed by two hex
 * digits stays as is) with one difference: bytes that are not UTF-8 give undefined instead of U+FFFD.
 */
export function decodeFormComponent(raw: string): string | undefined {
  const text = raw.includes('+') ? raw.replace(/\+/g, ' ') : raw;
  if (!text.includes('%')) return text;
  const bytes = Buffer.from(text, 'utf8');
  const out = Buffer.allocUnsafe(bytes.length);
  let length = 0;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i] as number;
    if (byte === 0x25 /* % */ && i + 2 < bytes.length && HEX.test(String.fromCharCode(bytes[i + 1] as number, bytes[i + 2] as number))) {
      out[length++] = parseInt(String.fromCharCode(bytes[i + 1] as number, bytes[i + 2] as number), 16);
      i += 2;
    } else {
      out[length++] = byte;
    }
  }
  const decoded = out.subarray(0, length);
  return isUtf8(decoded) ? decoded.toString('utf8') : undefined;
}

/** The query string as URLSearchParams; a name or value whose escapes are not UTF-8 is 400 code 1002 (D40). */
export function parseQueryStrict(rawQuery: string): URLSearchParams {
  if (!rawQuery.includes('%')) return new URLSearchParams(rawQuery);
  const params = new URLSearchParams();
  for (const pair of rawQuery.split('&')) {
    if (pair === '') continue;
    const equals = pair.indexOf('=');
    const rawName = equals < 0 ? pair : pair.slice(0, equals);
    const rawValue = equals < 0 ? '' : pair.slice(equals + 1);
    const name = decodeFormComponent(rawName);
    if (name === undefined) throw badBody(`query: a parameter name is ${NOT_UTF8}`);
    const value = decodeFormComponent(rawValue);
    if (value === undefined) throw badBody(`${childPath('query', name)}: ${NOT_UTF8}`);
    params.append(name, value);
  }
  return params;
}

/** A path segment's percent-escapes decoded; 'malformed' for a bad escape, 'not-utf8' for bytes that are not UTF-8. */
export function decodePathSegment(raw: string): string | 'malformed' | 'not-utf8' {
  if (!raw.includes('%')) return raw;
  try {
    return decodeURIComponent(raw);
  } catch {
    // decodeURIComponent refuses both; tell them apart: every % starting a two-hex-digit escape means the bytes are bad.
    return /%(?![0-9A-Fa-f]{2})/.test(raw) ? 'malformed' : 'not-utf8';
  }
}

export const NOT_WELL_FORMED_UTF8 = NOT_UTF8;
