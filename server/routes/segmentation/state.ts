// The stateless-segmentation state (D23, D42): `internal_state` = {v: 2, c}, where `c` is base64 of
// IV (12 random bytes) || AES-256-GCM ciphertext || tag (16 bytes). The plaintext is a length word, the entry times of
// the cohorts the user is in (compact msgpack; the JSON `[[code, time]]` of earlier states is still read) and the
// engine-state bytes; the additional authenticated data binds the format version, organization and user. The
// 256-bit key of an organization is derived with HKDF-SHA256 from its 32-byte secret kept in the store (the HMAC
// secret of D23, `m!state-secret!{org}`), so states survive restarts and another organization's key fails the tag.
// Version-1 states (D23: `{v: 1, s, e, sig}`, HMAC-SHA256) handed out before are still read, never written.
// The engine state is written in the engine's format 3 (slot ids as a bitmap over the plan's slot set; 4 bytes per
// touched slot less, about a third of a typical state): the plan's slot set is made durable under
// `m!slot-set!{org}!{fingerprint}` before the first state that indexes it is handed out, so a state sealed under a
// plan that changed since (a restart, another cluster node) still opens exactly.

import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { pack, unpack } from 'msgpackr';
import { badBody } from '../../errors.js';
import { key } from '../../store/layout.js';
import type { Store } from '../../store/contract.js';
import { EngineError, decodeState, encodeState, membershipsOf, slotSetOf, type Plan, type UserState } from '../../../engine/index.js';

/** Version of the `internal_state` envelope written (not of the engine's encoding, which the bytes carry themselves). */
export const INTERNAL_STATE_VERSION = 2;
/** The signed, readable envelope of D23, still accepted when sent back. */
const SIGNED_STATE_VERSION = 1;

/** Where an organization's secret lives (server/store/layout.ts, meta). */
export const stateSecretKey = (org: string): string => key('m', 'state-secret', org);
/** Where the sorted slot ids of a slot set a state indexes live (server/store/layout.ts, meta). */
export const slotSetKey = (org: string, fingerprint: number): string => key('m', 'slot-set', org, String(fingerprint));

/** Makes a slot set durable where every node that may open the state reads it (default: this store, synced). */
export type PersistSlotSet = (org: string, fingerprint: number, ids: readonly number[]) => Promise<void>;

/** What `state.internal_state` holds on the wire: nothing readable (D42). */
export interface InternalState {
  readonly v: number;
  /** Base64 of IV || AES-256-GCM ciphertext || tag. */
  readonly c: string;
}

/** A verified prior state: the engine state and when the user entered each cohort it is in. */
export interface OpenedState {
  readonly state: UserState;
  readonly entries: Map<number, number>;
}

const invalid = (why: string) => badBody(`state.internal_state: the state is invalid (${why}); send back a state this service returned for this user`);

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const HEX_SIG = /^[0-9a-f]{64}$/;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const HKDF_INFO = 'audience internal_state AES-256-GCM v2';

/** Random IVs drawn from a pool refilled in blocks (one getrandom per 1,024 states instead of one per state). */
const IV_POOL_BYTES = IV_BYTES * 1024;
let ivPool: Buffer = Buffer.alloc(0);
let ivAt = 0;

function randomIv(): Buffer {
  if (ivAt + IV_BYTES > ivPool.length) {
    ivPool = randomBytes(IV_POOL_BYTES);
    ivAt = 0;
  }
  // A copy: the pool is replaced, never rewritten, but an IV handed out should not alias it.
  const iv = Buffer.from(ivPool.subarray(ivAt, ivAt + IV_BYTES));
  ivAt += IV_BYTES;
  return iv;
}

/** Length-prefixed parts, so that no two different (org, user) pairs give the same bytes. */
function framed(parts: readonly string[]): Buffer {
  return Buffer.from(parts.map((part) => `${Buffer.byteLength(part)}:${part}`).join(''));
}

/** Entries as plaintext: `[[code, time], ...]` in ascending code order (JSON; what states sealed before hold). */
function entriesJson(entries: ReadonlyMap<number, number>): string {
  return JSON.stringify([...entries].sort((a, b) => a[0] - b[0]));
}

/**
 * Set on the plaintext's length word when the entries are compact: msgpack `[latest, back[]]`, the entry time of
 * each cohort the engine state lists as a membership (ascending code order, so the codes are not repeated), as its
 * distance back from the latest (small integers where epoch milliseconds in JSON take 14 bytes).
 */
const COMPACT_ENTRIES = 0x8000_0000;
/**
 * Set on the length word when what follows it (entries and engine state) is raw DEFLATE, written when that is smaller
 * (slot tuples repeat small integers and timestamps: about half). Compression adds no length channel the plain
 * format lacks (format 2's size already follows what the user touched). Inflating is bounded by MAX_PLAINTEXT.
 */
const DEFLATED = 0x4000_0000;
const LENGTH_MASK = 0x3fff_ffff;
const MAX_PLAINTEXT = 1 << 20;
/**
 * A 4 KiB window and a small hash table: as small as the default's output for states of a few hundred bytes, at about
 * half the CPU (most of a small input's cost is setting up the default's 32 KiB window and 128 KiB of tables).
 * Inflating keeps the default window, which reads any raw DEFLATE stream, those sealed before this setting included.
 */
const DEFLATE_OPTIONS = { windowBits: 12, memLevel: 4 } as const;

function compactEntries(entries: ReadonlyMap<number, number>, members: readonly number[]): Buffer | undefined {
  if (members.length !== entries.size || !members.every((code) => entries.has(code))) return undefined;
  const times = members.map((code) => entries.get(code) as number);
  const latest = times.reduce((max, time) => Math.max(max, time), 0);
  const back = times.map((time) => latest - time);
  if (!times.every((time, i) => Number.isSafeInteger(time) && Number.isSafeInteger(back[i]))) return undefined;
  return pack([latest, back]);
}

function readCompactEntries(bytes: Buffer, members: readonly number[]): Map<number, number> {
  const [latest, back] = unpack(bytes) as [number, number[]];
  if (!Number.isSafeInteger(latest) || !Array.isArray(back) || back.length !== members.length) throw new Error('bad entries');
  return new Map(members.map((code, i) => [code, latest - (back[i] as number)]));
}

/**
 * The authenticated plaintext: length word, entries, engine state. Anything unreadable is 400 1002, except a slot set
 * neither known here nor given, which is thrown as it is (ENGINE_UNKNOWN_SLOT_SET) for the caller to fetch.
 */
function readPlain(plain: Buffer, slotSet?: (fingerprint: number) => readonly number[] | undefined): OpenedState {
  try {
    const word = plain.readUInt32BE(0);
    const length = word & LENGTH_MASK;
    const body = (word & DEFLATED) !== 0 ? inflateRawSync(plain.subarray(4), { maxOutputLength: MAX_PLAINTEXT }) : plain.subarray(4);
    const part = body.subarray(0, length);
    const state = decodeState(new Uint8Array(body.subarray(length)), { slotSet });
    const entries =
      (word & COMPACT_ENTRIES) !== 0 ? readCompactEntries(part, membershipsOf(state)) : new Map(JSON.parse(part.toString('utf8')) as [number, number][]);
    return { state, entries };
  } catch (error) {
    if (error instanceof EngineError && error.code === 'ENGINE_UNKNOWN_SLOT_SET') throw error;
    throw invalid('unreadable engine state');
  }
}

export class StateSigner {
  /** Secrets by organization; a failed load is forgotten so that the next call retries. */
  private readonly secrets = new Map<string, Promise<Buffer>>();
  /** Derived AES keys by organization (D42). */
  private readonly keys = new Map<string, Promise<Buffer>>();
  /** Slot sets made durable by this process, by `org fingerprint`; a failed write is forgotten (retried). */
  private readonly persisted = new Map<string, Promise<void>>();
  private readonly persistSlotSet: PersistSlotSet;

  constructor(
    private readonly store: Store,
    /** Writes the organization's secret elsewhere (a cluster's control plane); then it is read back from the store. */
    private readonly create?: (org: string) => Promise<void>,
    persistSlotSet?: PersistSlotSet,
  ) {
    this.persistSlotSet =
      persistSlotSet ?? ((org, fingerprint, ids) => store.batch([{ type: 'put', key: slotSetKey(org, fingerprint), value: [...ids] }], { sync: true }));
  }

  async seal(org: string, user: string, state: UserState, entries: ReadonlyMap<number, number>): Promise<InternalState> {
    if (state.plan !== undefined) await this.slotSetDurable(org, state.plan);
    const compact = compactEntries(entries, membershipsOf(state));
    const json = compact ?? Buffer.from(entriesJson(entries));
    const body = Buffer.concat([json, encodeState(state, { slotBitmap: true })]);
    const deflated = deflateRawSync(body, DEFLATE_OPTIONS);
    const smaller = deflated.length < body.length;
    const length = Buffer.alloc(4);
    length.writeUInt32BE((json.length | (compact === undefined ? 0 : COMPACT_ENTRIES) | (smaller ? DEFLATED : 0)) >>> 0);
    const iv = randomIv();
    const cipher = createCipheriv('aes-256-gcm', await this.stateKey(org), iv);
    cipher.setAAD(framed([`audience-state:${INTERNAL_STATE_VERSION}`, org, user]));
    const sealed = Buffer.concat([iv, cipher.update(length), cipher.update(smaller ? deflated : body), cipher.final(), cipher.getAuthTag()]);
    return { v: INTERNAL_STATE_VERSION, c: sealed.toString('base64') };
  }

  /**
   * Authenticates and decodes a state sent back; anything modified, foreign or malformed is 400 1002 (D23, D42).
   * `plan` (the organization's current plan) names its own slot set: a state sealed under it opens without a store
   * read even on a cluster node that has not applied the control plane's copy of the slot set yet.
   */
  async open(org: string, user: string, raw: unknown, plan?: Plan): Promise<OpenedState> {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw invalid('not an object');
    const record = raw as Record<string, unknown>;
    if (record['v'] === SIGNED_STATE_VERSION) return this.openSigned(org, user, record);
    if (record['v'] !== INTERNAL_STATE_VERSION) throw invalid('unknown version');
    const c = record['c'];
    if (typeof c !== 'string' || !BASE64.test(c) || c.length % 4 !== 0) throw invalid('bad encoding');
    const sealed = Buffer.from(c, 'base64');
    if (sealed.length < IV_BYTES + TAG_BYTES + 4) throw invalid('too short');
    let plain: Buffer;
    try {
      const decipher = createDecipheriv('aes-256-gcm', await this.stateKey(org), sealed.subarray(0, IV_BYTES));
      decipher.setAAD(framed([`audience-state:${INTERNAL_STATE_VERSION}`, org, user]));
      decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
      plain = Buffer.concat([decipher.update(sealed.subarray(IV_BYTES, sealed.length - TAG_BYTES)), decipher.final()]);
    } catch {
      throw invalid('authentication failed');
    }
    // Authenticated: written by this service for this organization and user; a failure below is a format change.
    const current = plan === undefined ? undefined : slotSetOf(plan);
    try {
      return readPlain(plain, current === undefined ? undefined : (asked) => (asked === current.fingerprint ? current.ids : undefined));
    } catch (error) {
      if (!(error instanceof EngineError && error.code === 'ENGINE_UNKNOWN_SLOT_SET')) throw error;
      // Sealed under a plan this process has not used: its slot set was made durable before the state left.
      const fingerprint = Number(error.detail);
      const ids = await this.store.get<unknown>(slotSetKey(org, fingerprint));
      if (!Array.isArray(ids) || !ids.every((id) => Number.isSafeInteger(id))) throw invalid('unknown slot set');
      try {
        return readPlain(plain, (asked) => (asked === fingerprint ? (ids as number[]) : undefined));
      } catch (again) {
        if (again instanceof EngineError) throw invalid('unknown slot set');
        throw again;
      }
    }
  }

  /** Once per plan and process: the plan's slot set durable before a state indexing it is handed out. */
  private slotSetDurable(org: string, plan: Plan): Promise<void> {
    const { fingerprint, ids } = slotSetOf(plan);
    const at = `${org} ${fingerprint}`;
    let done = this.persisted.get(at);
    if (done === undefined) {
      done = this.persistSlotSet(org, fingerprint, ids);
      this.persisted.set(at, done);
      done.catch(() => this.persisted.delete(at));
    }
    return done;
  }

  /** D23 (version 1): `{v, s, e, sig}` verified with the organization's HMAC secret. */
  private async openSigned(org: string, user: string, record: Record<string, unknown>): Promise<OpenedState> {
    const { s, e, sig } = record;
    if (typeof s !== 'string' || !BASE64.test(s) || s.length % 4 !== 0) throw invalid('bad encoding');
    if (typeof sig !== 'string' || !HEX_SIG.test(sig)) throw invalid('bad signature');
    if (typeof e !== 'object' || e === null || Array.isArray(e)) throw invalid('bad entries');
    const entries = new Map<number, number>();
    for (const [code, time] of Object.entries(e)) {
      if (!/^(0|[1-9][0-9]{0,15})$/.test(code) || typeof time !== 'number' || !Number.isFinite(time)) throw invalid('bad entries');
      entries.set(Number(code), time);
    }
    const bytes = Buffer.from(s, 'base64');
    const expected = Buffer.from(this.sign(await this.secret(org), org, user, e as Record<string, number>, bytes), 'hex');
    if (!timingSafeEqual(expected, Buffer.from(sig, 'hex'))) throw invalid('signature mismatch');
    try {
      return { state: decodeState(new Uint8Array(bytes)), entries };
    } catch {
      // Signed by us yet undecodable: an engine format this build no longer reads.
      throw invalid('unreadable engine state');
    }
  }

  /** D42: the organization's 256-bit AES key, HKDF-SHA256 of its stored secret (salt: the organization id). */
  private stateKey(org: string): Promise<Buffer> {
    let derived = this.keys.get(org);
    if (derived === undefined) {
      derived = this.secret(org).then((secret) => Buffer.from(hkdfSync('sha256', secret, org, HKDF_INFO, 32)));
      this.keys.set(org, derived);
      derived.catch(() => this.keys.delete(org));
    }
    return derived;
  }

  /** The organization's secret: 32 random bytes created on first use, persisted (sync) before any state uses it. */
  private secret(org: string): Promise<Buffer> {
    let secret = this.secrets.get(org);
    if (secret === undefined) {
      secret = this.loadSecret(org);
      this.secrets.set(org, secret);
      secret.catch(() => this.secrets.delete(org));
    }
    return secret;
  }

  private async loadSecret(org: string): Promise<Buffer> {
    const stored = await this.storedSecret(org);
    if (stored !== undefined) return stored;
    if (this.create !== undefined) {
      await this.create(org);
      const created = await this.storedSecret(org);
      if (created === undefined) throw new Error(`the state secret of organization ${org} was not created`);
      return created;
    }
    const fresh = randomBytes(32);
    await this.store.batch([{ type: 'put', key: stateSecretKey(org), value: fresh.toString('hex') }], { sync: true });
    return fresh;
  }

  private async storedSecret(org: string): Promise<Buffer | undefined> {
    const stored = await this.store.get<string>(stateSecretKey(org));
    return typeof stored === 'string' && /^[0-9a-f]{64}$/.test(stored) ? Buffer.from(stored, 'hex') : undefined;
  }

  /** D23 (version 1) signature. Canonical input: length-prefixed text fields, then the raw bytes; entries in ascending code order. */
  private sign(secret: Buffer, org: string, user: string, entries: Readonly<Record<string, number>>, bytes: Uint8Array): string {
    const canonical = JSON.stringify(
      Object.keys(entries)
        .map(Number)
        .sort((a, b) => a - b)
        .map((code) => [code, entries[String(code)]]),
    );
    const hmac = createHmac('sha256', secret);
    for (const part of [`audience-state:${SIGNED_STATE_VERSION}`, org, user, canonical]) {
      hmac.update(`${Buffer.byteLength(part)}:`).update(part);
    }
    return hmac.update(bytes).digest('hex');
  }
}
