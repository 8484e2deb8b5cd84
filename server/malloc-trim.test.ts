import { afterEach, describe, expect, it, vi } from 'vitest';
import { MallocTrimmer, loadMallocTrim, startMallocTrimmer, type NativeTrim } from './malloc-trim.js';

/** A trim whose passes the test ends by hand. */
function manualTrim(): { trim: NativeTrim; calls: number; finish(error?: unknown, released?: boolean): void } {
  const pending: Array<(error: unknown, released: boolean) => void> = [];
  const handle = {
    calls: 0,
    trim: ((done) => {
      handle.calls++;
      pending.push(done);
    }) as NativeTrim,
    finish(error?: unknown, released = true) {
      (pending.shift() as (error: unknown, released: boolean) => void)(error, released);
    },
  };
  return handle;
}

afterEach(() => {
  vi.useRealTimers();
});

describe('malloc_trim through koffi (serve --malloc-trim-every)', () => {
  it('is found in glibc on Linux and runs off the event loop; elsewhere says why not', async () => {
    const loaded = await loadMallocTrim();
    if (process.platform !== 'linux') {
      expect(loaded).toEqual({ unavailable: expect.stringContaining('not Linux') });
      return;
    }
    if (!('trim' in loaded)) throw new Error(`expected malloc_trim on this machine: ${loaded.unavailable}`);
    // Memory freed by the C allocator: a pass has something to give back.
    for (let i = 0; i < 64; i++) Buffer.allocUnsafeSlow(1024 * 1024).fill(i);
    let answered = false;
    const released = new Promise<boolean>((resolve, reject) =>
      loaded.trim((error, result) => {
        answered = true;
        if (error !== undefined) reject(error);
        else resolve(result);
      }),
    );
    expect(answered).toBe(false); // koffi's asynchronous call: the answer comes in a later turn
    expect(typeof (await released)).toBe('boolean');
  });

  it('reports each pass with the RSS around it, one pass at a time', async () => {
    const native = manualTrim();
    const rss = [1000, 600];
    const passes: unknown[] = [];
    const trimmer = new MallocTrimmer({ trim: native.trim, everyMs: 0, rss: () => rss.shift() as number, onPass: (pass) => passes.push(pass) });
    const first = trimmer.pass();
    expect(trimmer.pass()).toBe(first); // a pass asked for while one runs is that one
    expect(native.calls).toBe(1);
    native.finish(undefined, true);
    expect(await first).toMatchObject({ released: true, rssBefore: 1000, rssAfter: 600 });
    expect(passes).toHaveLength(1);
    const second = trimmer.pass();
    expect(native.calls).toBe(2);
    native.finish(undefined, false);
    expect((await second).released).toBe(false);
    await trimmer.stop();
  });

  it('runs a pass every everyMs until stopped, and stop waits for the running one', async () => {
    vi.useFakeTimers();
    const native = manualTrim();
    const trimmer = new MallocTrimmer({ trim: native.trim, everyMs: 30_000, rss: () => 0, cpuMicros: () => 0, nowMs: () => Date.now() });
    vi.advanceTimersByTime(29_999);
    expect(native.calls).toBe(0);
    vi.advanceTimersByTime(1);
    expect(native.calls).toBe(1);
    // The pass still runs at the next tick: no second call into the allocator.
    vi.advanceTimersByTime(30_000);
    expect(native.calls).toBe(1);
    let stopped = false;
    const stopping = trimmer.stop().then(() => {
      stopped = true;
    });
    await Promise.resolve();
    expect(stopped).toBe(false);
    native.finish();
    await stopping;
    vi.advanceTimersByTime(120_000);
    expect(native.calls).toBe(1);
  });

  it('skips the pass of an interval in which the process used half a core or more', async () => {
    vi.useFakeTimers();
    const native = manualTrim();
    let cpu = 0; // microseconds
    const trimmer = new MallocTrimmer({ trim: native.trim, everyMs: 10_000, rss: () => 0, cpuMicros: () => cpu, nowMs: () => Date.now() });
    cpu += 5_000_000; // 5 s of CPU in 10 s: busy (BUSY_SHARE)
    vi.advanceTimersByTime(10_000);
    expect(native.calls).toBe(0);
    expect(trimmer.skipped).toBe(1);
    cpu += 4_999_000; // just under half a core: a pass
    vi.advanceTimersByTime(10_000);
    expect(native.calls).toBe(1);
    native.finish();
    cpu += 12_000_000; // more than a core (the owners, LevelDB's threads): busy
    vi.advanceTimersByTime(10_000);
    expect(native.calls).toBe(1);
    expect(trimmer.skipped).toBe(2);
    await trimmer.stop();
  });

  it('stops its timer after a failed pass and says so once', async () => {
    vi.useFakeTimers();
    const native = manualTrim();
    const errors: unknown[] = [];
    const trimmer = new MallocTrimmer({ trim: native.trim, everyMs: 1_000, rss: () => 0, cpuMicros: () => 0, nowMs: () => Date.now(), onError: (error) => errors.push(error) });
    vi.advanceTimersByTime(1_000);
    native.finish(new Error('no'));
    await vi.waitFor(() => expect(errors).toHaveLength(1));
    vi.advanceTimersByTime(10_000);
    expect(native.calls).toBe(1);
    await trimmer.stop();
  });

  it('is off with 0 seconds, and logs each pass at debug otherwise', async () => {
    const lines: Array<[string, string]> = [];
    const log = (level: string, text: string): void => {
      lines.push([level, text]);
    };
    expect(await startMallocTrimmer(0, log)).toBeUndefined();
    expect(lines).toEqual([]);
    const trimmer = await startMallocTrimmer(3_600_000, log);
    if (trimmer === undefined) {
      expect(process.platform).not.toBe('linux');
      expect(lines).toEqual([['info', expect.stringContaining('nothing to trim with')]]);
      return;
    }
    await trimmer.pass();
    await trimmer.stop();
    expect(lines).toEqual([['debug', expect.stringMatching(/^malloc_trim: \d+\.\d ms, RSS \d+ -> \d+ MiB$/)]]);
  });
});
