// Writing a response on uWS: one Exchange per request tracks abort and completion; the status, headers (always
// X-Request-Id, D4) and body are written inside res.cork, large bodies with tryEnd + onWritable (backpressure).

import type { HttpResponse } from 'uWebSockets.js';
import { reasonPhrase } from './envelopes.js';
import type { InFlightTracker } from './shutdown.js';

/** Bodies up to this size go out with one res.end; larger ones stream under backpressure. */
const STREAM_THRESHOLD = 64 * 1024;

const statusLines = new Map<number, string>();

function statusLine(status: number): string {
  let line = statusLines.get(status);
  if (line === undefined) {
    line = `${status} ${reasonPhrase(status)}`;
    statusLines.set(status, line);
  }
  return line;
}

export interface OutgoingResponse {
  readonly status: number;
  /** undefined: no Content-Type (an empty body). */
  readonly contentType: string | undefined;
  readonly payload: string;
  readonly headers: Readonly<Record<string, string>> | undefined;
}

/** Headers the layer writes itself; a handler's copies are dropped. */
const RESERVED_HEADERS = new Set(['content-type', 'content-length', 'x-request-id', 'transfer-encoding', 'connection']);

export class Exchange {
  /** The client went away; res must not be touched any more. */
  aborted = false;
  /** A response was started (only one ever is). */
  replied = false;
  /** Released from the in-flight count (answered completely, or aborted). */
  private settled = false;
  /** Close the connection after this response (over-limit body, shutting down). */
  closeConnection = false;
  /** D43: CORS headers (Vary, Allow-Origin, Expose-Headers) written on whatever response this exchange sends. */
  corsHeaders: Readonly<Record<string, string>> | undefined;
  /** For the access log and metrics: the request's method, the route pattern it matched, its error code if any. */
  method = '';
  route = 'unmatched';
  errorCode: number | undefined;
  readonly startedAt = performance.now();

  constructor(
    readonly res: HttpResponse,
    readonly requestId: string,
    private readonly tracker: InFlightTracker,
  ) {
    tracker.begin();
    // Registered before anything asynchronous, as uWS requires.
    res.onAborted(() => {
      this.aborted = true;
      this.settle();
    });
  }

  /** Writes the response unless the client has gone or a response was already started. */
  send(out: OutgoingResponse): void {
    if (this.aborted || this.replied) return;
    this.replied = true;
    const res = this.res;
    res.cork(() => {
      res.writeStatus(statusLine(out.status));
      if (out.contentType !== undefined) res.writeHeader('Content-Type', out.contentType);
      res.writeHeader('X-Request-Id', this.requestId);
      if (this.corsHeaders !== undefined) {
        for (const name in this.corsHeaders) res.writeHeader(name, this.corsHeaders[name] as string);
      }
      if (out.headers !== undefined) {
        for (const name in out.headers) {
          if (!RESERVED_HEADERS.has(name.toLowerCase())) res.writeHeader(name, out.headers[name] as string);
        }
      }
      if (out.payload.length <= STREAM_THRESHOLD || this.closeConnection) {
        res.end(out.payload, this.closeConnection);
        this.settle();
      } else {
        this.stream(Buffer.from(out.payload, 'utf8'));
      }
    });
  }

  /** tryEnd as much as the socket takes; continue from onWritable at the offset it reports. */
  private stream(body: Buffer): void {
    const res = this.res;
    const total = body.length;
    const start = res.getWriteOffset();
    const [, done] = res.tryEnd(body, total);
    if (done) {
      this.settle();
      return;
    }
    res.onWritable((offset) => {
      if (this.aborted) return true;
      const [ok, finished] = res.tryEnd(body.subarray(offset - start), total);
      if (finished) this.settle();
      return ok;
    });
  }

  /** Closes the connection after a failed write; onAborted then releases the exchange. */
  drop(): void {
    if (this.aborted) return;
    try {
      this.res.close();
    } catch {
      this.settle();
    }
  }

  private settle(): void {
    if (this.settled) return;
    this.settled = true;
    this.tracker.end();
  }
}
