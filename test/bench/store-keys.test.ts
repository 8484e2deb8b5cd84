// bench/store-keys.ts: the layouts write what their names say; `stateless-runs` as the stateless route publishes a
// call's 10 events (D24): one block per call and a time-index key per event, minted ids (no `ei!`).

import { describe, expect, it } from 'vitest';
import { runStoreKeysBench } from '../../bench/store-keys.js';

describe('store keys bench', () => {
  it('stores a stateless call as one block with a time key per event, beside the same log entries', async () => {
    // Batches of 800 events touch all 16 partitions in both layouts, so their `ps!` writes are the same.
    const compact = await runStoreKeysBench('log-compact', 1_600, 800);
    const runs = await runStoreKeysBench('stateless-runs', 1_600, 800);
    // log-compact writes e!, et! and ei! per event; stateless-runs one e! per 10 events, et!, and no ei!.
    expect(Number(compact.putsPerEvent) - Number(runs.putsPerEvent)).toBeCloseTo(1.9, 2);
    expect(runs.eventsPerSecond).toBeGreaterThan(0);
  });
});
