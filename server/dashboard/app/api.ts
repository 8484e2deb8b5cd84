// The dashboard's only way to the server: the public HTTP API with the signed-in key (X-API-Key), answers parsed,
// and every error envelope (cohort, identity, flat 3002, taxonomy: D10, D12, D13) turned into one ApiError.

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: number | undefined,
    message: string,
    readonly cause: string | undefined,
  ) {
    super(message);
  }

  /** The message and its cause, for people. */
  describe(): string {
    return this.cause === undefined ? this.message : `${this.message} ${this.cause}`;
  }
}

export interface Answer<T> {
  readonly body: T;
  readonly headers: Headers;
  readonly status: number;
}

function errorOf(status: number, body: unknown): ApiError {
  const b = (body ?? {}) as Record<string, any>;
  if (b.error?.c !== undefined) {
    const d = b.error.d ?? {};
    return new ApiError(status, d.code, String(d.message ?? b.error.c), d.cause);
  }
  const e = b.error ?? b;
  return new ApiError(status, typeof e.code === 'number' ? e.code : undefined, String(e.message ?? `HTTP ${status}`), typeof e.cause === 'string' ? e.cause : undefined);
}

export class Api {
  constructor(readonly key: string) {}

  async call<T = any>(method: string, path: string, body?: unknown): Promise<Answer<T>> {
    const headers: Record<string, string> = { 'X-API-Key': this.key };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    let response: Response;
    try {
      response = await fetch(path, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    } catch (error) {
      throw new ApiError(0, undefined, 'The server cannot be reached.', String(error));
    }
    const text = await response.text();
    let parsed: unknown = undefined;
    if (text !== '') {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = text;
      }
    }
    if (!response.ok) throw errorOf(response.status, parsed);
    return { body: parsed as T, headers: response.headers, status: response.status };
  }

  get<T = any>(path: string): Promise<T> {
    return this.call<T>('GET', path).then((a) => a.body);
  }

  send<T = any>(method: 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<T> {
    return this.call<T>(method, path, body).then((a) => a.body);
  }
}

/** What the signed-in key may do (D6–D8), found by asking, never assumed. */
export interface Access {
  readonly private: boolean;
  readonly admin: boolean;
}

export async function probeAccess(api: Api): Promise<Access> {
  try {
    await api.get('/cohorts-api/v2/cohorts');
  } catch (error) {
    if (error instanceof ApiError && error.status === 403) return { private: false, admin: false };
    throw error;
  }
  try {
    await api.get('/admin/v1/workspaces');
    return { private: true, admin: true };
  } catch (error) {
    if (error instanceof ApiError && error.status === 403) return { private: true, admin: false };
    throw error;
  }
}

/** `<...?cursor=X>; rel="next"` of a Link header (D39), as a path to call. */
export function nextLink(headers: Headers): string | undefined {
  const link = headers.get('link');
  const match = link === null ? null : /<([^>]+)>;\s*rel="next"/.exec(link);
  if (match === null) return undefined;
  const url = new URL(match[1] as string, location.href);
  return url.pathname + url.search;
}
