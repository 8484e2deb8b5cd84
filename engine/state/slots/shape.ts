// Checks of stored slot data (it may come from another plan version or a damaged blob): small, exact predicates.

export function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}

export function isFlag(value: unknown): value is 0 | 1 {
  return value === 0 || value === 1;
}

export function isNumberList(value: unknown): value is number[] {
  if (!Array.isArray(value)) return false;
  for (let i = 0; i < value.length; i++) {
    const v: unknown = value[i];
    if (typeof v !== 'number' || Number.isNaN(v)) return false;
  }
  return true;
}

/** Whether `count` numbers of `nums` from `at` are counts (non-negative integers). */
export function areCounts(nums: Float64Array, at: number, count: number): boolean {
  for (let i = 0; i < count; i++) if (!isCount(nums[at + i])) return false;
  return true;
}

/** Whether `count` numbers of `nums` from `at` are 0 or 1. */
export function areFlags(nums: Float64Array | Uint32Array, at: number, count: number): boolean {
  for (let i = 0; i < count; i++) if (!isFlag(nums[at + i])) return false;
  return true;
}
