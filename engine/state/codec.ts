// The encoded form of a user's state (msgpackr): a versioned array of the trackers, member codes, ids of slots not
// yet backfilled, and slot tuples keyed by slot id, so that any plan version can adopt what it knows (SLOTS.md).
// Format 2 writes only the slots that differ from their freshly initialised value, with a fingerprint of the
// encoding plan's slot set, so that a user's state is as large as what the user touched, not as the plan.

import { createHash } from 'node:crypto';
import { Packr, Unpackr } from 'msgpackr';
import type { Plan } from '../plan/plan.js';
import { EngineError } from '../errors.js';
import { sameJson } from '../same-json.js';
import { BaseSlot, type SlotDef } from './slots/types.js';
import { unpackState } from './pack.js';
import { VIEW_GIVEN, VIEW_NONE, UserState, allocate, membershipsOf, type StoredSlots } from './user-state.js';

/** Bump when the layout below changes; decoders accept only versions they know (1 is still read). */
export const STATE_FORMAT = 2;
const FORMAT_1 = 1;
/** Written only when asked (`slotBitmap`): slot ids as a bitmap over the encoding plan's slot set. */
const FORMAT_3 = 3;

export interface EncodeOptions {
  /**
   * Write format 3 when the state is bound to a plan: the written slots as a bitmap over the plan's sorted slot ids
   * (a bit per slot of the plan) instead of 4 bytes each. Whoever decodes it must be able to name that slot set
   * (`DecodeOptions.slotSet`, or a plan this process has used): the stateless route keeps slot sets in its store.
   */
  readonly slotBitmap?: boolean;
}

export interface DecodeOptions {
  /** The sorted slot ids of the slot set with this fingerprint, when the caller knows it (format 3). */
  readonly slotSet?: (fingerprint: number) => readonly number[] | undefined;
}

const packr = new Packr({ useRecords: false, variableMapSize: true });
const unpackr = new Unpackr({ useRecords: false, mapsAsObjects: true, copyBuffers: true });

/*
 * Format 1 (still decoded; slot tuples: numbers, NaN as null, then objects; see SLOTS.md):
 * [1, count, time, sessionKey, sessionStartIndex, sessionStartTime,
 *  viewKind, viewKey, viewStartIndex, viewStartTime, memberCodes[], freshIds[], slotIds[], slotData[], eventTime?]
 * Every slot of the plan is written; a slot absent on decode is unknown to the encoding plan (fresh when bound).
 *
 * Format 2 (written):
 * [2, count, time, sessionKey, sessionStartIndex, sessionStart, viewKind, viewKey, viewStartIndex, viewStart,
 *  memberCodes[], freshIds[], slotSet, slotIds, slotData[], eventTime?]
 * - Only slots whose tuple differs from the tuple of a freshly `init`ed slot are written. `slotIds` is binary: per
 *   written slot the low 32 bits of its id (4 bytes, big-endian), resolved through the encoding plan's slot set; an
 *   array of whole ids instead when two slots of that plan share their low 32 bits (or the state was decoded from
 *   format 1 and never bound). Under a plan whose slot set is unknown here, short ids are matched against the plan's
 *   own slots (a wrong match needs a removed and a new slot to share 32 bits). `slotSet` is a 53-bit
 *   fingerprint of the sorted slot ids of the plan the state was bound to (null: an unbound state from format 1,
 *   whose absent slots stay unknown). Bound to a plan with the same slot set, an absent slot is exactly its
 *   initial value: initialised, and fresh only when listed in freshIds (never "needs backfill" for being untouched).
 *   Under another plan, an absent slot the fingerprint's slot set had (known to this process: a plan it bound or
 *   encoded with) is initial too; otherwise it is unknown, as in format 1 (fresh when the user has history).
 * - `sessionStart`, `viewStart` and `eventTime` are written as `time` minus the value (small integers, where
 *   epoch milliseconds take 9 bytes), or as `[value]` when that difference would not be exact.
 * - `eventTime` (the latest event's effective time, E2/E20) is written only when a re-evaluation moved `time` past it.
 *
 * Format 3 (written on request, `slotBitmap`): format 2's fields, but `slotIds` is a bitmap (bit i, most significant
 * first, of byte i >> 3) over the encoding plan's slot ids sorted ascending, `slotData` in that order, and `slotSet`
 * always set. About 30 bytes for the bench's 225 slots where format 2 takes 4 per written slot (and random ids do not
 * deflate). Decoding needs the slot set's ids: a plan this process used, or `DecodeOptions.slotSet`; otherwise
 * ENGINE_UNKNOWN_SLOT_SET with the fingerprint as detail, so the caller can fetch it and decode again.
 */
const FIELDS_1 = 14;
const FIELDS_2 = 15;

export function encodeState(state: UserState, options: EncodeOptions = {}): Uint8Array {
  unpackState(state);
  const plan = state.plan;
  if (options.slotBitmap === true && plan !== undefined) return encodeFormat3(state, plan);
  const ids: number[] = [];
  const data: unknown[] = [];
  let slotSet: number | null;
  let short: boolean;
  if (plan === undefined) {
    // Unbound (decoded, not yet used): what was decoded, as it was.
    for (const [id, tuple] of state.stored) {
      ids.push(id);
      data.push(tuple);
    }
    const source = state.storedSlots instanceof FormatTwoSlots ? state.storedSlots : undefined;
    slotSet = source?.slotSet ?? null;
    short = source?.short ?? false;
  } else {
    const info = planInfo(plan);
    slotSet = info.slotSet;
    short = info.shortUnique;
    const slots = plan.slots;
    for (let i = 0; i < slots.length; i++) {
      const slot = slots[i]!;
      if (info.plainNums[i] === true && sameNumbers(state, info.initial, slot)) continue;
      const tuple = slot.encode(state);
      if (info.plainNums[i] !== true && sameJson(tuple, info.initTuples[i])) continue;
      ids.push(short ? slot.id % SHORT : slot.id);
      data.push(tuple);
    }
  }
  return packFields(STATE_FORMAT, state, slotSet, short ? shortBytes(ids) : ids, data);
}

function encodeFormat3(state: UserState, plan: Plan): Uint8Array {
  const info = planInfo(plan);
  const slots = plan.slots;
  const bitmap = new Uint8Array((slots.length + 7) >> 3);
  const data: unknown[] = [];
  for (let bit = 0; bit < info.sortedSlots.length; bit++) {
    const i = info.sortedSlots[bit] as number;
    const slot = slots[i]!;
    if (info.plainNums[i] === true && sameNumbers(state, info.initial, slot)) continue;
    const tuple = slot.encode(state);
    if (info.plainNums[i] !== true && sameJson(tuple, info.initTuples[i])) continue;
    bitmap[bit >> 3]! |= 0x80 >> (bit & 7);
    data.push(tuple);
  }
  return packFields(FORMAT_3, state, info.slotSet, bitmap, data);
}

function packFields(format: number, state: UserState, slotSet: number | null, slotIds: unknown, data: unknown[]): Uint8Array {
  const time = state.time;
  const packed = packr.pack([
    format,
    state.count,
    time,
    state.sessionKey,
    state.sessionStartIndex,
    before(time, state.sessionStartTime),
    state.viewKind,
    state.viewKey,
    state.viewStartIndex,
    before(time, state.viewStartTime),
    membershipsOf(state),
    [...state.fresh],
    slotSet,
    slotIds,
    data,
    ...(state.eventTime !== time ? [before(time, state.eventTime)] : []),
  ]);
  // A copy: msgpackr hands out views of a shared buffer.
  return new Uint8Array(packed);
}

export function decodeState(bytes: Uint8Array, options: DecodeOptions = {}): UserState {
  let value: unknown;
  try {
    // A fresh view: msgpackr caches a DataView on the object it reads, which should not be the caller's.
    value = unpackr.unpack(bytes.subarray());
  } catch (error) {
    throw bad('not msgpack', error);
  }
  if (!Array.isArray(value) || value.length === 0) throw bad('not a state array');
  const format: unknown = value[0];
  if (format === FORMAT_1) return decodeFormat1(value);
  if (format === STATE_FORMAT) return decodeFormat2(value);
  if (format === FORMAT_3) return decodeFormat3(value, options);
  throw bad(`unknown state format ${String(format)}`);
}

function decodeFormat1(value: unknown[]): UserState {
  if (value.length !== FIELDS_1 && value.length !== FIELDS_1 + 1) throw bad('not a state array');
  const [, count, time, sessionKey, sessionStartIndex, sessionStartTime, viewKind, viewKey, viewStartIndex, viewStartTime, members, fresh, ids, data] =
    value;
  const eventTime: unknown = value.length > FIELDS_1 ? value[FIELDS_1] : time;
  return build(count, time, eventTime, sessionKey, sessionStartIndex, sessionStartTime, viewKind, viewKey, viewStartIndex, viewStartTime, members, fresh, ids, data);
}

function decodeFormat2(value: unknown[]): UserState {
  return decodeLayout2(value, (slotSet, slotIds) => {
    if (!(slotSet === null || (typeof slotSet === 'number' && Number.isSafeInteger(slotSet) && slotSet >= 0))) throw bad('bad slot set');
    const short = slotIds instanceof Uint8Array;
    if (short && slotIds.length % 4 !== 0) throw bad('bad slot ids');
    return { ids: short ? fromShortBytes(slotIds) : slotIds, slots: (stored) => new FormatTwoSlots(stored, typeof slotSet === 'number' ? slotSet : null, short) };
  });
}

function decodeFormat3(value: unknown[], options: DecodeOptions): UserState {
  return decodeLayout2(value, (slotSet, bitmap) => {
    if (!(typeof slotSet === 'number' && Number.isSafeInteger(slotSet) && slotSet >= 0)) throw bad('bad slot set');
    if (!(bitmap instanceof Uint8Array)) throw bad('bad slot bitmap');
    const encoding = slotSetFor(slotSet, options);
    if (bitmap.length !== (encoding.sorted.length + 7) >> 3) throw bad('bad slot bitmap');
    const ids: number[] = [];
    for (let bit = 0; bit < encoding.sorted.length; bit++) if ((bitmap[bit >> 3]! & (0x80 >> (bit & 7))) !== 0) ids.push(encoding.sorted[bit] as number);
    return { ids, slots: (stored) => new FormatTwoSlots(stored, slotSet, false, encoding.ids) };
  });
}

/**
 * Formats 2 and 3 share their fields; they differ in how `slotIds` names the written slots (`slotIds` resolves
 * them with the slot set field, and says how the state's stored slots bind to a plan).
 */
function decodeLayout2(
  value: unknown[],
  slotIds: (slotSet: unknown, field: unknown) => { ids: unknown; slots: (stored: ReadonlyMap<number, unknown>) => StoredSlots },
): UserState {
  if (value.length !== FIELDS_2 && value.length !== FIELDS_2 + 1) throw bad('not a state array');
  const [, count, time, sessionKey, sessionStartIndex, sessionStart, viewKind, viewKey, viewStartIndex, viewStart, members, fresh, slotSet, field, data] =
    value;
  if (!isTime(time)) throw bad('bad trackers');
  const { ids, slots } = slotIds(slotSet, field);
  const eventTime = value.length > FIELDS_2 ? since(time, value[FIELDS_2]) : time;
  const state = build(
    count,
    time,
    eventTime,
    sessionKey,
    sessionStartIndex,
    since(time, sessionStart),
    viewKind,
    viewKey,
    viewStartIndex,
    since(time, viewStart),
    members,
    fresh,
    ids,
    data,
  );
  state.storedSlots = slots(state.stored);
  return state;
}

/** The slot set with this fingerprint: known to this process, or given by the caller (checked against the fingerprint). */
function slotSetFor(fingerprint: number, options: DecodeOptions): KnownSlotSet {
  const known = knownSlotSets.get(fingerprint);
  if (known !== undefined) return known;
  const given = options.slotSet?.(fingerprint);
  if (given === undefined) {
    throw new EngineError('ENGINE_UNKNOWN_SLOT_SET', `cannot decode user state: slot set ${fingerprint} is unknown here`, String(fingerprint));
  }
  const sorted = [...given].sort((a, b) => a - b);
  if (fingerprintOf(sorted) !== fingerprint) throw bad('the slot set given does not match its fingerprint');
  return remember(fingerprint, sorted);
}

/** A plan's slot set: its fingerprint and its slot ids, ascending (what a format 3 state's bitmap indexes). */
export function slotSetOf(plan: Plan): { readonly fingerprint: number; readonly ids: readonly number[] } {
  const info = planInfo(plan);
  return { fingerprint: info.slotSet, ids: info.sortedIds };
}

function build(
  count: unknown,
  time: unknown,
  eventTime: unknown,
  sessionKey: unknown,
  sessionStartIndex: unknown,
  sessionStartTime: unknown,
  viewKind: unknown,
  viewKey: unknown,
  viewStartIndex: unknown,
  viewStartTime: unknown,
  members: unknown,
  fresh: unknown,
  ids: unknown,
  data: unknown,
): UserState {
  if (!isCount(count) || !isTime(time) || !isCount(sessionStartIndex) || !isTime(sessionStartTime)) throw bad('bad trackers');
  if (!isCount(viewStartIndex) || !isTime(viewStartTime)) throw bad('bad trackers');
  if (!isTime(eventTime) || eventTime > time) throw bad('bad event time');
  if (!(sessionKey === null || typeof sessionKey === 'string')) throw bad('bad session key');
  if (typeof viewKind !== 'number' || viewKind < VIEW_NONE || viewKind > VIEW_GIVEN || !Number.isInteger(viewKind)) throw bad('bad view kind');
  if (!(viewKey === null || typeof viewKey === 'string')) throw bad('bad view key');
  if (!isIntegerList(members) || !isIntegerList(fresh) || !isIntegerList(ids)) throw bad('bad lists');
  if (!Array.isArray(data) || data.length !== ids.length) throw bad('bad slot data');

  const state = new UserState();
  state.count = count;
  state.time = time;
  state.prevTime = time;
  state.eventTime = eventTime;
  state.sessionKey = sessionKey;
  state.sessionStartIndex = sessionStartIndex;
  state.sessionStartTime = sessionStartTime;
  state.viewKind = viewKind;
  state.viewKey = viewKey;
  state.viewStartIndex = viewStartIndex;
  state.viewStartTime = viewStartTime;
  state.storedMembers = [...members];
  if (fresh.length > 0) state.fresh = new Set(fresh);
  // Slot tuples are checked against the plan's definitions when bound (an unusable slot starts over, marked fresh).
  const stored = new Map<number, unknown>();
  for (let i = 0; i < ids.length; i++) stored.set(ids[i] as number, data[i]);
  state.stored = stored;
  return state;
}

/** A time as its distance back from `time` when that round-trips exactly, else boxed. */
function before(time: number, value: number): number | [number] {
  const delta = time - value;
  return Number.isSafeInteger(time) && Number.isSafeInteger(value) && Number.isSafeInteger(delta) ? delta : [value];
}

function since(time: number, encoded: unknown): unknown {
  if (typeof encoded === 'number') return Number.isSafeInteger(encoded) ? time - encoded : Number.NaN;
  if (Array.isArray(encoded) && encoded.length === 1) return encoded[0];
  return Number.NaN;
}

const SHORT = 0x1_0000_0000;

function shortBytes(ids: readonly number[]): Uint8Array {
  const out = new Uint8Array(ids.length * 4);
  const view = new DataView(out.buffer);
  for (let i = 0; i < ids.length; i++) view.setUint32(i * 4, ids[i] as number);
  return out;
}

function fromShortBytes(bytes: Uint8Array): number[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: number[] = [];
  for (let at = 0; at < bytes.length; at += 4) out.push(view.getUint32(at));
  return out;
}

/** What the encoder needs of a plan, computed once per plan: initial slot values and the slot-set fingerprint. */
interface PlanInfo {
  readonly slotSet: number;
  /** The slot ids ascending, and the index in `plan.slots` of each (format 3's bitmap order). */
  readonly sortedIds: readonly number[];
  readonly sortedSlots: readonly number[];
  /** Slot ids by their low 32 bits, and whether no two slots share them (else states are written with whole ids). */
  readonly byShort: ReadonlyMap<number, number>;
  readonly shortUnique: boolean;
  /** Per slot: whether its tuple is its numbers alone (generic encode, no objects): compared in place. */
  readonly plainNums: readonly boolean[];
  /** A fresh state's numbers (64-bit and 32-bit views of one buffer). */
  readonly initial: { readonly nums: Float64Array; readonly ints: Uint32Array };
  /** Per slot: the tuple of a freshly `init`ed slot (undefined for plain-number slots). */
  readonly initTuples: readonly unknown[];
}

const infos = new WeakMap<Plan, PlanInfo>();
/** Slot sets of plans seen in this process, by fingerprint (a few recent ones): decoding across a plan change. */
interface KnownSlotSet {
  readonly ids: ReadonlySet<number>;
  readonly sorted: readonly number[];
  readonly byShort: ReadonlyMap<number, number>;
}
const knownSlotSets = new Map<number, KnownSlotSet>();
const KNOWN_SLOT_SETS = 64;

/** A 53-bit fingerprint of sorted slot ids. */
function fingerprintOf(sorted: readonly number[]): number {
  const digest = createHash('sha256').update(sorted.join(',')).digest();
  return (digest.readUInt32BE(0) & 0x1f_ffff) * 0x1_0000_0000 + digest.readUInt32BE(4);
}

function remember(fingerprint: number, sorted: readonly number[]): KnownSlotSet {
  const known = { ids: new Set(sorted), sorted, byShort: shortIndex(sorted) };
  knownSlotSets.delete(fingerprint);
  knownSlotSets.set(fingerprint, known);
  while (knownSlotSets.size > KNOWN_SLOT_SETS) knownSlotSets.delete(knownSlotSets.keys().next().value as number);
  return known;
}

function planInfo(plan: Plan): PlanInfo {
  let info = infos.get(plan);
  if (info !== undefined) return info;
  const sortedSlots = plan.slots.map((_, i) => i).sort((a, b) => plan.slots[a]!.id - plan.slots[b]!.id);
  const ids = sortedSlots.map((i) => plan.slots[i]!.id);
  const slotSet = fingerprintOf(ids);
  const fresh = new UserState();
  const numbers = allocate(plan);
  fresh.nums = numbers.nums;
  fresh.ints = numbers.ints;
  fresh.objs = new Array<unknown>(plan.objCount).fill(undefined);
  for (const slot of plan.slots) slot.init(fresh);
  const plainNums = plan.slots.map((slot) => slot.objWidth === 0 && slot.encode === BaseSlot.prototype.encode);
  const initTuples = plan.slots.map((slot, i) => (plainNums[i] === true ? undefined : structuredClone(slot.encode(fresh))));
  const { byShort } = remember(slotSet, ids);
  info = { slotSet, sortedIds: ids, sortedSlots, byShort, shortUnique: byShort.size === ids.length, plainNums, initial: numbers, initTuples };
  infos.set(plan, info);
  return info;
}

/** Ids by their low 32 bits; a shared low half maps to -1 (ambiguous: never resolved through this index). */
function shortIndex(ids: readonly number[]): Map<number, number> {
  const out = new Map<number, number>();
  for (const id of ids) {
    const short = id % SHORT;
    out.set(short, out.has(short) ? -1 : id);
  }
  return out;
}

/**
 * Format 2's stored slots: keyed by short (or whole) ids; the slots left out were at their initial value in the plan
 * whose slot set has the fingerprint `slotSet` (null: unknown, as in format 1).
 */
class FormatTwoSlots implements StoredSlots {
  constructor(
    private readonly entries: ReadonlyMap<number, unknown>,
    readonly slotSet: number | null,
    readonly short: boolean,
    /** The encoding slot set's ids when the decoder had them (format 3), so binding never depends on the known sets. */
    private readonly encodingIds?: ReadonlySet<number>,
  ) {}

  resolve(plan: Plan): { tuples: ReadonlyMap<number, unknown>; initial(slotId: number): boolean } {
    const info = planInfo(plan);
    const encoding =
      this.slotSet === null
        ? undefined
        : this.slotSet === info.slotSet
          ? { ids: undefined, byShort: info.byShort }
          : this.encodingIds !== undefined
            ? { ids: this.encodingIds, byShort: info.byShort }
            : knownSlotSets.get(this.slotSet);
    let tuples = this.entries;
    if (this.short) {
      // Through the encoding plan's slot set when known (exact), else through this plan's own slots.
      const byShort = encoding?.byShort ?? info.byShort;
      const resolved = new Map<number, unknown>();
      for (const [short, tuple] of this.entries) {
        const id = byShort.get(short);
        if (id !== undefined && id >= 0) resolved.set(id, tuple);
      }
      tuples = resolved;
    }
    const initial =
      encoding === undefined ? () => false : encoding.ids === undefined ? () => true : (slotId: number) => encoding.ids.has(slotId);
    return { tuples, initial };
  }
}

/**
 * Whether a plain-number slot's numbers equal a fresh slot's. The generic encode writes NaN as null, so NaN equals
 * NaN; otherwise numbers compare exactly (-0 is not 0); 32-bit fields are integers.
 */
function sameNumbers(state: UserState, initial: PlanInfo['initial'], slot: SlotDef): boolean {
  const nums = state.nums;
  for (let i = slot.num; i < slot.num + slot.numWidth; i++) {
    const a = nums[i] as number;
    const b = initial.nums[i] as number;
    if (a !== b && !(Number.isNaN(a) && Number.isNaN(b))) return false;
    if (a === 0 && 1 / a !== 1 / b) return false;
  }
  for (let i = slot.int; i < slot.int + slot.intWidth; i++) if (state.ints[i] !== initial.ints[i]) return false;
  return true;
}

function bad(message: string, cause?: unknown): EngineError {
  const error = new EngineError('ENGINE_BAD_STATE', `cannot decode user state: ${message}`);
  if (cause !== undefined) (error as { cause?: unknown }).cause = cause;
  return error;
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}

function isTime(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

function isIntegerList(value: unknown): value is number[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'number' && Number.isInteger(item));
}
