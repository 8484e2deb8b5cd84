// WebSocket routes on uWebSockets.js's own support (D38's live stream). The upgrade request is authorised like any
// route (`accept` gets a RequestContext without a body; a thrown ServiceError is answered in the area's envelope and
// nothing is upgraded); an accepted socket carries what `accept` returned. Backpressure stays visible to the route
// (`bufferedAmount`), which decides when a slow client is dropped; the server closes every socket when it stops.

import { randomUUID } from 'node:crypto';
import type * as uWS from './uws.js';
import { ServiceError } from '../errors.js';
import { renderError } from './envelopes.js';
import { Context, readHeaders } from './request.js';
import { describePeer, isTransportSecure } from './transport.js';
import type { Area, RequestContext } from './types.js';

/** An open socket as a route sees it. */
export interface SocketHandle<T> {
  readonly data: T;
  /** Sends one text frame; false when the socket is closed. */
  send(text: string): boolean;
  /** Bytes queued for the client and not yet written (backpressure). */
  bufferedAmount(): number;
  end(code: number, reason: string): void;
}

export interface WebSocketRoute<T> {
  /** Authorises the upgrade and answers the socket's data; throws a ServiceError to refuse it. */
  accept(ctx: RequestContext): T | Promise<T>;
  open(socket: SocketHandle<T>): void;
  /** The client read some of what was queued. */
  drain?(socket: SocketHandle<T>): void;
  close(socket: SocketHandle<T>): void;
}

interface Settings {
  readonly secure: boolean;
  readonly trustProxy: boolean;
  readonly docsUrl: () => string;
  readonly log: (line: string) => void;
}

interface Attached<T> {
  readonly data: T;
  handle?: SocketHandle<T>;
}

/** Registers `route` on `pattern`; answers a function closing every open socket of the route (server close). */
export function registerWebSocket<T>(app: uWS.TemplatedApp, pattern: string, area: Area, route: WebSocketRoute<T>, settings: Settings): () => void {
  const open = new Set<uWS.WebSocket<Attached<T>>>();
  const handleOf = (ws: uWS.WebSocket<Attached<T>>): SocketHandle<T> => {
    const attached = ws.getUserData();
    attached.handle ??= {
      data: attached.data,
      send: (text) => open.has(ws) && ws.send(text, false) !== 2,
      bufferedAmount: () => (open.has(ws) ? ws.getBufferedAmount() : 0),
      end: (code, reason) => {
        if (open.has(ws)) ws.end(code, reason);
      },
    };
    return attached.handle;
  };

  app.ws<Attached<T>>(pattern, {
    compression: 0,
    maxPayloadLength: 16 * 1024,
    idleTimeout: 120,
    sendPingsAutomatically: true,
    // The route watches bufferedAmount and drops slow clients itself; uWS must not drop messages silently.
    maxBackpressure: 64 * 1024 * 1024,
    closeOnBackpressureLimit: true,
    upgrade: (res, req, context) => {
      // Everything is read from req now: it is only valid during this call.
      const clientId = req.getHeader('x-request-id');
      const requestId = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i.test(clientId) ? clientId : randomUUID();
      const headers = readHeaders(req);
      const path = req.getUrl();
      const rawQuery = req.getQuery() ?? '';
      const key = headers['sec-websocket-key'] ?? '';
      const protocol = headers['sec-websocket-protocol'] ?? '';
      const extensions = headers['sec-websocket-extensions'] ?? '';
      const peer = describePeer(Buffer.from(res.getRemoteAddressAsText()).toString('latin1'));
      let aborted = false;
      res.onAborted(() => {
        aborted = true;
      });
      const refuse = (error: unknown): void => {
        if (aborted) return;
        const serviceError = error instanceof ServiceError ? error : new ServiceError(5000, 'An unexpected error occurred; contact support with the request id.');
        if (!(error instanceof ServiceError)) settings.log(`websocket ${requestId} failed: ${(error as Error)?.stack ?? String(error)}`);
        const rendered = renderError(area, serviceError, requestId, settings.docsUrl());
        res.cork(() => {
          res
            .writeStatus(`${rendered.status}`)
            .writeHeader('Content-Type', 'application/json')
            .writeHeader('X-Request-Id', requestId)
            .end(JSON.stringify(rendered.body), true);
        });
      };
      let accepted: T | Promise<T>;
      try {
        const ctx = new Context('GET', path, {}, rawQuery, headers, undefined, Buffer.alloc(0), requestId, isTransportSecure(settings.secure, settings.trustProxy, peer, headers['x-forwarded-proto']), peer.address);
        accepted = route.accept(ctx);
      } catch (error) {
        refuse(error);
        return;
      }
      Promise.resolve(accepted).then(
        (data) => {
          if (aborted) return;
          res.cork(() => res.upgrade<Attached<T>>({ data }, key, protocol, extensions, context));
        },
        refuse,
      );
    },
    open: (ws) => {
      open.add(ws);
      route.open(handleOf(ws));
    },
    drain: (ws) => route.drain?.(handleOf(ws)),
    close: (ws) => {
      const handle = handleOf(ws);
      open.delete(ws);
      route.close(handle);
    },
  });

  return () => {
    for (const ws of [...open]) ws.end(1001, 'server stopping');
  };
}
