import { afterEach, describe, expect, it, vi } from 'vitest';
import { FREE_SHARE, HeapCompactor, IDLE_SHARE, MIN_FREE_BYTES, collectGarbage, compactHeap, compactIfFragmented, fragmented, oldSpace, startHeapCompactor, type HeapCompaction, type OldSpace } from './heap-compaction.js';

const MiB = 1024 * 1024;

afterEach(() => {
  vi.useRealTimers();
});

const compaction = (residentBefore: number, residentAfter: number): HeapCompaction => ({
  ms: 1,
  before: { residentBytes: residentBefore * MiB, usedBytes: 100 * MiB },
  after: { residentBytes: residentAfter * MiB, usedBytes: 100 * MiB },
});

/** A compactor on a scripted clock: `use(cpuMs, wallMs)` moves the process's CPU time and the time before a look. */
function scripted(options: { own?: (settle: boolean) => HeapCompaction | undefined; owners?: (settle: boolean) => Promise<Array<HeapCompaction | undefined>> }) {
  let cpuMicros = 0;
  let nowMs = 0;
  const reported: Array<[HeapCompaction, string]> = [];
  const errors: unknown[] = [];
  const compactor = new HeapCompactor({
    everyMs: 0,
    own: options.own ?? (() => undefined),
    ...(options.owners === undefined ? {} : { owners: options.owners }),
    cpuMicros: () => cpuMicros,
    nowMs: () => nowMs,
    onCompaction: (done, thread) => reported.push([done, thread]),
    onError: (error) => errors.push(error),
  });
  const use = (cpuMs: number, wallMs: number): void => {
    cpuMicros += cpuMs * 1000;
    nowMs += wallMs;
  };
  return { compactor, reported, errors, use };
}

describe('heap compaction when idle (serve --compact-heap-every)', () => {
  it('counts a space as fragmented from MIN_FREE_BYTES free, and FREE_SHARE of its live bytes', () => {
    expect(fragmented({ residentBytes: 100 * MiB, usedBytes: 100 * MiB - MIN_FREE_BYTES + 1 })).toBe(false);
    expect(fragmented({ residentBytes: 100 * MiB, usedBytes: 100 * MiB - MIN_FREE_BYTES })).toBe(true);
    // Past the minimum, the share decides: 40 MiB free for 200 MiB live is under a quarter.
    expect(FREE_SHARE).toBe(0.25);
    expect(fragmented({ residentBytes: 240 * MiB, usedBytes: 200 * MiB })).toBe(false);
    expect(fragmented({ residentBytes: 250 * MiB, usedBytes: 200 * MiB })).toBe(true);
  });

  it('compacts a heap only when fragmented, and says what it did', () => {
    const compact = vi.fn();
    const collect = vi.fn();
    const tight: OldSpace = { residentBytes: 180 * MiB, usedBytes: 172 * MiB };
    expect(compactIfFragmented(false, { compact, collect, space: () => tight })).toBeUndefined();
    expect(compact).not.toHaveBeenCalled();
    expect(collect).not.toHaveBeenCalled();
    let space: OldSpace = { residentBytes: 363 * MiB, usedBytes: 172 * MiB };
    const done = compactIfFragmented(true, {
      compact: () => {
        compact();
        space = { residentBytes: 176 * MiB, usedBytes: 172 * MiB };
      },
      collect,
      space: () => space,
    });
    expect(compact).toHaveBeenCalledTimes(1);
    expect(collect).not.toHaveBeenCalled(); // fragmented as it stood: no settling collection needed
    expect(done).toMatchObject({ before: { residentBytes: 363 * MiB }, after: { residentBytes: 176 * MiB } });
  });

  it('settles a heap whose dead objects still count as used with a plain collection first, when asked', () => {
    // Right after a load: 360 MiB resident, 350 counted as used, of which only 170 live.
    let space: OldSpace = { residentBytes: 360 * MiB, usedBytes: 350 * MiB };
    const calls = {
      collect: vi.fn(() => {
        space = { residentBytes: 360 * MiB, usedBytes: 170 * MiB };
      }),
      compact: vi.fn(() => {
        space = { residentBytes: 175 * MiB, usedBytes: 170 * MiB };
      }),
      space: () => space,
    };
    expect(compactIfFragmented(false, calls)).toBeUndefined();
    expect(calls.collect).not.toHaveBeenCalled();
    expect(compactIfFragmented(true, calls)).toMatchObject({ before: { usedBytes: 170 * MiB }, after: { residentBytes: 175 * MiB } });
    expect(calls.collect).toHaveBeenCalledTimes(1);
    expect(calls.compact).toHaveBeenCalledTimes(1);
    // A heap too small to hold MIN_FREE_BYTES free is not collected to find out.
    const small = { collect: vi.fn(), compact: vi.fn(), space: () => ({ residentBytes: 20 * MiB, usedBytes: 19 * MiB }) };
    expect(compactIfFragmented(true, small)).toBeUndefined();
    expect(small.collect).not.toHaveBeenCalled();
  });

  it('asks to settle at the first pass and at the first idle look after a busy one, not at every idle look', async () => {
    const asked: boolean[] = [];
    const { compactor, use } = scripted({
      own: (settle) => {
        asked.push(settle);
        return undefined;
      },
      owners: async (settle) => {
        asked.push(settle);
        return [];
      },
    });
    use(0, 1000);
    await compactor.look();
    use(0, 1000);
    await compactor.look();
    use(1000, 1000); // busy
    expect(compactor.look()).toBeUndefined();
    use(0, 1000);
    await compactor.look();
    expect(asked).toEqual([true, true, false, false, true, true]);
  });

  it('passes at a look that finds the process idle: its own heap first, then each owner\'s; none while busy', async () => {
    const order: string[] = [];
    const { compactor, reported, use } = scripted({
      own: () => {
        order.push('own');
        return compaction(300, 120);
      },
      owners: async () => {
        order.push('owners');
        return [undefined, compaction(400, 150)];
      },
    });
    use(IDLE_SHARE * 30_000, 30_000); // exactly the bound: busy
    expect(compactor.look()).toBeUndefined();
    use(10_000, 30_000);
    expect(compactor.look()).toBeUndefined();
    expect(compactor.busy).toBe(2);
    expect(order).toEqual([]);
    use(IDLE_SHARE * 30_000 - 1, 30_000);
    const done = await compactor.look();
    expect(order).toEqual(['own', 'owners']);
    expect(done).toHaveLength(2);
    expect(reported.map(([, thread]) => thread)).toEqual(['main thread', 'owner 2']);
  });

  it('measures the next look from the end of a pass, not counting the pass\'s own CPU as load', async () => {
    let use: (cpuMs: number, wallMs: number) => void = () => undefined;
    const made = scripted({ own: () => {
      use(2000, 2000); // a compaction's pause: a whole core for 2 s
      return compaction(300, 120);
    } });
    use = made.use;
    made.use(0, 1000);
    await made.compactor.look();
    made.use(10, 1000); // idle since the pass (with the pass counted, 2.01 s of CPU over 3 s)
    expect(made.compactor.look()).toBeDefined();
    expect(made.compactor.busy).toBe(0);
  });

  it('reports owners that cannot be asked, keeps its own compaction, and asks again at the next pass', async () => {
    let fail = true;
    const { compactor, reported, errors } = scripted({
      own: () => compaction(300, 120),
      owners: async () => {
        if (fail) throw new Error('closing');
        return [compaction(200, 90)];
      },
    });
    expect(await compactor.pass()).toHaveLength(1);
    expect(errors).toEqual([new Error('closing')]);
    fail = false;
    expect(await compactor.pass()).toHaveLength(2);
    expect(reported.map(([, thread]) => thread)).toEqual(['main thread', 'main thread', 'owner 1']);
  });

  it('runs one pass at a time: pass() during one answers that one', async () => {
    let release: (value: Array<HeapCompaction | undefined>) => void = () => undefined;
    const owners = vi.fn(() => new Promise<Array<HeapCompaction | undefined>>((resolve) => (release = resolve)));
    const { compactor } = scripted({ owners });
    const first = compactor.pass();
    expect(compactor.pass()).toBe(first);
    await Promise.resolve();
    release([compaction(100, 50)]);
    expect(await first).toHaveLength(1);
    expect(owners).toHaveBeenCalledTimes(1);
    await compactor.stop();
  });

  it('looks every everyMs from its timer, and not after stop()', async () => {
    vi.useFakeTimers();
    const cpuMicros = vi.fn(() => 0);
    const compactor = new HeapCompactor({ everyMs: 1000, cpuMicros, own: () => undefined });
    const constructed = cpuMicros.mock.calls.length;
    vi.advanceTimersByTime(3000);
    expect(cpuMicros.mock.calls.length - constructed).toBeGreaterThanOrEqual(3);
    await compactor.stop();
    const stopped = cpuMicros.mock.calls.length;
    vi.advanceTimersByTime(3000);
    expect(cpuMicros.mock.calls.length).toBe(stopped);
  });

  it('serve starts none with 0', async () => {
    expect(startHeapCompactor(0, undefined, () => undefined)).toBeUndefined();
    const compactor = startHeapCompactor(60_000, async () => [], () => undefined);
    expect(compactor).toBeInstanceOf(HeapCompactor);
    await compactor?.stop();
  });

  it('gives back the pages of a fragmented old space, which a full collection alone keeps', () => {
    // ~80 MiB of small arrays old enough to be promoted, then every other one dropped: each page keeps live objects,
    // so a collection that only sweeps frees no page; the compaction moves the survivors together.
    let kept: Array<number[] | undefined> = [];
    for (let i = 0; i < 400_000; i++) kept.push(new Array(20).fill(i));
    for (let round = 0; round < 3; round++) for (let i = 0; i < 50_000; i++) void new Array(64).fill(round); // promote them
    for (let i = 0; i < kept.length; i += 2) kept[i] = undefined;
    // The control: a full collection as V8 runs it frees the dropped arrays but keeps (nearly all) their pages.
    collectGarbage();
    const before = oldSpace();
    expect(before.residentBytes - before.usedBytes).toBeGreaterThan(25 * MiB);
    compactHeap();
    const after = oldSpace();
    // Half of the arrays' ~80 MiB went: now most of it leaves the resident pages too.
    expect(before.residentBytes - after.residentBytes).toBeGreaterThan(25 * MiB);
    expect(after.residentBytes - after.usedBytes).toBeLessThan(MIN_FREE_BYTES);
    expect(kept.filter((one) => one !== undefined)).toHaveLength(200_000);
    kept = [];
  });
});
