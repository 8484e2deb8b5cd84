// createHttpServer: the uWS app behind every API area. One catch-all uWS route feeds our router (D1 trailing
// slashes, 404/405 in the area's envelope); then body (D2), context (D4, D5, D7), handler, reply or error envelope.

import { accessSync, constants } from 'node:fs';
import { randomUUID } from 'node:crypto';
import * as uWS from './uws.js';
import { ServiceError, badBody, bodyTooLarge, missingBody, notFound } from '../errors.js';
import { CORS_ALLOW_HEADERS, CORS_MAX_AGE, CorsRules, type CorsPolicy } from './cors.js';
import { DOCS_ROUTE, serveDocsPage } from './docs-pages.js';
import { renderError } from './envelopes.js';
import { baseUrl, listenApp } from './listen.js';
import { BodyReader, Context, normaliseMethod, parseJsonBody, readHeaders } from './request.js';
import { NOT_WELL_FORMED_UTF8 } from './unicode.js';
import { HEAD_LIMIT } from './uws-limits.js';
import { Exchange, type OutgoingResponse } from './response.js';
import { Router, type Route } from './router.js';
import { InFlightTracker } from './shutdown.js';
import { describePeer, isTransportSecure, type Peer } from './transport.js';
import type { Area, HttpServer, HttpServerOptions, ListenResult, Reply, ServedRoute } from './types.js';
import { registerWebSocket } from './websocket.js';

export const DEFAULT_BODY_LIMIT = 1024 * 1024;

/**
 * D44: after a body passes the limit, the rest is read and discarded (up to this many bytes beyond the limit, for at
 * most DRAIN_MS) before the 413 is sent and the connection closed. Closing while the client is still sending makes
 * the kernel reset the connection, and a client such as fetch then sees EPIPE instead of the 413. Past either bound
 * the 413 goes out at once (a client sending gigabytes is not read for ever).
 */
export const DRAIN_BYTES = 64 * 1024 * 1024;
export const DRAIN_MS = 10_000;

const HEALTHY: Reply = { status: 200, body: { status: 'ok' } };

/** D44: a client's X-Request-Id is kept when it is a UUID (any version, as sent); otherwise the server makes one. */
const CLIENT_REQUEST_ID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** The request head's size in bytes as sent (request line and header lines with their CRLFs), near enough. */
function headSize(method: string, path: string, rawQuery: string, headers: Readonly<Record<string, string>>): number {
  let size = method.length + path.length + rawQuery.length + 12; // " ", "?", " HTTP/1.1\r\n"
  for (const name in headers) size += name.length + (headers[name] as string).length + 4; // ": " and CRLF
  return size;
}

/** Refuses header names or values that would break the response (or smuggle headers into it). */
function checkHeaders(headers: Readonly<Record<string, string>>): void {
  for (const name in headers) {
    const value = headers[name];
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name) || typeof value !== 'string' || /[\r\n\0]/.test(value)) {
      throw new Error(`invalid reply header ${JSON.stringify(name)}`);
    }
  }
}

export function createHttpServer(options: HttpServerOptions): HttpServer {
  const tls = options.tls;
  const secure = tls !== undefined;
  const trustProxy = options.trustProxy ?? false;
  const bodyLimit = options.bodyLimit ?? DEFAULT_BODY_LIMIT;
  const log = options.log ?? ((line: string) => void process.stderr.write(`${line}\n`));
  if (tls !== undefined) {
    for (const file of [tls.certFile, tls.keyFile]) {
      try {
        accessSync(file, constants.R_OK);
      } catch {
        throw new Error(`cannot read TLS file ${file}`);
      }
    }
  }
  const app = tls !== undefined ? uWS.SSLApp({ cert_file_name: tls.certFile, key_file_name: tls.keyFile }) : uWS.App();
  const cors = new CorsRules(options.corsOrigins);
  const router = new Router();
  const tracker = new InFlightTracker();
  let docsUrl = options.docsUrl?.replace(/\/+$/, '') ?? baseUrl(secure, options.host, options.port);
  let listenSocket: uWS.us_listen_socket | undefined;
  let listening = false;
  let draining = false;
  let closed: Promise<void> | undefined;
  const closeSockets: (() => void)[] = [];
  const webSockets: ServedRoute[] = [];

  /** Writes a handler's reply; a reply that cannot be written (bad status, unserialisable body) becomes a 500. */
  function send(exchange: Exchange, reply: Reply, area: Area): void {
    let status: number;
    let payload: string;
    let contentType: string | undefined;
    try {
      status = reply.status;
      if (!Number.isInteger(status) || status < 100 || status > 599) throw new Error(`invalid reply status ${status}`);
      if (reply.headers !== undefined) checkHeaders(reply.headers);
      if (reply.text !== undefined) {
        payload = reply.text;
        contentType = reply.contentType ?? 'text/plain; charset=utf-8';
      } else if (reply.body !== undefined) {
        payload = JSON.stringify(reply.body);
        contentType = reply.contentType ?? 'application/json';
      } else {
        payload = '';
        contentType = reply.contentType;
      }
    } catch (error) {
      fail(exchange, area, error);
      return;
    }
    write(exchange, { status, contentType, payload, headers: reply.headers });
  }

  function write(exchange: Exchange, out: OutgoingResponse): void {
    if (draining) exchange.closeConnection = true;
    try {
      exchange.send(out);
    } catch (error) {
      // Nothing sensible can follow a half-written response (a header value uWS refused, ...): drop the connection.
      log(`request ${exchange.requestId}: writing the response failed: ${(error as Error)?.stack ?? String(error)}`);
      exchange.drop();
    }
    if (options.onResponse !== undefined) {
      try {
        options.onResponse({
          requestId: exchange.requestId,
          method: exchange.method,
          route: exchange.route,
          status: out.status,
          durationMs: performance.now() - exchange.startedAt,
          ...(exchange.errorCode === undefined ? {} : { code: exchange.errorCode }),
        });
      } catch {
        // an observer never breaks a response
      }
    }
  }

  /** Renders a thrown value: a ServiceError in the area's envelope; anything else as 500 code 5000, logged. */
  function fail(exchange: Exchange, area: Area, error: unknown, headers?: Record<string, string>): void {
    let serviceError: ServiceError;
    if (error instanceof ServiceError) {
      serviceError = error;
      if (error.status >= 500) log(`request ${exchange.requestId}: ${error.code} ${error.message}`);
    } else {
      log(`request ${exchange.requestId} failed: ${(error as Error)?.stack ?? String(error)}`);
      serviceError = new ServiceError(5000, 'An unexpected error occurred; contact support with the request id.');
    }
    const rendered = renderError(area, serviceError, exchange.requestId, docsUrl);
    exchange.errorCode = serviceError.code;
    write(exchange, {
      status: rendered.status,
      contentType: 'application/json',
      payload: JSON.stringify(rendered.body),
      headers,
    });
  }

  function dispatch(
    exchange: Exchange,
    route: Route,
    params: Record<string, string>,
    method: string,
    path: string,
    rawQuery: string,
    headers: Record<string, string>,
    peer: Peer,
    rawBody: Buffer,
  ): void {
    const area = route.area;
    try {
      const body = route.bodyMode === 'none' ? undefined : parseJsonBody(rawBody);
      if (body === undefined && route.bodyMode === 'required') throw missingBody();
      const ctx = new Context(
        method,
        path,
        params,
        rawQuery,
        headers,
        body,
        rawBody,
        exchange.requestId,
        isTransportSecure(secure, trustProxy, peer, headers['x-forwarded-proto']),
        peer.address,
      );
      const result = route.handler(ctx);
      if (result instanceof Promise || typeof (result as { then?: unknown })?.then === 'function') {
        void answerWhenSettled(exchange, result as Promise<Reply>, area);
      } else {
        send(exchange, result as Reply, area);
      }
    } catch (error) {
      fail(exchange, area, error);
    }
  }

  /**
   * An async handler's reply, sent once it settles. One function for the server, not two callbacks per request: V8
   * keeps a closure's optimized code only while a closure holding it lives (docs/performance.md).
   */
  async function answerWhenSettled(exchange: Exchange, pending: Promise<Reply>, area: Area): Promise<void> {
    let reply: Reply;
    try {
      reply = await pending;
    } catch (error) {
      fail(exchange, area, error);
      return;
    }
    send(exchange, reply, area);
  }

  function handleRequest(res: uWS.HttpResponse, req: uWS.HttpRequest): void {
    const clientId = req.getHeader('x-request-id');
    const exchange = new Exchange(res, CLIENT_REQUEST_ID.test(clientId) ? clientId : randomUUID(), tracker);
    // Everything is read from req now: it is only valid during this call.
    const method = normaliseMethod(req.getMethod());
    const path = req.getUrl();
    const rawQuery = req.getQuery() ?? '';
    const headers = readHeaders(req);
    const peer = describePeer(Buffer.from(res.getRemoteAddressAsText()).toString('latin1'));
    const match = router.match(method, path);
    exchange.method = method;
    if (match.kind === 'found') exchange.route = match.route.pattern;
    // D43: every response of the path, errors included, carries the CORS headers its policy gives this origin.
    const policy: CorsPolicy = match.kind === 'found' ? match.route.cors : match.kind === 'method-not-allowed' ? match.cors : 'private';
    exchange.corsHeaders = cors.headers(policy, headers['origin']);
    const size = headSize(method, path, rawQuery, headers);
    if (size > HEAD_LIMIT) {
      // D44: in the envelope with X-Request-Id (uWS's own limit is set above ours, see uws-limits.ts). The connection
      // stays open: uWS reads and drops any body itself, so a client still sending is not reset.
      const area = match.kind === 'found' ? match.route.area : match.area;
      fail(exchange, area, new ServiceError(1002, 'The request head is too large.', `the request line and headers exceed ${HEAD_LIMIT} bytes`, 431));
      return;
    }
    if (match.kind === 'not-found') {
      fail(exchange, match.area, notFound('resource'));
      return;
    }
    if (match.kind === 'method-not-allowed' && method === 'OPTIONS') {
      // D43 preflight: 204 without a key. A disallowed origin still gets 204, only without Allow-Origin (the
      // browser then blocks the real request).
      write(exchange, {
        status: 204,
        contentType: undefined,
        payload: '',
        headers: {
          'Access-Control-Allow-Methods': match.allowed.join(', '),
          'Access-Control-Allow-Headers': CORS_ALLOW_HEADERS,
          'Access-Control-Max-Age': CORS_MAX_AGE,
        },
      });
      return;
    }
    if (match.kind === 'method-not-allowed') {
      const allowed = match.allowed.join(', ');
      const error = new ServiceError(3000, 'The requested resource does not support this method.', `allowed: ${allowed}`, 405);
      fail(exchange, match.area, error, { Allow: allowed });
      return;
    }
    if (match.kind === 'bad-parameter') {
      fail(exchange, match.area, badBody(`path.${match.name}: ${NOT_WELL_FORMED_UTF8}`));
      return;
    }
    const { route, params } = match;
    const reader = new BodyReader(bodyLimit);
    // D2 + D44: an over-limit body is not buffered; it is drained (counted, dropped) and then answered 413.
    let received = 0;
    let draining = false;
    let drainTimer: NodeJS.Timeout | undefined;
    const refuse = () => {
      if (drainTimer !== undefined) clearTimeout(drainTimer);
      exchange.closeConnection = true;
      fail(exchange, route.area, bodyTooLarge(bodyLimit));
    };
    const drain = () => {
      draining = true;
      drainTimer = setTimeout(refuse, DRAIN_MS);
      drainTimer.unref();
    };
    const declared = headers['content-length'];
    if (declared !== undefined && Number(declared) > bodyLimit) {
      if (Number(declared) > bodyLimit + DRAIN_BYTES) {
        refuse();
        return;
      }
      drain();
    }
    res.onData((chunk, isLast) => {
      if (exchange.replied || exchange.aborted) return;
      if (draining) {
        received += chunk.byteLength;
        if (isLast || received > bodyLimit + DRAIN_BYTES) refuse();
        return;
      }
      received += chunk.byteLength;
      if (!reader.push(chunk)) {
        if (isLast) refuse();
        else drain();
        return;
      }
      if (isLast) dispatch(exchange, route, params, method, path, rawQuery, headers, peer, reader.body());
    });
  }

  app.any('/*', handleRequest);
  router.add('GET', '/healthz', 'plain', () => HEALTHY, 'none');
  router.add('GET', DOCS_ROUTE, 'plain', serveDocsPage, 'none');

  return {
    route(method, pattern, area, handler, routeOptions) {
      const bodyMode = routeOptions?.body ?? (method === 'GET' || method === 'DELETE' ? 'none' : 'optional');
      router.add(method, pattern, area, handler, bodyMode, routeOptions?.cors ?? 'private');
    },

    webSocket(pattern, area, route) {
      webSockets.push({ method: 'GET', pattern, area, websocket: true });
      closeSockets.push(registerWebSocket(app, pattern, area, route, { secure, trustProxy, docsUrl: () => docsUrl, log }));
    },

    async listen(): Promise<ListenResult> {
      if (closed !== undefined) throw new Error('the server is closed');
      if (listening) throw new Error('the server is already listening');
      listening = true;
      try {
        listenSocket = await listenApp(app, options.host, options.port);
      } catch (error) {
        listening = false;
        throw error;
      }
      if (closed !== undefined) {
        // close() ran while the bind was settling.
        uWS.us_listen_socket_close(listenSocket);
        listenSocket = undefined;
        throw new Error('the server is closed');
      }
      const port = uWS.us_socket_local_port(listenSocket as unknown as uWS.us_socket);
      const url = baseUrl(secure, options.host, port);
      if (options.docsUrl === undefined) docsUrl = url;
      return { port, url };
    },

    close(): Promise<void> {
      closed ??= (async () => {
        draining = true;
        if (listenSocket !== undefined) {
          uWS.us_listen_socket_close(listenSocket);
          listenSocket = undefined;
        }
        await tracker.drained();
        for (const closeAll of closeSockets) closeAll();
        // One turn of the loop for the last writes to leave, then drop idle keep-alive connections.
        await new Promise<void>((resolve) => setImmediate(resolve));
        app.close();
      })();
      return closed;
    },

    routes: () => [...router.routes().map((r): ServedRoute => ({ method: r.method, pattern: r.pattern, area: r.area, websocket: false })), ...webSockets],

    inFlight: () => tracker.size(),
  };
}


