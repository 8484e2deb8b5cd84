// The states the stateless route sealed lately (issue 12), kept decoded so that a call passing one back starts from
// it instead of opening its `internal_state`: no decryption, inflating or decoding, no new binding to the plan (whose
// first event decides every cohort with every clause unknown). A profile of the route put those at about a fifth of
// its main thread (docs/performance.md). A state that had to be opened is kept too, bound, for a client that sends
// it again (it saves the opening, not the first event's full decision).
//
// Exact: an entry is found only by the organization, the user and the whole ciphertext this process sealed (or
// opened) for them (a random IV each time, so one string names one sealing), and only while the plan is the one its
// state is bound to; what is handed out is a copy (engine `cloneState`), so a state passed back twice, or by two
// calls at once, starts from the same state both times. The copy steps exactly as the decoded state would
// (engine/state/clone.test.ts); anything else (another node's state, a changed plan, an evicted entry) is opened
// from its bytes as before. Bounded in bytes (D40), least recently used first out; 0 bytes disables it.

import { totalmem } from 'node:os';
import { ByteLru } from '../../byte-lru.js';
import { residentBytes } from '../../ingest/state/bytes.js';
import { cloneState, missingSlots, type Plan, type UserState } from '../../../engine/index.js';
import { INTERNAL_STATE_VERSION, type InternalState, type OpenedState } from './state.js';

/** Bytes the recently sealed states may hold unless configured: a 256th of this machine's memory, 16-256 MiB. */
export function defaultRecentStateBytes(): number {
  return Math.min(256 * 1024 ** 2, Math.max(16 * 1024 ** 2, Math.floor(totalmem() / 256)));
}

interface Sealed {
  /** Bound to the plan it was sealed under; never stepped (copies are). */
  readonly state: UserState;
  readonly entries: ReadonlyMap<number, number>;
}

/** An entry's map and list overhead, and each entry time's. */
const ENTRY_BYTES = 160;
const ENTRY_TIME_BYTES = 40;

export class RecentStates {
  private readonly sealed: ByteLru<Sealed> | undefined;
  private found = 0;
  private missed = 0;

  constructor(maxBytes: number) {
    this.sealed =
      maxBytes > 0
        ? new ByteLru<Sealed>(maxBytes, (key, { state, entries }) => ENTRY_BYTES + 2 * key.length + residentBytes(state) + ENTRY_TIME_BYTES * entries.size)
        : undefined;
  }

  /**
   * Keeps `state`, which was just sealed as `sealed` for (org, user): the caller hands it over and never steps it
   * again. A state bound to no plan is not kept. The imported data it was last decided with is let go (it is not
   * counted in the bytes, and the context cache may have dropped it): a copy's next step asks the context again for
   * the cohorts that read it, as a state opened from its bytes does.
   */
  remember(org: string, user: string, sealed: InternalState, state: UserState, entries: ReadonlyMap<number, number>): void {
    if (this.sealed === undefined || state.plan === undefined) return;
    state.context = undefined;
    this.sealed.set(keyOf(org, user, sealed.c), { state, entries });
  }

  /**
   * Keeps a copy of a state just opened from `raw` (the `internal_state` sent back) for (org, user), bound to `plan`
   * (binding it, as its first step would): a client that sends the same state again (a retry, a second tab, a page
   * that did not store the newer one) starts from the copy. `opened` stays the caller's.
   */
  keepOpened(org: string, user: string, raw: unknown, opened: OpenedState, plan: Plan): void {
    const c = sealedString(raw);
    if (this.sealed === undefined || c === undefined) return;
    missingSlots(plan, opened.state);
    const state = cloneState(opened.state);
    this.sealed.set(keyOf(org, user, c), { state, entries: new Map(opened.entries) });
  }

  /**
   * A copy of the state this process sealed (or opened) as `raw` (the `internal_state` sent back) for (org, user),
   * bound to `plan`; undefined when there is none (then open `raw` from its bytes).
   */
  take(org: string, user: string, raw: unknown, plan: Plan): OpenedState | undefined {
    if (this.sealed === undefined) return undefined;
    const c = sealedString(raw);
    const entry = c === undefined ? undefined : this.sealed.get(keyOf(org, user, c));
    if (entry === undefined || entry.state.plan !== plan) {
      this.missed++;
      return undefined;
    }
    this.found++;
    return { state: cloneState(entry.state), entries: new Map(entry.entries) };
  }

  /** Calls with a state sent back that started from a kept copy, and those that opened it from its bytes. */
  stats(): { readonly hits: number; readonly misses: number; readonly bytes: number; readonly entries: number } {
    return { hits: this.found, misses: this.missed, bytes: this.sealed?.bytes ?? 0, entries: this.sealed?.size ?? 0 };
  }
}

/** The ciphertext of an `internal_state` of the version this process writes; undefined for anything else. */
function sealedString(raw: unknown): string | undefined {
  if (typeof raw !== 'object' || raw === null || (raw as { v?: unknown }).v !== INTERNAL_STATE_VERSION) return undefined;
  const c = (raw as { c?: unknown }).c;
  return typeof c === 'string' ? c : undefined;
}

function keyOf(org: string, user: string, c: string): string {
  return `${org}\u0000${user}\u0000${c}`;
}
