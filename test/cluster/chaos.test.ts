// The CI version of `npm run cluster:chaos` (issue 15): one nats-server with JetStream (R1), two audience nodes as
// processes (the built CLI), bounded load through both, one node killed with SIGKILL while it owns partitions and
// started again; every acknowledged event is read back exactly once and every cohort size equals a recomputation.

import { describe, expect, it } from 'vitest';
import type { ChaosResult, runChaos as RunChaos } from '../../bench/cluster/chaos.js';

describe('cluster chaos, small', () => {
  it('loses no acknowledged event and applies none twice when a node owning partitions is killed', async () => {
    // The harness drives the built CLI (dist/), as `npm run cluster:chaos` does.
    const built = new URL('../../dist/bench/cluster/chaos.js', import.meta.url).href;
    const { runChaos } = (await import(built)) as { runChaos: typeof RunChaos };
    const lines: string[] = [];
    const result: ChaosResult = await runChaos({
      natsServers: 1,
      nodes: 2,
      events: 600,
      users: 40,
      concurrency: 4,
      leaseMs: 2000,
      steps: ['kill-node'],
      deadlineMs: 120_000,
      log: (line) => lines.push(line),
    });
    expect(result.line, lines.join('\n')).toBe(`acked ${result.acked}, found ${result.acked}, lost 0, applied twice 0, sizes equal`);
    expect(result.stream, lines.join('\n')).toMatch(/^streamed [1-9]\d* entries once on every node$/);
    expect(result.streamedOnce).toBe(true);
    expect(result.acked).toBe(600);
    expect(lines.some((line) => line.includes('kill -9 node-2'))).toBe(true);
  }, 240_000);
});
