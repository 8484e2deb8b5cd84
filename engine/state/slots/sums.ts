// Sums over a sliding set of engaged seconds, kept exact: the reference adds values oldest first from 0, so removing
// the oldest value by subtraction is exact only while every value is a safe integer; otherwise re-add in order.
// Layout: [sum, unsafe] in the numeric store at `at` (unsafe = values that are not safe integers), values beside.

import { isCount, isNumberList } from './shape.js';

export function isSumWindow(nums: Float64Array, at: number, values: unknown): values is number[] {
  return !Number.isNaN(nums[at] as number) && isCount(nums[at + 1]) && isNumberList(values);
}

export function addValue(nums: Float64Array, at: number, values: number[], v: number): void {
  values.push(v);
  nums[at] = (nums[at] as number) + v;
  if (!Number.isSafeInteger(v)) nums[at + 1] = (nums[at + 1] as number) + 1;
}

/** Removes the `k` oldest values. */
export function removeOldest(nums: Float64Array, at: number, values: number[], k: number): void {
  if (k <= 0) return;
  let exact = Number.isSafeInteger(nums[at] as number) && nums[at + 1] === 0;
  let sum = nums[at] as number;
  for (let i = 0; i < k; i++) {
    const v = values[i] as number;
    if (!Number.isSafeInteger(v)) {
      nums[at + 1] = (nums[at + 1] as number) - 1;
      exact = false;
    }
    sum -= v;
  }
  if (k === 1) values.shift();
  else values.splice(0, k);
  if (exact) {
    nums[at] = sum;
    return;
  }
  sum = 0;
  for (let i = 0; i < values.length; i++) sum += values[i] as number;
  nums[at] = sum;
}
