// The generated README section: targets marked met/missed from the figures, a benchmark that could not run shown as
// not available (never a number), and only the text between the markers rewritten.

import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BEGIN, END, renderResults, writeReadme, type BenchResults } from '../../bench/report.js';
import { ratiosOf, spreadOf } from '../../bench/stats.js';
import type { ReferenceBenchResult } from '../../bench/reference.js';
import type { MemoryBenchResult, MemoryPoint } from '../../bench/memory.js';
import type { EngineBenchResult } from '../../bench/engine.js';
import type { Comparison } from '../../bench/http.js';
import { loadResult } from './load-fixtures.js';

const base: BenchResults = {
  command: 'npm run bench',
  machine: { cpu: 'Test CPU', cores: 2, memoryBytes: 2 ** 33, os: 'Linux', node: 'v20', loadAverage: 0.5 },
  load: { connections: 50, pipelining: 1, durationSeconds: 15, warmupSeconds: 5, timeoutSeconds: 10 },
  runs: 3,
  users: 100_000,
};

const reference = (ratio: number): ReferenceBenchResult => ({ cohortsCompared: 60, history: 10_000, engineNsPerEvent: 1_000, referenceNsPerEvent: ratio * 1_000, ratio });

describe('bench report', () => {
  const dirs: string[] = [];
  afterEach(async () => {
    for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
  });

  it('summarises runs as median with min-max, and ratios run by run', () => {
    expect(spreadOf([3, 1, 2])).toMatchObject({ median: 2, min: 1, max: 3 });
    expect(ratiosOf([10, 30, 20], [100, 100, 40])).toMatchObject({ median: 0.3, min: 0.1, max: 0.5 });
  });

  it('marks a target met or missed from the measured figure', () => {
    const met = renderResults({ ...base, reference: { ok: true, at: 'now', value: reference(1500) } });
    expect(met).toMatch(/reference evaluator at 10,000 events of history \| ≥ 1000× \| 1,500× \| met \|/);
    const missed = renderResults({ ...base, reference: { ok: true, at: 'now', value: reference(900) } });
    expect(missed).toMatch(/\| 900× \| \*\*missed\*\* \|/);
  });

  it("sets the ingestion p99 beside the bare baseline's own and the rate its spread asks for p99 ≤ 10 ms", () => {
    // Baseline runs: 10,000 req/s with a p99 of 12 ms (mean 50 / 10,000 s = 5 ms: 2.4x), 20,000 with 8 ms (2.5 ms:
    // 3.2x); at the median spread 2.8 a p99 within 10 ms needs 50 / 10 ms x 2.8 = 14,000 req/s.
    const ingest: Comparison = {
      runs: [loadResult(3_000), loadResult(5_000)],
      baselineRuns: [loadResult(10_000), loadResult(20_000)],
      rps: spreadOf([3_000, 5_000]),
      baselineRps: spreadOf([10_000, 20_000]),
      ratio: ratiosOf([3_000, 5_000], [10_000, 20_000]),
      p50: spreadOf([9, 11]),
      p99: spreadOf([30, 40]),
      baselineP99: spreadOf([12, 8]),
      non2xx: 0,
    };
    const seedReport = { cohorts: 100, users: 100_000, events: 550_000, eventsPerSecond: 2000, members: 1, rows: 1, importLoads: '200', seconds: 1 };
    const text = renderResults({ ...base, http: { ok: true, at: 'now', value: { seedReport, ingest, dataDirBytes: 1 } } });
    expect(text).toContain("| Ingestion p99 latency | ≤ 10 ms | 35.00 ms (30.00 ms–40.00 ms); the bare baseline's own 10.00 ms (8.00 ms–12.00 ms), 2.8× its mean: at that spread p99 ≤ 10 ms asks 14,000 req/s or more | **missed** |");
  });

  it("reports the engine's heap bytes per event and a new plan's first events when the result has them", () => {
    const settings = { seed: 42, cohorts: 100, users: 10_000, eventsPerUser: 30, runs: 3, largeUsers: 0, largeEventsPerUser: 5, longHistory: 1000, shortHistory: 10, historyUsers: 10, historyRepetitions: 1, referenceHistory: 10, referenceUsers: 1, referenceEvents: 3 };
    const older: EngineBenchResult = {
      settings,
      clauseKinds: { expression: 3 },
      slots: 3,
      eventsPerSecond: 200_000,
      eventsPerSecondRuns: [190_000, 200_000, 210_000],
      eventsPerCpuSecond: 180_000,
      decodedEventsPerCpuSecond: { engine: 150_000, withDecode: 120_000, decodeNsPerEvent: 1500 },
      loadAverage: [1, 1],
      nsPerEventShortHistory: 5000,
      nsPerEventLongHistory: 5000,
      historyCostRatio: 1,
      stateBytesPerUser: 1300,
      stateBytesPerUserPerCohort: 13,
      longHistoryStateBytes: 1400,
      engineNsPerEventAtReferenceHistory: 7000,
      referenceNsPerEvent: 7_000_000,
      referenceRatio: 1000,
      referenceAgrees: true,
    };
    const newer: EngineBenchResult = { ...older, heapBytesPerEvent: 1586.4, newPlan: { coldEventsPerSecond: 70_000, warmEventsPerSecond: 110_000, coldRuns: [68_000, 72_000], warmRuns: [105_000, 115_000] } };
    const text = renderResults({ ...base, engine: { ok: true, at: 'now', value: newer } });
    expect(text).toContain('| V8 heap bytes allocated per event, garbage included (bench/allocated.ts) | 1,586 |');
    expect(text).toContain("| events/s over a new plan's first 310,000 events (users from fresh states; its generated code not yet compiled), against the same events through the warm plan | 70,000 (runs: 68,000, 72,000) against 110,000 (runs: 105,000, 115,000) |");
    const old = renderResults({ ...base, engine: { ok: true, at: 'now', value: older } });
    expect(old).toContain('| events per CPU-second | 180,000 |');
    expect(old).not.toContain('V8 heap bytes');
    expect(old).not.toContain('a new plan');
  });

  it('shows a benchmark that could not run as not available, with no figure', () => {
    const text = renderResults({ ...base, backfill: { ok: false, at: 'now', reason: 'not yet available (bench/backfill.ts is not built)' } });
    expect(text).toMatch(/\| Backfill events\/s \| ≥ 1,000,000 \| not available: not yet available/);
    expect(text).not.toMatch(/Backfill events\/s \| ≥ 1,000,000 \| \d/);
  });

  it("reports the backfill's rate against the target and what each part of its sweep costs alone", () => {
    const parts = { listSeconds: 0.35, perUserReadSeconds: 1.94, perUserReadMainThreadCpuSeconds: 1.63, bulkReadSeconds: 2.35, bulkReadMainThreadCpuSeconds: 1.64, decodeSeconds: 1.19, replaySeconds: 0.15 };
    const value = { storedEvents: 1_000_000, sweepSeconds: 4.06, replayedEventsPerSecond: 246_050, sweepMainThreadCpuSeconds: 2.14, sweepAllThreadsCpuSeconds: 6.18, parts };
    const text = renderResults({ ...base, backfill: { ok: true, at: 'now', value } });
    expect(text).toMatch(/\| Backfill of one new cohort, events replayed\/s \| ≥ 1,000,000 \| 246,050 \| \*\*missed\*\* \|/);
    expect(text).toContain('sweepMainThreadCpuSeconds 2.14');
    expect(text).toContain('it used 6.18 CPU-seconds over all the process\'s threads (main thread 2.14;');
    expect(text).toContain('at that cost per event, 2 cores cannot sweep more than about 323,625 events/s');
    expect(text).toContain('the same stored values read in one range per 256 users, 2.35 s (main thread 1.64 s; how the sweep lists its users and reads their histories');
    expect(text).toContain('decoding them (only the properties the new cohort reads, as the owners do) 1.19 s; replaying them through the new cohort 0.15 s');
    // A result with the owners' threads apart says what the rest is.
    const owners = renderResults({ ...base, backfill: { ok: true, at: 'now', value: { ...value, sweepOwnerThreadsCpuSeconds: 1.5 } } });
    expect(owners).toContain("it used 6.18 CPU-seconds over all the process's threads (main thread 2.14; the partition owners 1.50, the rest, 2.54, LevelDB's reads");
    // A result of an older run does not say how its history was stored: no sentence about it.
    expect(text).not.toContain('How the history is stored');
  });

  it('reports the later sweeps by the one of median rate, with every rate, and the Node options of the run', () => {
    const later = { sweepSeconds: 1.02, replayedEventsPerSecond: 980_392, audienceSize: 4992, sweepMainThreadCpuSeconds: 0.6, sweepOwnerThreadsCpuSeconds: 0.5, sweepAllThreadsCpuSeconds: 1.5 };
    const value = { storedEvents: 1_000_000, sweepSeconds: 1.4, replayedEventsPerSecond: 714_286, sweepMainThreadCpuSeconds: 0.9, sweepOwnerThreadsCpuSeconds: 0.7, sweepAllThreadsCpuSeconds: 2.3, laterSweep: later, laterSweepRates: [1_050_000, 980_392, 900_000], nodeOptions: ['--max-semi-space-size=32'] };
    const text = renderResults({ ...base, backfill: { ok: true, at: 'now', value } });
    expect(text).toContain('Node options: --max-semi-space-size=32.');
    expect(text).toContain("Later sweeps (3 more new cohorts, created one after another once the first is swept, over the same history, their queries in results.json's `settings.laterQueries`: 1,050,000, 980,392, 900,000 events/s), the one of median rate: 1.02 s, 980,392 events/s, audience 4,992; 1.50 CPU-seconds");
    expect(text).toMatch(/\| Backfill: a later sweep \(the median of the new cohorts created once the first is swept; the sweep's code compiled\), events replayed\/s \| ≥ 1,000,000 \| 980,392 \| \*\*missed\*\* \|/);
    // A result of an older run: one later sweep, no Node options.
    const { laterSweepRates: _rates, nodeOptions: _options, ...older } = value;
    const old = renderResults({ ...base, backfill: { ok: true, at: 'now', value: older } });
    expect(old).toContain('A later sweep (a second new cohort of the same shape, created once the first is swept, over the same history): 1.02 s');
    expect(old).not.toContain('Node options');
  });

  it('says how the history was stored: appended one event per call and folded, or in calls of several', () => {
    const parts = { listSeconds: 0.34, perUserReadSeconds: 0.55, perUserReadMainThreadCpuSeconds: 0.39, bulkReadSeconds: 0.36, bulkReadMainThreadCpuSeconds: 0.2, decodeSeconds: 0.39, replaySeconds: 0.11 };
    const folded = { storedEvents: 1_000_000, storedValues: 70_000, eventsFolded: 960_000, foldTailSeconds: 0.02, sweepSeconds: 2.93, replayedEventsPerSecond: 341_404, parts, settings: { users: 5000, eventsPerAppend: 1, foldEvery: 32 } };
    const text = renderResults({ ...base, backfill: { ok: true, at: 'now', value: folded } });
    expect(text).toContain("How the history is stored: appended one event per call, as the track route appends, and folded into blocks behind the writes each time a user's event count passed a multiple of 32 (960,000 records folded; the last folds were written 0.02 s after the last append), the 1,000,000 events are 70,000 stored values (14.0 per user)");
    const batched = { ...folded, storedValues: 5000, eventsFolded: 0, settings: { users: 5000, eventsPerAppend: 200, foldEvery: 0 } };
    const other = renderResults({ ...base, backfill: { ok: true, at: 'now', value: batched } });
    expect(other).toContain("appended 200 events per call (each call's events stored as blocks at once), and never folded, the 1,000,000 events are 5,000 stored values (1.0 per user)");
  });

  it('reports the memory per hot user with all states decoded and with --decoded-states, each against the target', () => {
    // A result of an older run has no heapCommittedBytes (the all-decoded one here): its columns stay empty.
    const run = (bytesPerUser: number, decodedStates?: number): MemoryBenchResult => ({
      users: 100_000,
      baselineRssBytes: 2 ** 27,
      points: [
        {
          users: 100_000,
          rssBytes: 2 ** 27 + bytesPerUser * 100_000,
          heapUsedBytes: 2 ** 26,
          ...(decodedStates === undefined ? {} : { heapCommittedBytes: 2 ** 27, storeMemoryBytes: 2 ** 26, rssFileBytes: 2 ** 24 }),
          arrayBufferBytes: 2 ** 25,
          bytesPerUser,
        },
      ],
      bytesPerUser,
      eventsPerSecond: 3_000,
      ...(decodedStates === undefined ? {} : { decodedStates }),
    });
    const few = { ...run(9_000), inFlight: 50 };
    const text = renderResults({
      ...base,
      memory: { ok: true, at: 'now', value: { ...run(13_000), inFlight: 4_096 } },
      memoryEncoded: { ok: true, at: 'now', value: run(3_900, 8_192) },
      memoryFewInFlight: { ok: true, at: 'now', value: few },
    });
    expect(text).toContain('new users (4,096 appends in flight, 3,000 appends/s;');
    expect(text).toContain("The same with 50 appends in flight, as many as the HTTP benchmarks' connections");
    expect(text).toMatch(/\| 100,000 \| \d+ MiB \| 64 MiB \|  \| 32 MiB \|  \|  \|  \| 9,000 \|/);
    expect(text).toMatch(/Resident memory per hot user \(RSS at 100,000 users\), 100 cohorts \| ≤ 4,000 B \| 13,000 \| \*\*missed\*\* \|/);
    expect(text).toMatch(/Resident memory per hot user at 100,000 users with --decoded-states 8,192 \(.*3,000 appends\/s\) \| ≤ 4,000 B \| 3,900 \| met \|/);
    expect(text).toContain('The same with `--decoded-states 8,192`');
    expect(text).toContain('8,192 states decoded, the others held packed and unpacked at their next event');
    // A run whose tier holds all its users says so.
    const all = renderResults({ ...base, memory: { ok: true, at: 'now', value: run(13_000) }, memoryEncoded: { ok: true, at: 'now', value: run(15_000, 100_000_000) } });
    expect(all).toMatch(/Resident memory per hot user at 100,000 users with --decoded-states 100,000,000 \(every state decoded; 3,000 appends\/s\) \| ≤ 4,000 B \| 15,000 \| \*\*missed\*\* \|/);
    expect(all).toContain('(measured now; warm-up RSS 128 MiB, 3,000 appends/s): every state decoded.');
    // RSS 2^27 + 390,000,000 B = 500 MiB: V8 heap resident 128 MiB, buffers 32 MiB, LevelDB 64 MiB and file-backed
    // pages 16 MiB leave 260 MiB.
    expect(text).toContain('| 100,000 | 500 MiB | 64 MiB | 128 MiB | 32 MiB | 64 MiB | 16 MiB | 260 MiB | 3,900 |');
    expect(text).toMatch(/\| 100,000 \| \d+ MiB \| 64 MiB \|  \| 32 MiB \|  \|  \|  \| 13,000 \|  \|  \|/);
    expect(text).toContain('no HTTP, identity or imports, which hold bounded caches of their own). RSS after a GC, minus the same');
  });

  it("reports the RSS after serve's idle passes and before them, each per user from the warm-up's same reading", () => {
    const trimmed: MemoryBenchResult = {
      users: 100_000,
      baselineRssBytes: 100 * 2 ** 20,
      baselineUntrimmedRssBytes: 110 * 2 ** 20,
      mallocTrimSeconds: 30,
      points: [{ users: 100_000, rssBytes: 900 * 2 ** 20, rssUntrimmedBytes: 1_200 * 2 ** 20, heapUsedBytes: 2 ** 26, arrayBufferBytes: 2 ** 25, bytesPerUser: 8_389 }],
      bytesPerUser: 8_389,
      eventsPerSecond: 3_000,
      inFlight: 4_096,
    };
    // A result of the runs before the heap compaction (none recorded): the trim alone.
    const text = renderResults({ ...base, memory: { ok: true, at: 'now', value: trimmed } });
    expect(text).toContain('RSS after a GC, a pass of the allocator trim serve runs every 30 s while the process is not busy (`--malloc-trim-every`');
    expect(text).not.toContain('--compact-heap-every');
    // Both passes, in the order serve's looks run them.
    const both = renderResults({ ...base, memory: { ok: true, at: 'now', value: { ...trimmed, heapCompactionSeconds: 30 } } });
    expect(both).toContain('RSS after a GC, the compaction of the V8 heap serve runs at a look (every 30 s) that finds the process idle');
    expect(both).toContain('gives those pages back), then a pass of the allocator trim serve runs every 30 s');
    expect(both).toContain('the last two columns are the RSS before them');
    // The compaction's pause, when one ran at a point; nothing said of it when none did.
    expect(both).not.toContain("The heap compaction's pause");
    const paused = renderResults({ ...base, memory: { ok: true, at: 'now', value: { ...trimmed, heapCompactionSeconds: 30, points: [{ ...(trimmed.points[0] as MemoryPoint), compactionMs: 588.6 }] } } });
    expect(paused).toContain("The heap compaction's pause at each point (the thread that holds the states stopped for it; a settling collection included): 100,000 users 589 ms.");
    // (1,200 - 110) MiB / 100,000 users = 11,429 B before the passes.
    expect(text).toMatch(/\| 100,000 \| 900 MiB \| 64 MiB \|  \| 32 MiB \|  \|  \|  \| 8,389 \| 1200 MiB \| 11,429 \|/);
    expect(text).toMatch(/Resident memory per hot user \(RSS at 100,000 users\), 100 cohorts \| ≤ 4,000 B \| 8,389 \| \*\*missed\*\* \|/);
  });

  it('rewrites only the section between the markers', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'bench-report-'));
    dirs.push(dir);
    const path = join(dir, 'README.md');
    await writeFile(path, `# Title\nintro\n\n${BEGIN}\nold figures\n${END}\ntrailer\n`);
    await writeReadme(path, 'new figures');
    expect(await readFile(path, 'utf8')).toBe(`# Title\nintro\n\n${BEGIN}\nnew figures\n${END}\ntrailer\n`);
    await writeReadme(join(dir, 'missing.md'), 'first');
    expect(await readFile(join(dir, 'missing.md'), 'utf8')).toContain(`${BEGIN}\nfirst\n${END}`);
  });
});
