// bench/engine-instructions.ts: the engine's instructions per event from two callgrind runs of the engine bench's
// workload (warm rounds only, and warm plus measured). valgrind itself is not run here; its output line is.

import { describe, expect, it } from 'vitest';
import { collectedInstructions, perEvent, runChild } from '../../bench/engine-instructions.js';

describe('engine instructions bench', () => {
  it("reads the count from callgrind's closing lines", () => {
    const stderr = ['==4689== Events    : Ir', '==4689== Collected : 29890140724', '==4689== ', '==4689== I   refs:      29,890,140,724'].join('\n');
    expect(collectedInstructions(stderr)).toBe(29_890_140_724);
    expect(() => collectedInstructions('valgrind: no such tool')).toThrow(/no "Collected" line/);
  });

  it('divides the difference of the two runs by the measured events', () => {
    expect(perEvent(9_000_000_000, 14_120_000_000, { users: 2_000, warm: 150, rounds: 40 })).toBe(64_000);
  });

  it('segments the same streams the same way whatever the rounds scheduled beyond those run', () => {
    const members = runChild(100, 12, 8);
    expect(members).toBeGreaterThan(0);
    expect(runChild(100, 30, 8)).toBe(members);
    expect(runChild(100, 30, 12)).not.toBe(members);
  });
});
