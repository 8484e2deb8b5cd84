// `during` forms as slots see them (E4): fixed windows on an event's effective time, and `the_last` ring upkeep.

import type { During } from '../../query/ast.js';
import { isCount, isNumberList } from './shape.js';

export type Form = During['kind'] | 'all';

export function formOf(during: During | undefined): Form {
  return during === undefined ? 'all' : during.kind;
}

/** Whether an effective time lies in an `in_interval` (inclusive) / `before` / `after` (strict) window. */
export function inFixedWindow(during: During | undefined, t: number): boolean {
  if (during === undefined) return true;
  switch (during.kind) {
    case 'in_interval':
      return t >= during.start && t <= during.end;
    case 'before':
      return t < during.time;
    case 'after':
      return t > during.time;
    default:
      return true;
  }
}

/** The length of a `the_last` window in ms (0 for other forms). */
export function windowMs(during: During | undefined): number {
  return during !== undefined && during.kind === 'the_last' ? during.ms : 0;
}

/** The count N of `first N` / `last N` (0 for other forms). */
export function windowCount(during: During | undefined): number {
  return during !== undefined && (during.kind === 'first' || during.kind === 'last') ? during.count : 0;
}

/**
 * A capped ring of recent times: the cap in the numeric store, the times (oldest first) in an array. It keeps the
 * newest `cap` times, which decide any count comparison whose cap this is (countCap). Effective times arrive in order.
 */
export function pushTime(times: number[], cap: number, t: number): void {
  if (cap <= 0) return;
  times.push(t);
  if (times.length > cap) times.shift();
}

/** Drops times at or before `cutoff` (the window is (now - length, now]); returns whether any left. */
export function evictTimes(times: number[], cutoff: number): boolean {
  if (times.length === 0 || (times[0] as number) > cutoff) return false;
  let k = 1;
  while (k < times.length && (times[k] as number) <= cutoff) k++;
  if (k === 1) times.shift();
  else times.splice(0, k);
  return true;
}

/** Caps up to this many times keep the ring inside the user's numeric store (no separate object to reach). */
export const INLINE_RING_MAX = 8;

/**
 * Where a `the_last` ring of `cap` times lives: inline [length, head, t0..t(cap-1)] in the numeric store when the
 * cap is small, else an array (oldest first) in the object store. Encoded, it is always [cap, times oldest first],
 * so a plan with another cap can adopt it.
 */
export class TimeRingLayout {
  readonly inline: boolean;
  readonly numWidth: number;
  readonly objWidth: number;

  constructor(readonly cap: number) {
    this.inline = cap <= INLINE_RING_MAX;
    this.numWidth = this.inline ? 2 + cap : 0;
    this.objWidth = this.inline ? 0 : 1;
  }

  init(nums: Float64Array, at: number, objs: unknown[], obj: number): void {
    if (this.inline) nums.fill(0, at, at + this.numWidth);
    else objs[obj] = [];
  }

  length(nums: Float64Array, at: number, objs: unknown[], obj: number): number {
    return this.inline ? (nums[at] as number) : (objs[obj] as number[]).length;
  }

  /** The oldest time, or Infinity when empty. */
  oldest(nums: Float64Array, at: number, objs: unknown[], obj: number): number {
    if (this.inline) return nums[at] === 0 ? Number.POSITIVE_INFINITY : (nums[at + 2 + (nums[at + 1] as number)] as number);
    const times = objs[obj] as number[];
    return times.length === 0 ? Number.POSITIVE_INFINITY : (times[0] as number);
  }

  push(nums: Float64Array, at: number, objs: unknown[], obj: number, t: number): void {
    const cap = this.cap;
    if (cap <= 0) return;
    if (!this.inline) {
      pushTime(objs[obj] as number[], cap, t);
      return;
    }
    const length = nums[at] as number;
    const head = nums[at + 1] as number;
    if (length < cap) {
      nums[at + 2 + ((head + length) % cap)] = t;
      nums[at] = length + 1;
    } else {
      nums[at + 2 + head] = t;
      nums[at + 1] = (head + 1) % cap;
    }
  }

  /** Drops times at or before `cutoff`; returns whether any left. */
  evict(nums: Float64Array, at: number, objs: unknown[], obj: number, cutoff: number): boolean {
    if (!this.inline) return evictTimes(objs[obj] as number[], cutoff);
    let length = nums[at] as number;
    let head = nums[at + 1] as number;
    const before = length;
    while (length > 0 && (nums[at + 2 + head] as number) <= cutoff) {
      head = (head + 1) % this.cap;
      length--;
    }
    if (length === before) return false;
    nums[at] = length;
    nums[at + 1] = length === 0 ? 0 : head;
    return true;
  }

  /** The times, oldest first. */
  times(nums: Float64Array, at: number, objs: unknown[], obj: number): number[] {
    if (!this.inline) return [...(objs[obj] as number[])];
    const out: number[] = [];
    const length = nums[at] as number;
    const head = nums[at + 1] as number;
    for (let i = 0; i < length; i++) out.push(nums[at + 2 + ((head + i) % this.cap)] as number);
    return out;
  }

  encode(nums: Float64Array, at: number, objs: unknown[], obj: number): [number, number[]] {
    return [this.cap, this.times(nums, at, objs, obj)];
  }

  /** Reads an encoded [cap, times]; a smaller stored cap may have dropped times (stale). */
  adopt(cap: unknown, times: unknown, nums: Float64Array, at: number, objs: unknown[], obj: number): 'current' | 'stale' | 'invalid' {
    if (!(isCount(cap) || cap === Number.POSITIVE_INFINITY) || !isNumberList(times)) return 'invalid';
    for (let i = 1; i < times.length; i++) if ((times[i] as number) < (times[i - 1] as number)) return 'invalid';
    this.init(nums, at, objs, obj);
    for (const t of times.slice(Math.max(0, times.length - this.cap))) this.push(nums, at, objs, obj, t);
    return cap < this.cap ? 'stale' : 'current';
  }
}
