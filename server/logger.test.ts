import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { createLogger, isoTimeOncePerMs } from './logger.js';
import type { ResponseInfo } from './http/index.js';

describe('log lines (operations.md: JSON lines, one per request at info)', () => {
  it('stamps each line with the ISO 8601 time of its clock, as pino.stdTimeFunctions.isoTime writes it', () => {
    let now = Date.UTC(2026, 10, 29, 2, 3, 4, 5);
    const lines: string[] = [];
    const logger = createLogger('info', (line) => lines.push(line), () => now);
    logger.request({ requestId: 'r1', method: 'POST', route: '/v2.0/events', status: 200, durationMs: 1.23456 });
    logger.request({ requestId: 'r2', method: 'GET', route: '/healthz', status: 200, durationMs: 0.5 });
    now += 1;
    logger.request({ requestId: 'r3', method: 'POST', route: '/v2.0/events', status: 400, durationMs: 2, code: 1007 });
    const parsed = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(parsed.map((line) => line['time'])).toEqual(['2026-11-29T02:03:04.005Z', '2026-11-29T02:03:04.005Z', '2026-11-29T02:03:04.006Z']);
    expect(parsed[0]).toEqual({ level: 'info', time: '2026-11-29T02:03:04.005Z', request_id: 'r1', method: 'POST', route: '/v2.0/events', status: 200, duration_ms: 1.235, msg: 'request' });
    expect(parsed[2]).toMatchObject({ request_id: 'r3', status: 400, code: 1007 });
  });

  it('writes the same time text as isoTime, made again only when the millisecond changes', () => {
    const clock = [0, 0, 1, 1_700_000_000_123, 1_700_000_000_123, 1_700_000_000_124];
    let at = 0;
    let made = 0;
    const realDate = Date.prototype.toISOString;
    Date.prototype.toISOString = function (this: Date) {
      made++;
      return realDate.call(this);
    };
    try {
      const stamp = isoTimeOncePerMs(() => clock[at++] as number);
      const texts = clock.map(() => stamp());
      expect(texts).toEqual(clock.map((ms) => `,"time":"${new Date(ms).toISOString()}"`));
      made -= clock.length; // the expected texts above made one each
      expect(made).toBe(4); // 0, 1, ...123, ...124
    } finally {
      Date.prototype.toISOString = realDate;
    }
    const sample = pino.stdTimeFunctions.isoTime();
    expect(sample).toMatch(/^,"time":"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z"$/);
  });

  it("writes each request's line exactly as pino writes the same fields, at the level pino would", () => {
    const now = () => Date.UTC(2026, 10, 29, 2, 30, 0, 1);
    const infos: ResponseInfo[] = [
      { requestId: '0f8fad5b-d9cb-469f-a165-70867728950e', method: 'POST', route: '/v2.0/events', status: 200, durationMs: 1.23456 },
      { requestId: 'r', method: 'GET', route: 'unmatched', status: 404, durationMs: 0.0004999, code: 3000 },
      { requestId: 'a\\b"c', method: 'PO"ST\u2028', route: '/x/:id', status: 503, durationMs: 1234.5678, code: 5000 },
      { requestId: 'x'.repeat(60), method: 'DELETE', route: '/v2.0/users/:userId/aliases', status: 204, durationMs: 0 },
    ];
    for (const level of ['info', 'warn', 'error', 'silent'] as const) {
      const ours: string[] = [];
      const logger = createLogger(level, (line) => ours.push(line), now);
      const theirs: string[] = [];
      const reference = pino(
        { level, base: undefined, timestamp: isoTimeOncePerMs(now), formatters: { level: (label) => ({ level: label }) } },
        { write: (line: string) => void theirs.push(line) },
      );
      for (const info of infos) {
        logger.request(info);
        const fields = {
          request_id: info.requestId,
          method: info.method,
          route: info.route,
          status: info.status,
          duration_ms: Math.round(info.durationMs * 1000) / 1000,
          ...(info.code === undefined ? {} : { code: info.code }),
        };
        if (info.status >= 500) reference.error(fields, 'request');
        else reference.info(fields, 'request');
      }
      expect(ours).toEqual(theirs);
      expect(ours.length).toBe({ info: 4, warn: 1, error: 1, silent: 0 }[level]);
    }
    // Where pino would write a lone surrogate raw (not UTF-8), the line escapes it: it stays one valid JSON object.
    const lines: string[] = [];
    createLogger('info', (line) => lines.push(line), now).request({ requestId: 'r', method: 'X\ud800', route: 'unmatched', status: 405, durationMs: 1 });
    expect(lines[0]).toContain('"method":"X\\ud800"');
    expect(JSON.parse(lines[0] as string)).toMatchObject({ method: 'X\ud800', status: 405 });
  });
});
