import { describe, expect, it } from 'vitest';
import { heapAllocated } from '../../bench/allocated.js';

describe('heapAllocated (bench/allocated.ts)', () => {
  it('counts garbage collected while the code runs, not only what survives it', () => {
    let kept = 0;
    const { value, bytes, collections } = heapAllocated(() => {
      // 4,000 arrays of 1,000 small integers: at least 8,000 bytes each, 32 MB in all, none kept.
      for (let i = 0; i < 4_000; i++) kept += (new Array<number>(1_000).fill(i)[999] as number) > -1 ? 1 : 0;
      return 'done';
    });
    expect(value).toBe('done');
    expect(kept).toBe(4_000);
    // Far more than the young generation holds, so collections ran and their garbage was counted.
    expect(collections).toBeGreaterThan(0);
    expect(bytes).toBeGreaterThanOrEqual(32_000_000);
    expect(bytes).toBeLessThan(128_000_000);
  });

  it('counts little for code that allocates little', () => {
    let sum = 0;
    const { bytes } = heapAllocated(() => {
      for (let i = 0; i < 100_000; i++) sum += i & 1;
    });
    expect(sum).toBe(50_000);
    expect(bytes).toBeLessThan(1_000_000);
  });
});
