// Expression clause slots (E4): the number of events of a name that match `where` within `during`. All-time and
// fixed windows are counters, session/view runs counters reset on a run change, `first N` counts among the first N
// events of the name, `last N` keeps N bits, `the_last` a capped ring of match times.
// Numbers: [count] | first [seen, matched] | last a bit ring (bits.ts), all 32-bit; the_last a TimeRingLayout (64-bit).

import type { During } from '../../query/ast.js';
import { bitRingWidths, initBitRing, isBitRing, pushBit } from './bits.js';
import { intSource, numSource, tallySource, zeroSource } from './source.js';
import { BaseSlot, increment, noteExpiry, type Adoption, type SlotStore } from './types.js';
import { TimeRingLayout, formOf, inFixedWindow, windowCount, windowMs, type Form } from './window.js';

export class ExpressionSlot extends BaseSlot {
  readonly form: Form;
  private readonly ms: number;
  private readonly n: number;
  private readonly ring: TimeRingLayout;

  constructor(
    readonly key: string,
    readonly id: number,
    readonly event: string,
    readonly whereKey: string,
    private readonly during: During | undefined,
    /** For `the_last`: the count from which every sharing comparison is decided (countCap). */
    readonly cap: number,
  ) {
    super();
    this.form = formOf(during);
    this.ms = windowMs(during);
    this.n = windowCount(during);
    this.needsUnmatched = this.form === 'first' || this.form === 'last';
    this.resetsOnSession = this.form === 'this_session';
    this.resetsOnView = this.form === 'current_view';
    this.timed = this.form === 'the_last';
    this.ring = new TimeRingLayout(cap);
    const bits = bitRingWidths(this.n);
    this.numWidth = this.form === 'the_last' ? this.ring.numWidth : 0;
    this.intWidth = this.form === 'first' ? 2 : this.form === 'last' ? bits.numWidth : this.form === 'the_last' ? 0 : 1;
    this.objWidth = this.form === 'last' ? bits.objWidth : this.form === 'the_last' ? this.ring.objWidth : 0;
  }

  init(s: SlotStore): void {
    if (this.form === 'the_last') this.ring.init(s.nums, this.num, s.objs, this.obj);
    else if (this.form === 'last') initBitRing(s.ints, this.int, s.objs, this.obj, this.n);
    else s.ints.fill(0, this.int, this.int + this.intWidth);
  }

  /** `the_last` encodes its ring as [cap, times] whatever the layout, so other caps can adopt it. */
  encode(s: SlotStore): unknown[] {
    return this.form === 'the_last' ? this.ring.encode(s.nums, this.num, s.objs, this.obj) : super.encode(s);
  }

  adopt(tuple: unknown, s: SlotStore): Adoption {
    if (this.form !== 'the_last') return super.adopt(tuple, s);
    if (!Array.isArray(tuple) || tuple.length !== 2) return 'invalid';
    return this.ring.adopt(tuple[0], tuple[1], s.nums, this.num, s.objs, this.obj);
  }

  protected check(s: SlotStore): Adoption {
    switch (this.form) {
      case 'last':
        return isBitRing(s.ints, this.int, s.objs, this.obj, this.n) ? 'current' : 'invalid';
      case 'first':
        return (s.ints[this.int] as number) <= this.n ? 'current' : 'invalid';
      default:
        return 'current';
    }
  }

  onEvent(s: SlotStore, matched: boolean): boolean {
    const ints = s.ints;
    const at = this.int;
    switch (this.form) {
      case 'first':
        if ((ints[at] as number) >= this.n) return false;
        increment(ints, at);
        if (matched) increment(ints, at + 1);
        return matched;
      case 'last':
        pushBit(ints, at, s.objs, this.obj, this.n, matched);
        return true;
      case 'the_last':
        if (!matched) return false;
        this.ring.push(s.nums, this.num, s.objs, this.obj, s.time);
        noteExpiry(s, this.expiryAt, s.time + this.ms);
        return true;
      case 'in_interval':
      case 'before':
      case 'after':
        if (!matched || !inFixedWindow(this.during, s.time)) return false;
        increment(ints, at);
        return true;
      default:
        if (!matched) return false;
        increment(ints, at);
        return true;
    }
  }

  /** Counts and `first N` as generated code (state/generated.ts); rings (`last N`, `the_last`) keep their calls. */
  eventSource(matched: string, changed: string, constants: number[]): string | undefined {
    return tallySource('ints', this.form, this.during, this.n, this.int, '1', matched, changed, constants);
  }

  resetSource(changed: string): string {
    return zeroSource('ints', this.int, 1, changed);
  }

  valueSource(): string | undefined {
    switch (this.form) {
      case 'first':
        return intSource(this.int + 1);
      case 'last':
        return intSource(this.int + 2);
      case 'the_last':
        return this.ring.inline ? numSource(this.num) : undefined;
      default:
        return intSource(this.int);
    }
  }

  onSessionStart(s: SlotStore): boolean {
    return resetCount(s.ints, this.int);
  }

  onViewStart(s: SlotStore): boolean {
    return resetCount(s.ints, this.int);
  }

  refresh(s: SlotStore): boolean {
    return this.ring.evict(s.nums, this.num, s.objs, this.obj, s.time - this.ms);
  }

  expiry(s: SlotStore): number {
    return this.ring.oldest(s.nums, this.num, s.objs, this.obj) + this.ms;
  }

  value(s: SlotStore): number {
    switch (this.form) {
      case 'first':
        return s.ints[this.int + 1] as number;
      case 'last':
        return s.ints[this.int + 2] as number;
      case 'the_last':
        return this.ring.length(s.nums, this.num, s.objs, this.obj);
      default:
        return s.ints[this.int] as number;
    }
  }
}

function resetCount(ints: Uint32Array, at: number): boolean {
  if (ints[at] === 0) return false;
  ints[at] = 0;
  return true;
}
