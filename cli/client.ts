// The CLI's HTTP client over global fetch: base URL from --url/AUDIENCE_URL, key from --key/AUDIENCE_KEY, JSON in
// and out. Any error envelope (cohort/admin D10, identity flat D12, taxonomy D13) becomes ONE line, exit 1.

import type { Command } from 'commander';
import { CliError, type CliIo } from './io.js';

export type QueryValues = Readonly<Record<string, string | undefined>>;

export interface RequestOptions {
  /** Sent as JSON with Content-Type: application/json. */
  readonly body?: unknown;
  /** Query-string parameters; undefined values are left out. */
  readonly query?: QueryValues;
}

/** An error answer of the server: one line `HTTP <status> <code>: <message>[: <cause>]` (exit 1). */
export class HttpError extends CliError {
  readonly status: number;
  /** The numeric subcode (D11) or the taxonomy error name `c` (D13); undefined when the body had neither. */
  readonly code: number | string | undefined;
  readonly serverMessage: string;
  /** `error.cause` (D10) or `error.d.cause` (D13): for a bad body, the JSON path and the problem (D18). */
  readonly detail: string | undefined;
  /** D4: shown on a 5xx, whose message asks to quote it to support. */
  readonly requestId: string | undefined;

  constructor(status: number, code: number | string | undefined, serverMessage: string, detail: string | undefined, requestId?: string) {
    super(formatHttpError(status, code, serverMessage, detail, requestId), 1);
    this.name = 'HttpError';
    this.status = status;
    this.code = code;
    this.serverMessage = serverMessage;
    this.detail = detail;
    this.requestId = requestId;
  }

  /** The same error with `detail` rewritten (the bulk loader adds the file line an `add[17]` path points at). */
  withDetail(detail: string | undefined): HttpError {
    return new HttpError(this.status, this.code, this.serverMessage, detail, this.requestId);
  }
}

/** `HTTP <status> <code>: <message>[: <cause>]`, and ` [request <id>]` on a 5xx (D4). */
export function formatHttpError(status: number, code: number | string | undefined, message: string, cause?: string, requestId?: string): string {
  const head = code === undefined ? `HTTP ${status}` : `HTTP ${status} ${code}`;
  const line = cause === undefined || cause === '' ? `${head}: ${message}` : `${head}: ${message.replace(/\.\s*$/, '')}: ${cause}`;
  return oneLine(status >= 500 && requestId !== undefined ? `${line} [request ${requestId}]` : line);
}

export class ApiClient {
  readonly baseUrl: string;
  readonly key: string;
  private readonly fetchImpl: typeof fetch;

  constructor(options: { url: string; key: string; fetch?: typeof fetch }) {
    this.baseUrl = options.url.replace(/\/+$/, '');
    this.key = options.key;
    this.fetchImpl = options.fetch ?? fetch;
  }

  /** Sends one request and answers the parsed JSON body (undefined for an empty one); an error status throws HttpError. */
  async request<T = unknown>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const url = new URL(this.baseUrl + path);
    for (const [name, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, value);
    }
    const headers: Record<string, string> = { 'X-API-Key': this.key, Accept: 'application/json' };
    let body: string | undefined;
    if (options.body !== undefined) {
      headers['Content-Type'] = 'application/json';
      body = JSON.stringify(options.body);
    }
    let response: Response;
    let text: string;
    try {
      response = await this.fetchImpl(url, { method, headers, body });
      text = await response.text();
    } catch (error) {
      throw new CliError(`cannot reach ${this.baseUrl}: ${describeFetchFailure(error)}`);
    }
    if (!response.ok) throw parseErrorResponse(response.status, response.statusText, text, response.headers.get('x-request-id') ?? undefined);
    if (text.trim() === '') return undefined as T;
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new CliError(`HTTP ${response.status}: the server answered a body that is not JSON: ${oneLine(text).slice(0, 200)}`);
    }
  }
}

/** Reads --url and --key (with their env defaults, main.ts) and builds a client; no key is an error, not usage. */
export function clientFor(command: Command, io: CliIo): ApiClient {
  const globals = command.optsWithGlobals<{ url?: string; key?: string }>();
  const url = globals.url ?? io.env['AUDIENCE_URL'] ?? 'http://127.0.0.1:8080';
  const key = globals.key ?? io.env['AUDIENCE_KEY'];
  if (key === undefined || key.trim() === '') {
    throw new CliError('no API key: pass --key KEY or set AUDIENCE_KEY (a private key for administration)', 1);
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new CliError(`--url must be an http(s) address, not "${url}"`, 2);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new CliError(`--url must be an http(s) address, not "${url}"`, 2);
  }
  return new ApiClient({ url, key: key.trim() });
}

/** Turns an error answer in any of the service's envelopes (or none) into an HttpError. */
export function parseErrorResponse(status: number, statusText: string, text: string, headerRequestId?: string): HttpError {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    const fallback = text.trim() === '' ? statusText || 'no details' : oneLine(text).slice(0, 200);
    return new HttpError(status, undefined, fallback, undefined, headerRequestId);
  }
  const top = asRecord(body);
  const inner = asRecord(top?.['error']);
  const requestId = textOf(top?.['request_id']) ?? textOf(top?.['requestId']) ?? headerRequestId;
  // D13 taxonomy/imports: {requestId, error: {c, d: {message, cause?}}}
  if (inner !== undefined && typeof inner['c'] === 'string') {
    const d = asRecord(inner['d']);
    return new HttpError(status, inner['c'], textOf(d?.['message']) ?? 'no message', textOf(d?.['cause']), requestId);
  }
  // D10 cohort/admin/segmentation and identity: {request_id, error: {code, message, cause?, ...}}
  if (inner !== undefined) {
    return new HttpError(status, codeOf(inner['code']), textOf(inner['message']) ?? statusText, textOf(inner['cause']), requestId);
  }
  // D12 identity flat: {request_id, status, code, message, docs}
  if (top !== undefined && (top['code'] !== undefined || top['message'] !== undefined)) {
    return new HttpError(status, codeOf(top['code']), textOf(top['message']) ?? statusText, textOf(top['cause']), requestId);
  }
  return new HttpError(status, undefined, statusText || 'no details', undefined, requestId);
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

function textOf(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function codeOf(value: unknown): number | string | undefined {
  return typeof value === 'number' || typeof value === 'string' ? value : undefined;
}

function oneLine(text: string): string {
  return text.replace(/\s*[\r\n]+\s*/g, ' ').trim();
}

function describeFetchFailure(error: unknown): string {
  const cause = error instanceof Error ? (error as Error & { cause?: unknown }).cause : undefined;
  if (cause instanceof Error) return oneLine(cause.message);
  return oneLine(error instanceof Error ? error.message : String(error));
}
