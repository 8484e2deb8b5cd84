// What the HTTP benchmarks say about where the cores went: the summary of a CPU profile over its load window, and the
// usage table of the generated README (a row per benchmark that measured it; none for runs without usage).

import { describe, expect, it } from 'vitest';
import { summarise } from '../../bench/profile-summary.js';
import { renderResults, type BenchResults } from '../../bench/report.js';
import { spreadOf } from '../../bench/stats.js';
import type { Comparison } from '../../bench/http.js';
import { loadResult } from './load-fixtures.js';

const frame = (functionName: string) => ({ functionName, url: 'file:///x/server/route.js', lineNumber: 9 });

describe('profile summary', () => {
  it('summarises the last busy run of 3 seconds or more: inclusive and self shares of its time', () => {
    // root -> handler -> parse; idle beside them. Seconds 0-1 idle, 2-4 busy (handler 1/4, parse 3/4), 5 idle, 6 busy
    // (a blip, too short to be the load), 7 idle.
    const nodes = [
      { id: 1, callFrame: frame('(root)'), children: [2, 4] },
      { id: 2, callFrame: frame('handler'), children: [3] },
      { id: 3, callFrame: frame('parse') },
      { id: 4, callFrame: frame('(idle)') },
    ];
    const samples: number[] = [];
    const timeDeltas: number[] = [];
    for (let s = 0; s < 8; s++) {
      for (let k = 0; k < 4; k++) {
        samples.push((s >= 2 && s <= 4) || s === 6 ? (k === 0 ? 2 : 3) : 4);
        timeDeltas.push(250_000);
      }
    }
    timeDeltas[0] = 0; // sample i is taken at i x 250 ms (a delta is the time since the sample before)
    const summary = summarise({ nodes, startTime: 0, samples, timeDeltas });
    expect(summary.window).toMatchObject({ from: 2, to: 5 });
    expect(summary.window.busy).toBeGreaterThan(0.9);
    const share = (list: readonly (readonly [string, number])[], name: string) => list.find(([n]) => n.startsWith(name))?.[1] ?? 0;
    expect(share(summary.inclusive, 'handler')).toBeCloseTo(1, 1);
    expect(share(summary.self, 'parse')).toBeCloseTo(0.75, 1);
    expect(share(summary.self, 'handler')).toBeCloseTo(0.25, 1);
    expect(summary.perSecond[0]).toBe(0);
    // A window given by the caller is taken as it is.
    expect(summarise({ nodes, startTime: 0, samples, timeDeltas }, 0.5, { from: 0, to: 2 }).inclusive.find(([n]) => n.startsWith('handler'))).toBeUndefined();
  });
});

describe('usage table', () => {
  const load = loadResult(1000);
  const comparison = (withUsage: boolean): Comparison => ({
    runs: [load],
    baselineRuns: [{ ...load, rps: 10_000 }],
    rps: spreadOf([1000]),
    baselineRps: spreadOf([10_000]),
    ratio: spreadOf([0.1]),
    p99: spreadOf([12]),
    p50: spreadOf([5]),
    baselineP99: spreadOf([3]),
    non2xx: 0,
    ...(withUsage && {
      usage: {
        serverCores: spreadOf([1.36]),
        mainCores: spreadOf([0.64]),
        ownerCores: spreadOf([0.21]),
        otherCores: spreadOf([0.51]),
        loadGeneratorCores: spreadOf([0.18]),
        eventsPerGroup: spreadOf([23.5]),
        groupMs: spreadOf([16.9]),
        ownersMs: spreadOf([4.25]),
        readsMs: spreadOf([0.5]),
        buildMs: spreadOf([1.1]),
        writeMs: spreadOf([9.2]),
        groupsPerBatch: spreadOf([1.25]),
        residentShare: spreadOf([0.875]),
        keptStateShare: spreadOf([Number.NaN]),
        snapshotsPerThousand: spreadOf([12.4]),
        deadlinesPerThousand: spreadOf([3.2]),
      },
    }),
  });
  const results = (withUsage: boolean): BenchResults => ({
    command: 'npm run bench',
    machine: { cpu: 'Test CPU', cores: 2, memoryBytes: 2 ** 33, os: 'Linux', node: 'v20', loadAverage: 0.5 },
    load: { connections: 50, pipelining: 1, durationSeconds: 15, warmupSeconds: 5, timeoutSeconds: 10 },
    runs: 1,
    users: 100_000,
    http: {
      ok: true,
      at: 'now',
      value: {
        seedReport: { cohorts: 100, users: 100_000, events: 550_000, eventsPerSecond: 2000, members: 1, rows: 1, importLoads: '200', seconds: 1 },
        ingest: comparison(withUsage),
        dataDirBytes: 1,
      },
    },
  });

  it('shows the server, main thread, partition owners, other threads and load generator cores, the groups (with the owners\' share), groups per store batch, users resident, snapshots and deadline re-evaluations', () => {
    const text = renderResults(results(true));
    expect(text).toContain('Where the cores went');
    expect(text).toContain('| (1) POST /v2.0/events | 1.36 (1.36–1.36) | 0.64 (0.64–0.64) | 0.21 (0.21–0.21) | 0.51 (0.51–0.51) | 0.18 (0.18–0.18) | 23.5 | 16.90 ms (4.25 ms with the owners) | 1.25 | 88 % | 12 | 3 |');
  });

  it('says, for stateless calls, the share that started from a state the server kept since sealing it', () => {
    const base = results(true);
    if (!base.http?.ok || base.http.value.ingest === undefined) throw new Error('the fixture has an ingestion result');
    const measured = base.http.value.ingest;
    const stateless = { ...measured, usage: { ...(measured.usage as NonNullable<Comparison['usage']>), keptStateShare: spreadOf([0.994]) }, stateBytes: 681 };
    const text = renderResults({ ...base, http: { ...base.http, value: { ...base.http.value, stateless } } });
    expect(text).toContain('| (3) stateless | 1.36 (1.36–1.36) | 0.64 (0.64–0.64) | 0.21 (0.21–0.21) | 0.51 (0.51–0.51) | 0.18 (0.18–0.18) | 23.5 | 16.90 ms (4.25 ms with the owners) | 1.25 | 88 %; stateless states kept 99 % | 12 | 3 |');
  });

  it('leaves the columns an older run did not measure empty', () => {
    const older = results(true);
    if (!older.http?.ok || older.http.value.ingest === undefined) throw new Error('the fixture has an ingestion result');
    const measured = older.http.value.ingest;
    const { ownerCores: _ownerCores, otherCores: _otherCores, ownersMs: _owners, groupsPerBatch: _batches, residentShare: _resident, snapshotsPerThousand: _snapshots, deadlinesPerThousand: _deadlines, ...usage } = measured.usage as NonNullable<Comparison['usage']>;
    const ingest: Comparison = { ...measured, usage: usage as NonNullable<Comparison['usage']> };
    const text = renderResults({ ...older, http: { ...older.http, value: { ...older.http.value, ingest } } });
    expect(text).toContain('| 0.64 (0.64–0.64) |  |  | 0.18 (0.18–0.18) | 23.5 | 16.90 ms |  |  |  |  |');
  });

  it('reports the floor (bench/floor-server.ts) for track and stateless calls in the targets, its own table and the usage table, with no group figures', () => {
    const base = results(true);
    if (!base.http?.ok || base.http.value.ingest === undefined) throw new Error('the fixture has an ingestion result');
    const measured = base.http.value.ingest;
    const none = spreadOf([Number.NaN]);
    const usage = measured.usage as NonNullable<Comparison['usage']>;
    const floor: Comparison = {
      ...measured,
      rps: spreadOf([6_000]),
      ratio: spreadOf([0.6]),
      p99: spreadOf([9.5]),
      usage: { ...usage, ownerCores: spreadOf([0]), eventsPerGroup: none, groupMs: none, ownersMs: none, groupsPerBatch: none, residentShare: none, snapshotsPerThousand: none, deadlinesPerThousand: none },
    };
    const floorStateless: Comparison = { ...floor, rps: spreadOf([1_700]), ratio: spreadOf([0.17]), p99: spreadOf([31]) };
    const text = renderResults({ ...base, http: { ...base.http, value: { ...base.http.value, floor, floorStateless } } });
    expect(text).toMatch(/\| The floor for ingestion \(bench\/floor-server.ts --engine: [^|]*\| \(reported\) \| 0.600× \(0.600×–0.600×\), p99 9.50 ms \|  \|/);
    expect(text).toMatch(/\| The floor for stateless segmentation \(bench\/floor-server.ts: [^|]*\| \(reported\) \| 0.170× \(0.170×–0.170×\), p99 31.00 ms \|  \|/);
    expect(text).toContain('#### The floor: the same calls');
    expect(text).toContain('| floor --engine, track calls | 6,000 (6,000–6,000) | 10,000 (10,000–10,000) | 0.600× (0.600×–0.600×) |');
    expect(text).toContain('| floor, stateless calls | 1,700 (1,700–1,700) | 10,000 (10,000–10,000) | 0.170× (0.170×–0.170×) |');
    expect(text).toContain('The stateless row: the same stateless calls as (3)');
    expect(text).toContain('| the floor (bench/floor-server.ts --engine) | 1.36 (1.36–1.36) | 0.64 (0.64–0.64) | 0.00 (0.00–0.00) | 0.51 (0.51–0.51) | 0.18 (0.18–0.18) |  |  |  |  |  |  |');
    expect(text).toContain('| the floor, stateless | 1.36 (1.36–1.36) |');
    // A floor result from before the stateless calls had one: no stateless row.
    const older = renderResults({ ...base, http: { ...base.http, value: { ...base.http.value, floor } } });
    expect(older).toContain('| floor --engine, track calls |');
    expect(older).not.toContain('stateless calls |');
    expect(older).not.toContain('The floor for stateless segmentation');
    // Without a floor result, none of it.
    expect(renderResults(base)).not.toContain('floor');
  });

  it('has no usage table when no run measured usage (figures kept from an older run)', () => {
    expect(renderResults(results(false))).not.toContain('Where the cores went');
  });
});
