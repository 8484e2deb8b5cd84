import { EventEmitter } from 'node:events';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { coalesceLines, collapseRepeats, safeWriter } from './log.js';

describe('collapseRepeats', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  const tickFailure = (partition: number, items: number) =>
    `ingest: tick of partition(s) ${partition} with ${items} item(s) failed: Error: IO error: No space left on device\n    at write (level.ts:1:1)`;

  it('logs the first failure of a burst with its stack, then one line with the count when the burst ends', () => {
    const lines: string[] = [];
    const log = collapseRepeats((line) => lines.push(line), { quietMs: 1000, reportEveryMs: 60_000 });
    for (let i = 0; i < 50; i++) {
      log(tickFailure(i % 4, i + 1));
      vi.advanceTimersByTime(100);
    }
    expect(lines).toEqual([tickFailure(0, 1)]);
    log('request 1f0c2b9e-8a7d-4c1e-9f3a-0b1c2d3e4f50 failed: something else');
    expect(lines).toHaveLength(2);
    vi.advanceTimersByTime(1000);
    expect(lines.slice(2).sort()).toEqual([
      '49 more failure(s) of the same kind: ingest: tick of partition(s) 0 with 1 item(s) failed: Error: IO error: No space left on device',
    ]);
    // A new burst starts over with the stack.
    log(tickFailure(2, 3));
    expect(lines[lines.length - 1]).toBe(tickFailure(2, 3));
  });

  it('reports the count every so often while a burst lasts, and at flush', () => {
    const lines: string[] = [];
    const log = collapseRepeats((line) => lines.push(line), { quietMs: 1000, reportEveryMs: 5000 });
    for (let i = 0; i < 100; i++) {
      log(tickFailure(1, 1));
      vi.advanceTimersByTime(100);
    }
    const counts = lines.slice(1).map((line) => Number(/^(\d+) more/.exec(line)?.[1]));
    expect(counts.length).toBeGreaterThanOrEqual(1);
    log.flush();
    const all = lines.slice(1).map((line) => Number(/^(\d+) more/.exec(line)?.[1]));
    expect(all.reduce((a, b) => a + b, 0)).toBe(99);
    expect(lines.slice(1).every((line) => !line.includes('\n'))).toBe(true);
  });

  it('ignores a log that throws', () => {
    const log = collapseRepeats(() => {
      throw new Error('ENOSPC');
    });
    expect(() => log('x')).not.toThrow();
  });
});

describe('safeWriter', () => {
  it('drops a write that throws and handles the stream error event', () => {
    const stream = Object.assign(new EventEmitter(), {
      written: [] as string[],
      destroyed: false,
      write(text: string): boolean {
        if (text === 'fail') throw Object.assign(new Error('ENOSPC'), { code: 'ENOSPC' });
        this.written.push(text);
        return true;
      },
    });
    const write = safeWriter(stream as never);
    expect(() => write('fail')).not.toThrow();
    // An unhandled 'error' event would throw here.
    expect(() => stream.emit('error', Object.assign(new Error('EPIPE'), { code: 'EPIPE' }))).not.toThrow();
    write('ok');
    expect(stream.written).toEqual(['ok']);
  });
});

describe('coalesceLines', () => {
  it('writes the lines of one turn as one string at the next check phase, in order', async () => {
    const writes: string[] = [];
    const out = coalesceLines((text) => writes.push(text));
    out('a\n');
    out('b\n');
    expect(writes).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(writes).toEqual(['a\nb\n']);
    out('c\n');
    await new Promise((resolve) => setImmediate(resolve));
    expect(writes).toEqual(['a\nb\n', 'c\n']);
  });

  it('flush writes what is held at once and leaves nothing for the scheduled write', async () => {
    const writes: string[] = [];
    const out = coalesceLines((text) => writes.push(text));
    out('first\n');
    out.flush();
    expect(writes).toEqual(['first\n']);
    out.flush();
    await new Promise((resolve) => setImmediate(resolve));
    expect(writes).toEqual(['first\n']);
    out('second\n');
    await new Promise((resolve) => setImmediate(resolve));
    expect(writes).toEqual(['first\n', 'second\n']);
  });
});
