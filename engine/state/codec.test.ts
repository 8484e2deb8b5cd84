// The state codec: round trips with identical behaviour afterwards, garbage rejected (ENGINE_BAD_STATE), and states
// carried across plan versions (cohorts added and removed) plus the backfill hooks (missingSlots, adoptSlots).

import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { pack, unpack } from 'msgpackr';
import { EMPTY_CONTEXT } from '../api.js';
import { EngineError } from '../errors.js';
import { compilePlan } from '../plan/compile.js';
import { decodeState, encodeState, slotSetOf, STATE_FORMAT } from './codec.js';
import { adoptSlots, missingSlots } from './coverage.js';
import { SampleGenerator } from '../../test/support/sample-cohorts.js';
import { segment } from './segment.js';
import { HOUR, MINUTE, T0, cohort, ev, expr, gte, theLast } from '../../test/support/engine-queries.js';
import { membershipsOf, newUserState } from './user-state.js';

function codeOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    return error instanceof EngineError ? error.code : 'not an EngineError';
  }
  return undefined;
}

/** After the same events, a decoded copy gives the original's transitions and encodes to the same bytes. */
function expectSameFromHere(
  plan: ReturnType<typeof compilePlan>,
  original: ReturnType<typeof newUserState>,
  copy: ReturnType<typeof newUserState>,
  events: Parameters<typeof segment>[2],
  ctx: Parameters<typeof segment>[3],
  options: Parameters<typeof encodeState>[1] = {},
): void {
  const a = segment(plan, original, events, ctx);
  const b = segment(plan, copy, events, ctx);
  expect(b.transitions).toEqual(a.transitions);
  expect(encodeState(b.state, options)).toEqual(encodeState(a.state, options));
}

describe('encode / decode', () => {
  it('a decoded state behaves exactly like the original', () => {
    const gen = new SampleGenerator(11);
    const plan = compilePlan(gen.cohorts(30), 1);
    const events = gen.events(400);
    const ctx = gen.context();
    const original = segment(plan, newUserState(), events.slice(0, 200), ctx).state;
    const bytes = encodeState(original);
    const copy = decodeState(bytes);
    expect(membershipsOf(copy)).toEqual(membershipsOf(original));
    expect(encodeState(copy)).toEqual(bytes);
    const a = segment(plan, original, events.slice(200), ctx);
    const b = segment(plan, copy, events.slice(200), ctx);
    expect(b.transitions).toEqual(a.transitions);
    expect(b.memberships).toEqual(a.memberships);
    expect(encodeState(b.state)).toEqual(encodeState(a.state));
  });

  it('the encoded state does not grow with history (every slot is bounded)', () => {
    const gen = new SampleGenerator(5);
    const plan = compilePlan(gen.cohorts(60), 1);
    const ctx = gen.context();
    const state = newUserState();
    const sizes: number[] = [];
    for (let chunk = 0; chunk < 40; chunk++) {
      segment(plan, state, gen.events(500, chunk === 0 ? T0 : state.time + MINUTE), ctx);
      sizes.push(encodeState(state).length);
    }
    // After 2,000 and after 20,000 events: same order of size (windows hold recent events only).
    expect(sizes[39] as number).toBeLessThan((sizes[3] as number) * 1.5);
  });

  it('a new user encodes small and decodes to a user with no memberships', () => {
    const bytes = encodeState(newUserState());
    expect(bytes.length).toBeLessThan(32);
    expect(membershipsOf(decodeState(bytes))).toEqual([]);
  });

  it('ENGINE_BAD_STATE for garbage, wrong shapes and unknown format versions', () => {
    expect(codeOf(() => decodeState(new Uint8Array([0xc1, 0xff, 0x00])))).toBe('ENGINE_BAD_STATE');
    expect(codeOf(() => decodeState(new Uint8Array(0)))).toBe('ENGINE_BAD_STATE');
    expect(codeOf(() => decodeState(pack({ a: 1 })))).toBe('ENGINE_BAD_STATE');
    const good = decodeState(encodeState(newUserState()));
    expect(good).toBeDefined();
    const fields = [STATE_FORMAT + 1, 0, 0, null, 0, 0, 0, null, 0, 0, [], [], [], []];
    expect(codeOf(() => decodeState(pack(fields)))).toBe('ENGINE_BAD_STATE');
    // Format 1 (still read) and format 2 (written): a negative count, ids without data.
    expect(codeOf(() => decodeState(pack([1, -1, 0, null, 0, 0, 0, null, 0, 0, [], [], [], []])))).toBe('ENGINE_BAD_STATE');
    expect(codeOf(() => decodeState(pack([1, 0, 0, null, 0, 0, 0, null, 0, 0, [], [], [1], []])))).toBe('ENGINE_BAD_STATE');
    expect(codeOf(() => decodeState(pack([2, -1, 0, null, 0, 0, 0, null, 0, 0, [], [], null, [], []])))).toBe('ENGINE_BAD_STATE');
    expect(codeOf(() => decodeState(pack([2, 0, 0, null, 0, 0, 0, null, 0, 0, [], [], null, [1], []])))).toBe('ENGINE_BAD_STATE');
    // Format 2: a bad slot-set fingerprint, a tracker time that is neither a distance nor a boxed time.
    expect(codeOf(() => decodeState(pack([2, 0, 0, null, 0, 0, 0, null, 0, 0, [], [], 'x', [], []])))).toBe('ENGINE_BAD_STATE');
    expect(codeOf(() => decodeState(pack([2, 0, 0, null, 0, 'x', 0, null, 0, 0, [], [], null, [], []])))).toBe('ENGINE_BAD_STATE');
    expect(codeOf(() => decodeState(pack([2, 0, 0, null, 0, 0, 0, null, 0, 0, [], [], null, [], [], 0.5])))).toBe('ENGINE_BAD_STATE');
  });

  it('damaged slot data is not trusted: the slot starts over and is reported missing', () => {
    const plan = compilePlan([cohort(1, expr('Buy', { frequency: gte(2) }))], 1);
    const state = segment(plan, newUserState(), [ev('Buy', T0), ev('Buy', T0 + 1)], EMPTY_CONTEXT).state;
    const id = plan.slots[0]?.id as number;
    const damaged = decodeState(pack([1, 2, T0 + 1, null, 0, T0, 0, null, 0, T0, [1], [], [id], [['x']]]));
    expect(missingSlots(plan, damaged)).toEqual(plan.slotKeys);
    const damaged2 = decodeState(pack([2, 2, T0 + 1, null, 0, 1, 0, null, 0, 1, [1], [], null, [id], [['x']]]));
    expect(missingSlots(plan, damaged2)).toEqual(plan.slotKeys);
    expect(membershipsOf(state)).toEqual([1]);
  });
});

describe('plan versions', () => {
  const buy = (t: number) => ev('Buy', t);
  const v1 = compilePlan([cohort(1, expr('Buy', { during: theLast(HOUR) })), cohort(2, expr('Buy', { frequency: gte(3) }))], 1);
  const v2 = compilePlan([cohort(2, expr('Buy', { frequency: gte(3) })), cohort(3, expr('Buy', { frequency: gte(2), during: theLast(HOUR) }))], 2);
  const history = [buy(T0), buy(T0 + MINUTE), buy(T0 + 2 * MINUTE)];

  it('a state from plan v1 works under v2: shared slots kept, removed cohorts dropped, new slots reported missing', () => {
    const under1 = segment(v1, newUserState(), history.slice(0, 2), EMPTY_CONTEXT);
    expect(under1.memberships).toEqual([1]);
    const state = decodeState(encodeState(under1.state));
    // Cohort 3's ring needs cap 2 where v1 kept cap 1: stale, so missing (its times are still used).
    expect(missingSlots(v2, state)).toEqual(v2.slotKeys.filter((key) => key.includes('the_last')));
    const next = segment(v2, state, history.slice(2), EMPTY_CONTEXT);
    // Cohort 2's all-time count carried over (3 Buys); cohort 1 is gone without a transition.
    expect(next.memberships).toEqual([2, 3]);
    expect(next.transitions.map((t) => [t.cohort, t.kind])).toEqual([
      [2, 'entered'],
      [3, 'entered'],
    ]);
    expect(membershipsOf(decodeState(encodeState(next.state)))).toEqual([2, 3]);
  });

  it('a slot unknown to v1 starts empty; adoptSlots brings it up to date from a replay of history', () => {
    const v3 = compilePlan([cohort(2, expr('Buy', { frequency: gte(3) })), cohort(4, expr('Buy', { frequency: gte(2), during: { kind: 'first', count: 5 } }))], 3);
    const state = decodeState(encodeState(segment(v1, newUserState(), history, EMPTY_CONTEXT).state));
    const missing = missingSlots(v3, state);
    expect(missing).toHaveLength(1);
    const replayed = segment(v3, newUserState(), history, EMPTY_CONTEXT).state;
    adoptSlots(v3, state, replayed, missing, [4]);
    expect(missingSlots(v3, state)).toEqual([]);
    expect(membershipsOf(state)).toEqual([2, 4]);
    const live = segment(v3, state, [buy(T0 + 3 * MINUTE)], EMPTY_CONTEXT);
    const fromScratch = segment(v3, replayed, [buy(T0 + 3 * MINUTE)], EMPTY_CONTEXT);
    expect(live.memberships).toEqual(fromScratch.memberships);
    expect(encodeState(live.state)).toEqual(encodeState(fromScratch.state));
  });

  it('a new user has no missing slots', () => {
    expect(missingSlots(v2, newUserState())).toEqual([]);
  });
});

/** The format-1 encoding of a bound state (every slot of the plan), as stored snapshots written before format 2 hold. */
function formatOne(state: ReturnType<typeof newUserState>): Uint8Array {
  const plan = state.plan;
  if (plan === undefined) throw new Error('bind first');
  return pack([
    1,
    state.count,
    state.time,
    state.sessionKey,
    state.sessionStartIndex,
    state.sessionStartTime,
    state.viewKind,
    state.viewKey,
    state.viewStartIndex,
    state.viewStartTime,
    membershipsOf(state),
    [...state.fresh],
    plan.slots.map((slot) => slot.id),
    plan.slots.map((slot) => slot.encode(state)),
  ]);
}

describe('format 2: only touched slots', () => {
  const gen = new SampleGenerator(21);
  const plan = compilePlan(gen.cohorts(100), 1);
  const ctx = gen.context();

  it('writes only the slots that differ from their initial value, far smaller than every slot', () => {
    const state = segment(plan, newUserState(), gen.events(10), ctx).state;
    const bytes = encodeState(state);
    const every = formatOne(state);
    expect(bytes[1]).toBe(STATE_FORMAT);
    expect(bytes.length).toBeLessThan(every.length / 3);
    // Decoded and bound to the same plan, untouched slots are initial and up to date (not "needs backfill").
    const copy = decodeState(bytes);
    expect(missingSlots(plan, copy)).toEqual([]);
    expect(encodeState(copy)).toEqual(bytes);
    expectSameFromHere(plan, state, copy, gen.events(200, state.time + MINUTE), ctx);
  });

  it('a user with no events writes no slots', () => {
    const state = newUserState();
    missingSlots(plan, state);
    expect(encodeState(state).length).toBeLessThan(48);
  });

  it('format 1 snapshots are still read, with every slot they hold, and behave exactly like the original', () => {
    const state = segment(plan, newUserState(), gen.events(300), ctx).state;
    const old = decodeState(formatOne(state));
    expect(membershipsOf(old)).toEqual(membershipsOf(state));
    expect(missingSlots(plan, old)).toEqual([]);
    expect(encodeState(old)).toEqual(encodeState(state));
    const more = gen.events(100, state.time + MINUTE);
    expect(segment(plan, old, more, ctx).transitions).toEqual(segment(plan, state, more, ctx).transitions);
  });

  it('a fresh slot left out for being at its initial value stays fresh', () => {
    const v1 = compilePlan([cohort(2, expr('Buy', { frequency: gte(3) }))], 1);
    const v2 = compilePlan([cohort(2, expr('Buy', { frequency: gte(3) })), cohort(5, expr('Search', { frequency: gte(1) }))], 2);
    const state = decodeState(encodeState(segment(v1, newUserState(), [ev('Buy', T0)], EMPTY_CONTEXT).state));
    const missing = missingSlots(v2, state);
    expect(missing).toHaveLength(1);
    // The new Search slot is empty (left out) yet not up to date: still reported after a round trip.
    expect(missingSlots(v2, decodeState(encodeState(state)))).toEqual(missing);
  });

  it('across a plan change, an untouched slot of the old plan is initial, a slot new to the plan is missing', () => {
    const v1 = compilePlan([cohort(2, expr('Buy', { frequency: gte(3) })), cohort(3, expr('Click', { frequency: gte(1) }))], 1);
    const v2 = compilePlan([cohort(3, expr('Click', { frequency: gte(1) })), cohort(4, expr('Search', { frequency: gte(1) }))], 2);
    const bytes = encodeState(segment(v1, newUserState(), [ev('Buy', T0)], EMPTY_CONTEXT).state);
    const clickKey = v2.slotKeys.find((key) => key.includes('Click'));
    const searchKey = v2.slotKeys.find((key) => key.includes('Search'));
    expect(missingSlots(v2, decodeState(bytes))).toEqual([searchKey]);
    // A fingerprint this process never saw (written by another process under another plan): absent slots unknown.
    const foreign = decodeState(bytes);
    (foreign.storedSlots as unknown as { slotSet: number }).slotSet += 1;
    expect(missingSlots(v2, foreign).sort()).toEqual([clickKey, searchKey].sort());
  });

  it('tracker times that are not integers round-trip exactly (boxed)', () => {
    const p = compilePlan([cohort(1, expr('Buy', { frequency: gte(1) }))], 1);
    const state = segment(p, newUserState(), [ev('Buy', T0 + 0.25), ev('Buy', T0 + 1.5)], EMPTY_CONTEXT).state;
    const copy = decodeState(encodeState(state));
    expect([copy.time, copy.eventTime, copy.sessionStartTime, copy.viewStartTime]).toEqual([
      state.time,
      state.eventTime,
      state.sessionStartTime,
      state.viewStartTime,
    ]);
    expect(encodeState(copy)).toEqual(encodeState(state));
  });
});

describe('format 3: slot ids as a bitmap over the plan\'s slot set', () => {
  const gen = new SampleGenerator(33);
  const plan = compilePlan(gen.cohorts(100), 1);
  const ctx = gen.context();
  const bitmap = { slotBitmap: true } as const;

  it('is written only on request, about 4 bytes per written slot smaller, and behaves exactly like the original', () => {
    const state = segment(plan, newUserState(), gen.events(10), ctx).state;
    const two = encodeState(state);
    const three = encodeState(state, bitmap);
    expect([two[1], three[1]]).toEqual([STATE_FORMAT, 3]);
    const written = (unpack(two.slice()) as unknown[])[14] as unknown[];
    expect(written.length).toBeGreaterThan(20);
    // Format 2 spends 4 bytes per written slot id; format 3 one bit per slot of the plan.
    expect(three.length).toBeLessThanOrEqual(two.length - 4 * written.length + Math.ceil(plan.slots.length / 8) + 2);
    const copy = decodeState(three);
    expect(missingSlots(plan, copy)).toEqual([]);
    expect(encodeState(copy)).toEqual(two);
    expectSameFromHere(plan, state, copy, gen.events(200, state.time + MINUTE), ctx, bitmap);
  });

  it('an unbound state is written as format 2 (it has no plan to index)', () => {
    const bytes = encodeState(segment(plan, newUserState(), gen.events(5), ctx).state);
    expect(encodeState(decodeState(bytes), bitmap)).toEqual(bytes);
  });

  it('a slot set unknown here is ENGINE_UNKNOWN_SLOT_SET naming its fingerprint; given by the caller it decodes exactly', () => {
    const state = segment(plan, newUserState(), gen.events(10), ctx).state;
    const members = membershipsOf(state);
    // Another process's plan: this plan's slots and one more, a slot set this process never used.
    const own = slotSetOf(plan).ids;
    const other = [...own, 2 ** 52 + 12345].sort((a, b) => a - b);
    const digest = createHash('sha256').update(other.join(',')).digest();
    const fingerprint = (digest.readUInt32BE(0) & 0x1f_ffff) * 0x1_0000_0000 + digest.readUInt32BE(4);
    const fields = unpack(encodeState(state, bitmap)) as unknown[];
    const bits = fields[13] as Uint8Array;
    const moved = new Uint8Array((other.length + 7) >> 3);
    own.forEach((id, bit) => {
      if ((bits[bit >> 3]! & (0x80 >> (bit & 7))) !== 0) moved[other.indexOf(id) >> 3]! |= 0x80 >> (other.indexOf(id) & 7);
    });
    fields[12] = fingerprint;
    fields[13] = moved;
    const foreign = new Uint8Array(pack(fields));

    let thrown: unknown;
    try {
      decodeState(foreign);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({ code: 'ENGINE_UNKNOWN_SLOT_SET', detail: String(fingerprint) });
    expect(codeOf(() => decodeState(foreign, { slotSet: () => own }))).toBe('ENGINE_BAD_STATE');

    const copy = decodeState(foreign, { slotSet: (asked) => (asked === fingerprint ? other : undefined) });
    // Every slot of this plan was in the encoding set: absent ones are initial, none missing.
    expect(missingSlots(plan, copy)).toEqual([]);
    // Now known to this process: decodes without being given.
    expect(membershipsOf(decodeState(foreign))).toEqual(members);
    const more = gen.events(100, state.time + MINUTE);
    expect(encodeState(segment(plan, copy, more, ctx).state)).toEqual(encodeState(segment(plan, state, more, ctx).state));
  });

  it('a bitmap of the wrong length is ENGINE_BAD_STATE', () => {
    const fields = unpack(encodeState(segment(plan, newUserState(), gen.events(3), ctx).state, bitmap)) as unknown[];
    fields[13] = new Uint8Array(1);
    expect(codeOf(() => decodeState(new Uint8Array(pack(fields))))).toBe('ENGINE_BAD_STATE');
  });
});
