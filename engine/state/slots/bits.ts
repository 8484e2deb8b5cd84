// A ring of the most recent N bits (`last N` windows): numbers [filled, head, ones] in the user's numeric store at
// `at`, then the bits: inline as one 32-bit word (a fourth number) when N <= 32, else packed in a Uint8Array that
// grows with the bits pushed (8 bytes, then twice that, up to N / 8: a user's ring is never larger than its history
// of that event, whatever N a query names; the head stays 0 until the ring is full, so the bits so far are positions
// 0..filled). The numbers are either view of the store (`NumberArray`): expression slots keep theirs in 32-bit fields,
// engaged_views in 64-bit ones beside its other numbers.

/** The view of a user's numbers a ring lives in. */
export type NumberArray = Float64Array | Uint32Array;

export const INLINE_BITS_MAX = 32;

/** Numbers and objects a ring of `size` bits takes. */
export function bitRingWidths(size: number): { numWidth: number; objWidth: number } {
  return size <= INLINE_BITS_MAX ? { numWidth: 4, objWidth: 0 } : { numWidth: 3, objWidth: 1 };
}

export function initBitRing(nums: NumberArray, at: number, objs: unknown[], obj: number, size: number): void {
  if (size <= INLINE_BITS_MAX) {
    nums.fill(0, at, at + 4);
  } else {
    nums.fill(0, at, at + 3);
    objs[obj] = NO_BITS;
  }
}

/** A ring's bytes before its first bit (shared, never written: `setBit` replaces it). */
const NO_BITS = new Uint8Array(0);

/** Whether the stored numbers (and bytes) form a ring of `size` bits. */
export function isBitRing(nums: NumberArray, at: number, objs: unknown[], obj: number, size: number): boolean {
  const filled = nums[at] as number;
  const head = nums[at + 1] as number;
  const ones = nums[at + 2] as number;
  const counts =
    Number.isInteger(filled) && filled >= 0 && filled <= size &&
    Number.isInteger(ones) && ones >= 0 && ones <= filled &&
    Number.isInteger(head) && head >= 0 && (head < size || (size === 0 && head === 0));
  if (!counts) return false;
  if (size <= INLINE_BITS_MAX) {
    const word = nums[at + 3] as number;
    return Number.isInteger(word) && word >= 0 && word <= 0xffff_ffff;
  }
  // Grown as bits came: every position pushed so far is in the bytes (all of them once full), none past N.
  const bytes = objs[obj];
  const full = Math.ceil(size / 8);
  if (!(bytes instanceof Uint8Array) || bytes.length > full) return false;
  return filled === size ? bytes.length === full : head === 0 && bytes.length >= Math.ceil(filled / 8);
}

/** Appends a bit; when the ring is full the oldest falls off. */
export function pushBit(nums: NumberArray, at: number, objs: unknown[], obj: number, size: number, bit: boolean): void {
  if (size <= 0) return;
  const filled = nums[at] as number;
  let pos: number;
  if (filled < size) {
    pos = ((nums[at + 1] as number) + filled) % size;
    nums[at] = filled + 1;
  } else {
    pos = nums[at + 1] as number;
    if (bitAt(nums, at, objs, obj, size, pos)) nums[at + 2] = (nums[at + 2] as number) - 1;
    nums[at + 1] = (pos + 1) % size;
  }
  setBit(nums, at, objs, obj, size, pos, bit);
  if (bit) nums[at + 2] = (nums[at + 2] as number) + 1;
}

/** Ones among the newest `count` bits, for count = size or size - 1. */
export function onesAmongNewest(nums: NumberArray, at: number, objs: unknown[], obj: number, size: number, count: number): number {
  const ones = nums[at + 2] as number;
  if (count >= size || (nums[at] as number) <= count) return ones;
  // count === size - 1 and the ring is full: leave out the oldest bit.
  return ones - (bitAt(nums, at, objs, obj, size, nums[at + 1] as number) ? 1 : 0);
}

function bitAt(nums: NumberArray, at: number, objs: unknown[], obj: number, size: number, pos: number): boolean {
  if (size <= INLINE_BITS_MAX) return (((nums[at + 3] as number) >>> pos) & 1) === 1;
  const bytes = objs[obj] as Uint8Array;
  return ((((bytes[pos >> 3] ?? 0) as number) >> (pos & 7)) & 1) === 1;
}

function setBit(nums: NumberArray, at: number, objs: unknown[], obj: number, size: number, pos: number, bit: boolean): void {
  if (size <= INLINE_BITS_MAX) {
    const word = nums[at + 3] as number;
    nums[at + 3] = (bit ? word | (1 << pos) : word & ~(1 << pos)) >>> 0;
    return;
  }
  let bytes = objs[obj] as Uint8Array;
  const index = pos >> 3;
  if (index >= bytes.length) {
    // Twice the length (at least 8 bytes), capped at the ring's size: amortised O(1) per bit pushed.
    const grown = new Uint8Array(Math.min(Math.ceil(size / 8), Math.max(8, 2 * bytes.length, index + 1)));
    grown.set(bytes);
    objs[obj] = bytes = grown;
  }
  const mask = 1 << (pos & 7);
  bytes[index] = bit ? (bytes[index] as number) | mask : (bytes[index] as number) & ~mask;
}
