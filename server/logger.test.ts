import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { createLogger, isoTimeOncePerMs } from './logger.js';

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
});
