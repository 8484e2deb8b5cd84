import type { WebSocketRoute } from './websocket.js';

// The public types of the HTTP layer: what a route handler receives (RequestContext), what it returns (Reply),
// and the server's options and surface. Routes of every API area plug into this through HttpServer.route.

/** The API area of a route; it picks the error envelope (D10, D12, D13). */
export type Area = 'cohorts' | 'segmentation' | 'taxonomy' | 'identity' | 'admin' | 'plain';

export type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE' | 'PUT';

/**
 * Whether a route reads a JSON body. 'required': a missing body is 400 code 1003. 'optional': parsed when present.
 * 'none': never parsed (still read and capped, D2). Default: 'none' for GET and DELETE, 'optional' otherwise.
 */
export type BodyMode = 'required' | 'optional' | 'none';

export interface RouteOptions {
  body?: BodyMode;
  /** D43: 'public' for routes a public key may call (D6): any origin by default. Default 'private'. */
  cors?: 'public' | 'private';
}

export interface RequestContext {
  readonly method: string;
  /** The request path as sent (without the query string). */
  readonly path: string;
  /** Path parameters by name, URL-decoded. */
  readonly params: Readonly<Record<string, string>>;
  readonly query: URLSearchParams;
  /** Header names lower-cased; repeated headers joined with ", ". */
  readonly headers: Readonly<Record<string, string>>;
  /** The parsed JSON body; undefined when there is none (an empty body is none, D1). */
  readonly body: unknown;
  readonly rawBody: Buffer;
  /** UUID v4, also sent as X-Request-Id and as request_id in error bodies (D4). */
  readonly requestId: string;
  /** Header X-API-Key (any case) or query k; the header wins when both are given (D5). */
  readonly apiKey: string | undefined;
  /** D7: TLS, a loopback peer, or (trustProxy and X-Forwarded-Proto: https). */
  readonly transportSecure: boolean;
  /** The peer's IP address (IPv4-mapped addresses shown as IPv4). */
  readonly remoteAddress: string;
}

export interface Reply {
  status: number;
  /** Serialised as JSON with Content-Type: application/json (D1). */
  body?: unknown;
  /** Sent as is instead of body, with contentType (default text/plain; charset=utf-8). */
  text?: string;
  contentType?: string;
  headers?: Record<string, string>;
}

export type Handler = (ctx: RequestContext) => Reply | Promise<Reply>;

export interface HttpServerOptions {
  host: string;
  /** 0 picks an ephemeral port. */
  port: number;
  tls?: { certFile: string; keyFile: string };
  /** D7: trust X-Forwarded-Proto from the peer. */
  trustProxy?: boolean;
  /** Base of the `docs` links (D10); default the server's own http(s)://host:port. */
  docsUrl?: string;
  /** Request body cap in bytes (D2); default 1 MiB. */
  bodyLimit?: number;
  /**
   * D43: origins (`https://example.com`) allowed to read responses from browsers. Empty/absent: public routes allow
   * any origin, other routes none. Listed: only these, on every route. A malformed one makes createHttpServer throw.
   */
  corsOrigins?: readonly string[];
  /** Where unexpected errors (with request id and stack) are logged; default stderr. */
  log?: (line: string) => void;
  /** Called once per response written (access log, metrics); must not throw (a throw is ignored). */
  onResponse?: (info: ResponseInfo) => void;
}

/** One answered request, for the access log and the metrics. */
export interface ResponseInfo {
  readonly requestId: string;
  readonly method: string;
  /** The route pattern matched (`/cohorts-api/v2/cohorts/:cohortId`), or `unmatched`. */
  readonly route: string;
  readonly status: number;
  readonly durationMs: number;
  /** The error envelope's code (D10–D13), when the answer is an error. */
  readonly code?: number;
}

/** One served route; a WebSocket path is `GET` with `websocket: true` (its upgrade request). */
export interface ServedRoute {
  readonly method: Method;
  readonly pattern: string;
  readonly area: Area;
  readonly websocket: boolean;
}

export interface ListenResult {
  port: number;
  url: string;
}

export interface HttpServer {
  route(method: Method, pattern: string, area: Area, handler: Handler, options?: RouteOptions): void;
  /** A WebSocket route (websocket.ts): authorised at the upgrade like a route, then a socket per client. */
  webSocket<T>(pattern: string, area: Area, route: WebSocketRoute<T>): void;
  /** What this instance serves: every HTTP route and WebSocket path registered so far (`GET /openapi.json`). */
  routes(): ServedRoute[];
  /** Rejects with a clear Error (e.g. "port 8080 is already in use on 127.0.0.1") when it cannot listen. */
  listen(): Promise<ListenResult>;
  /** Graceful: stop accepting, let in-flight requests finish and their responses be written, then resolve. */
  close(): Promise<void>;
  /** Requests received and not yet fully answered (or aborted). */
  inFlight(): number;
}
