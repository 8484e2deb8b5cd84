// bench/fold.ts: folds every user's single records once and reports the CPU per folded event.

import { describe, expect, it } from 'vitest';
import { runFoldBench } from '../../bench/fold.js';

describe('fold bench', () => {
  it('folds each user\'s records into one block per run and reports CPU per folded event', async () => {
    const runs = await runFoldBench({ users: 20, events: 5, runs: 2, settleSeconds: 0 });
    expect(runs).toHaveLength(2);
    for (const run of runs) {
      expect(run.folded).toBe(100);
      expect(run.cpuUsPerEvent).toBeGreaterThan(0);
      expect(run.mainCpuUsPerEvent).toBeGreaterThanOrEqual(0);
    }
  });
});
