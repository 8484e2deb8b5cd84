// bench/pipeline.ts: the ingest pipeline measured alone keeps K appends in flight, so groups hold at most K events,
// and splits a group's CPU into a part per group and a part per event when runs of two group sizes exist.

import { describe, expect, it } from 'vitest';
import { runPipelineBench } from '../../bench/pipeline.js';

describe('pipeline bench', () => {
  it('runs each in-flight count per round, groups of at most K events, and a cost line over two group sizes', async () => {
    const result = await runPipelineBench({ users: 40, inFlight: [1, 8], appends: 80, rounds: 2, threads: 0 });
    expect(result.runs.map((run) => run.inFlight)).toEqual([1, 8, 8, 1]);
    for (const run of result.runs) {
      expect(run.eventsPerGroup).toBeGreaterThan(0);
      expect(run.eventsPerGroup).toBeLessThanOrEqual(run.inFlight);
      expect(run.cpuUs).toBeGreaterThan(0);
      expect(run.busiestOtherCpuUs).toBeGreaterThanOrEqual(0);
      expect(run.groupCpuUs).toBeCloseTo(run.cpuUs * run.eventsPerGroup, 6);
    }
    // One event per group with one append in flight: every group of those runs is a single append.
    expect(result.runs.filter((run) => run.inFlight === 1).map((run) => run.eventsPerGroup)).toEqual([1, 1]);
    expect(result.process).toBeDefined();
    expect(result.main).toBeDefined();
  }, 60_000);

  it('draws no cost line through runs of one group size', async () => {
    const result = await runPipelineBench({ users: 10, inFlight: [1], appends: 10, rounds: 1, threads: 0 });
    expect(result.runs).toHaveLength(1);
    expect(result.process).toBeUndefined();
    expect(result.main).toBeUndefined();
  }, 60_000);
});
