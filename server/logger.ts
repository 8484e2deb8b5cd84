// JSON-line logs (operations.md, second round) through pino: one object per line on stdout, `level` as its name and
// `time` as ISO 8601; one line per answered request at `info` (request id, method, route, status, duration, the
// error code of an error answer); the service's own messages at `warn`; the level from `serve --log-level`. The
// destination is a safe writer (server/log.ts): a failing stdout (EPIPE, a full disk) drops lines, never the server;
// `serve` hands it the lines of one event-loop turn in one write (server/log.ts coalesceLines).

import { pino, type Logger } from 'pino';
import type { ResponseInfo } from './http/index.js';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface ServiceLogger {
  /** One answered request (the HTTP layer's onResponse). */
  request(info: ResponseInfo): void;
  /** A message of the service (failures, retries, stops) as one line. */
  message(level: 'info' | 'warn' | 'error', text: string): void;
}

/**
 * pino's `timestamp` as its `isoTime` writes it (`,"time":"<ISO 8601>"`), the text made once per millisecond: under
 * load a request line is logged every fraction of a millisecond, and `toISOString` was 2 % of the main thread's busy
 * time in a profile of the track route alone (docs/performance.md).
 */
export function isoTimeOncePerMs(now: () => number = Date.now): () => string {
  let lastMs = Number.NaN;
  let lastText = '';
  return () => {
    const ms = now();
    if (ms !== lastMs) {
      lastMs = ms;
      lastText = `,"time":"${new Date(ms).toISOString()}"`;
    }
    return lastText;
  };
}

export function createLogger(level: LogLevel, write: (line: string) => void, now: () => number = Date.now): ServiceLogger {
  const logger: Logger = pino(
    {
      level,
      base: undefined,
      timestamp: isoTimeOncePerMs(now),
      formatters: { level: (label) => ({ level: label }) },
    },
    { write },
  );
  return {
    request(info) {
      const fields = {
        request_id: info.requestId,
        method: info.method,
        route: info.route,
        status: info.status,
        duration_ms: Math.round(info.durationMs * 1000) / 1000,
        ...(info.code === undefined ? {} : { code: info.code }),
      };
      if (info.status >= 500) logger.error(fields, 'request');
      else logger.info(fields, 'request');
    },
    message(messageLevel, text) {
      logger[messageLevel](text);
    },
  };
}
