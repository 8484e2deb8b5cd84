// The signed stateless-segmentation state (D23): `internal_state` = {v, s, e, sig}, an HMAC-SHA256 over the format
// version, organization, user, entry times and engine-state bytes with a per-organization secret kept in the store.

import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { badBody } from '../../errors.js';
import { key } from '../../store/layout.js';
import type { Store } from '../../store/contract.js';
import { decodeState, encodeState, type UserState } from '../../../engine/index.js';

/** Version of the `internal_state` envelope (not of the engine's encoding, which the bytes carry themselves). */
export const INTERNAL_STATE_VERSION = 1;

/** Where an organization's secret lives (server/store/layout.ts, meta). */
export const stateSecretKey = (org: string): string => key('m', 'state-secret', org);

/** What `state.internal_state` holds on the wire. */
export interface InternalState {
  readonly v: number;
  /** Base64 of the engine's encodeState bytes. */
  readonly s: string;
  /** Entry time (epoch ms) by cohort code, for each cohort the user is in (feeds `external_state`). */
  readonly e: Readonly<Record<string, number>>;
  /** Hex HMAC-SHA256. */
  readonly sig: string;
}

/** A verified prior state: the engine state and when the user entered each cohort it is in. */
export interface OpenedState {
  readonly state: UserState;
  readonly entries: Map<number, number>;
}

const invalid = (why: string) => badBody(`state.internal_state: the state is invalid (${why}); send back a state this service returned for this user`);

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const HEX_SIG = /^[0-9a-f]{64}$/;

export class StateSigner {
  /** Secrets by organization; a failed load is forgotten so that the next call retries. */
  private readonly secrets = new Map<string, Promise<Buffer>>();

  constructor(private readonly store: Store) {}

  async seal(org: string, user: string, state: UserState, entries: ReadonlyMap<number, number>): Promise<InternalState> {
    const bytes = encodeState(state);
    const e: Record<string, number> = {};
    for (const [code, time] of [...entries].sort((a, b) => a[0] - b[0])) e[String(code)] = time;
    const sig = this.sign(await this.secret(org), org, user, e, bytes);
    return { v: INTERNAL_STATE_VERSION, s: Buffer.from(bytes).toString('base64'), e, sig };
  }

  /** Verifies and decodes a state sent back; anything modified, foreign or malformed is 400 1002 (D23). */
  async open(org: string, user: string, raw: unknown): Promise<OpenedState> {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw invalid('not an object');
    const { v, s, e, sig } = raw as Record<string, unknown>;
    if (v !== INTERNAL_STATE_VERSION) throw invalid('unknown version');
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

  /** The organization's secret: 32 random bytes created on first use, persisted (sync) before it signs anything. */
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
    const stored = await this.store.get<string>(stateSecretKey(org));
    if (typeof stored === 'string' && /^[0-9a-f]{64}$/.test(stored)) return Buffer.from(stored, 'hex');
    const fresh = randomBytes(32);
    await this.store.batch([{ type: 'put', key: stateSecretKey(org), value: fresh.toString('hex') }], { sync: true });
    return fresh;
  }

  /** Canonical input: length-prefixed text fields, then the raw bytes; entries in ascending code order. */
  private sign(secret: Buffer, org: string, user: string, entries: Readonly<Record<string, number>>, bytes: Uint8Array): string {
    const canonical = JSON.stringify(
      Object.keys(entries)
        .map(Number)
        .sort((a, b) => a - b)
        .map((code) => [code, entries[String(code)]]),
    );
    const hmac = createHmac('sha256', secret);
    for (const part of [`audience-state:${INTERNAL_STATE_VERSION}`, org, user, canonical]) {
      hmac.update(`${Buffer.byteLength(part)}:`).update(part);
    }
    return hmac.update(bytes).digest('hex');
  }
}
