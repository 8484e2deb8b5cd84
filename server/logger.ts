// JSON-line logs (operations.md, second round) through pino: one object per line on stdout, `level` as its name and
// `time` as ISO 8601; one line per answered request at `info` (request id, method, route, status, duration, the
// error code of an error answer; a 5xx at `error`), written in pino's format without going through it (the hottest
// log path: `requestLine`); the service's own messages at `warn`; the level from `serve --log-level`. The
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
  message(level: 'debug' | 'info' | 'warn' | 'error', text: string): void;
}

/**
 * pino's `timestamp` as its `isoTime` writes it (`,"time":"<ISO 8601>"`), the text made once per millisecond: under
 * load a request line is logged every fraction of a millisecond, and `toISOString` was 2 % of the main thread's busy
 * time in a profile of the track route alone (docs/performance.md); ~45 against ~525 ns a call (bench/helpers.ts).
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
  const stamp = isoTimeOncePerMs(now);
  const logger: Logger = pino(
    {
      level,
      base: undefined,
      timestamp: stamp,
      formatters: { level: (label) => ({ level: label }) },
    },
    { write },
  );
  const infoOn = logger.isLevelEnabled('info');
  const errorOn = logger.isLevelEnabled('error');
  return {
    request(info) {
      const error = info.status >= 500;
      if (!(error ? errorOn : infoOn)) return;
      write(requestLine(error ? 'error' : 'info', stamp(), info));
    },
    message(messageLevel, text) {
      logger[messageLevel](text);
    },
  };
}

/**
 * The line pino writes for a request (`logger.info(fields, 'request')` with this module's options: the same keys in
 * the same order, strings escaped by JSON.stringify; logger.test.ts holds them equal), made directly: one line per
 * request is the hottest log path, and pino's general one (its level formatter's object, the fields' object and its
 * serialiser) took ~8 % of the main thread's busy time in a profile of the track route alone (docs/performance.md);
 * this line costs ~360 against ~800 ns (`node dist/bench/helpers.js`: pino's path with the same options, warm).
 */
function requestLine(level: 'info' | 'error', time: string, info: ResponseInfo): string {
  const code = info.code === undefined ? '' : `,"code":${info.code}`;
  const durationMs = Math.round(info.durationMs * 1000) / 1000;
  return `{"level":"${level}"${time},"request_id":${JSON.stringify(info.requestId)},"method":${JSON.stringify(info.method)},"route":${JSON.stringify(info.route)},"status":${info.status},"duration_ms":${durationMs}${code},"msg":"request"}\n`;
}
