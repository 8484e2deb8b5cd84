// Canonical slot keys: a stable serialisation (sorted object keys) of what a slot depends on, and its 53-bit id
// (a SHA-256 prefix) under which a user's state stores the slot, so states stay valid across plan versions.

import { createHash } from 'node:crypto';

/** JSON with object keys sorted at every level; `undefined` members are left out. Same value, same text. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item)).join(',')}]`;
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record)
    .filter((key) => record[key] !== undefined)
    .sort();
  return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`).join(',')}}`;
}

/** The id of a slot key: the first 53 bits of its SHA-256, a safe integer (collisions: ~n²/2⁵⁴). */
export function slotIdOf(key: string): number {
  const digest = createHash('sha256').update(key).digest();
  const high = digest.readUInt32BE(0) & 0x1f_ffff; // 21 bits
  const low = digest.readUInt32BE(4); // 32 bits
  return high * 0x1_0000_0000 + low;
}

/** A short stable digest of a text (cohort fingerprints inside transition slot keys). */
export function digestOf(text: string): string {
  return createHash('sha256').update(text).digest('base64url').slice(0, 16);
}
