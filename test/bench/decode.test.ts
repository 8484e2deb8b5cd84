// bench/decode.ts: the readers of stored events measured each way in turn, one figure per way and round.

import { describe, expect, it } from 'vitest';
import { runDecodeBench } from '../../bench/decode.js';

describe('decode bench', () => {
  it('measures every way once per round, in seconds per million events', () => {
    const figures = runDecodeBench(2);
    for (const runs of [figures.allProperties, figures.planKeys, figures.blocksByMsgpackr, figures.blocksByReader]) {
      expect(runs).toHaveLength(2);
      for (const seconds of runs) expect(seconds).toBeGreaterThan(0);
    }
  }, 60_000);
});
