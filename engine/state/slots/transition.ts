// Transition slots (E10, E11): whether an entry (or exit) of one cohort happened at an event matching `where` and
// within `during`. A has_/has_not_ pair shares the slot (value 1 or 0). Numbers by form: [flag] for all-time, fixed
// windows and runs; [latest time, NaN for none] for `the_last` (64-bit); [seen, flag] for `first N`; [total, latest
// ordinal] for `last N` (ordinals of that cohort's transitions of this direction, from 1); all but `the_last` 32-bit.

import type { During } from '../../query/ast.js';
import { areFlags } from './shape.js';
import { intSource, zeroSource } from './source.js';
import { BaseSlot, increment, noteExpiry, type Adoption, type SlotStore, type TransitionSlotDef } from './types.js';
import { formOf, inFixedWindow, windowCount, windowMs, type Form } from './window.js';

export class TransitionSlot extends BaseSlot implements TransitionSlotDef {
  readonly event = undefined;
  readonly form: Form;
  private readonly ms: number;
  private readonly n: number;

  constructor(
    readonly key: string,
    readonly id: number,
    readonly whereKey: string,
    readonly cohort: number,
    readonly direction: 'entered' | 'exited',
    readonly matches: ((properties: unknown) => boolean) | undefined,
    private readonly during: During | undefined,
  ) {
    super();
    this.form = formOf(during);
    this.ms = windowMs(during);
    this.n = windowCount(during);
    this.resetsOnSession = this.form === 'this_session';
    this.resetsOnView = this.form === 'current_view';
    this.timed = this.form === 'the_last';
    this.numWidth = this.form === 'the_last' ? 1 : 0;
    this.intWidth = this.form === 'the_last' ? 0 : this.form === 'first' || this.form === 'last' ? 2 : 1;
  }

  init(s: SlotStore): void {
    if (this.form === 'the_last') s.nums[this.num] = Number.NaN;
    else s.ints.fill(0, this.int, this.int + this.intWidth);
  }

  protected check(s: SlotStore): Adoption {
    const ints = s.ints;
    const at = this.int;
    switch (this.form) {
      case 'the_last':
        return 'current';
      case 'first':
        return (ints[at] as number) <= this.n && areFlags(ints, at + 1, 1) ? 'current' : 'invalid';
      case 'last':
        return (ints[at + 1] as number) <= (ints[at] as number) ? 'current' : 'invalid';
      default:
        return areFlags(ints, at, 1) ? 'current' : 'invalid';
    }
  }

  /** An entry or exit of `cohort` (per `direction`) at the event being processed; `matched` is its `where`. */
  onTransition(s: SlotStore, matched: boolean): boolean {
    if (this.form === 'the_last') {
      if (!matched) return false;
      s.nums[this.num] = s.time;
      noteExpiry(s, this.expiryAt, s.time + this.ms);
      return true;
    }
    const ints = s.ints;
    const at = this.int;
    switch (this.form) {
      case 'first':
        if ((ints[at] as number) >= this.n) return false;
        increment(ints, at);
        if (!matched || ints[at + 1] === 1) return false;
        ints[at + 1] = 1;
        return true;
      case 'last':
        increment(ints, at);
        if (matched) ints[at + 1] = ints[at] as number;
        return true;
      default:
        if (!matched || ints[at] === 1 || !inFixedWindow(this.during, s.time)) return false;
        ints[at] = 1;
        return true;
    }
  }

  resetSource(changed: string): string {
    return zeroSource('ints', this.int, 1, changed);
  }

  /** Flags and `first N` read as generated code (state/generated.ts); `the_last` and `last N` keep their calls. */
  valueSource(): string | undefined {
    switch (this.form) {
      case 'the_last':
      case 'last':
        return undefined;
      case 'first':
        return intSource(this.int + 1);
      default:
        return intSource(this.int);
    }
  }

  onSessionStart(s: SlotStore): boolean {
    return clearFlag(s.ints, this.int);
  }

  onViewStart(s: SlotStore): boolean {
    return clearFlag(s.ints, this.int);
  }

  /** `the_last`: the latest entry leaves the window when it falls to or before now - length (NaN never does). */
  refresh(s: SlotStore): boolean {
    const t = s.nums[this.num] as number;
    return t <= s.time - this.ms && t > s.prevTime - this.ms;
  }

  /** Infinity once the latest entry has left (refresh saw it leave): nothing changes until the next transition. */
  expiry(s: SlotStore): number {
    const t = s.nums[this.num] as number;
    return Number.isNaN(t) || t + this.ms <= s.time ? Number.POSITIVE_INFINITY : t + this.ms;
  }

  value(s: SlotStore): number {
    if (this.form === 'the_last') return (s.nums[this.num] as number) > s.time - this.ms ? 1 : 0;
    const ints = s.ints;
    const at = this.int;
    switch (this.form) {
      case 'first':
        return ints[at + 1] as number;
      case 'last': {
        const latest = ints[at + 1] as number;
        return latest > 0 && latest > (ints[at] as number) - this.n ? 1 : 0;
      }
      default:
        return ints[at] as number;
    }
  }
}

function clearFlag(ints: Uint32Array, at: number): boolean {
  if (ints[at] === 0) return false;
  ints[at] = 0;
  return true;
}
