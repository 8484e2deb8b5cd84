// UUID helpers of the identity area: shape checks and name-based UUID v5 (RFC 4122 §4.3, SHA-1), used for the
// stable user id of an unknown alias in stateless segmentation (D22).

import { createHash } from 'node:crypto';

const UUID_PATTERN = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** True for the canonical 8-4-4-4-12 hex form (any version, either case). */
export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID_PATTERN.test(value);
}

/** RFC 4122 name-based UUID, version 5: SHA-1 over the namespace's 16 bytes and the UTF-8 name. */
export function uuidV5(name: string, namespace: string): string {
  if (!isUuid(namespace)) throw new TypeError(`namespace is not a UUID: ${namespace}`);
  const hash = createHash('sha1').update(Buffer.from(namespace.replace(/-/g, ''), 'hex')).update(name, 'utf8').digest();
  return uuidFromBytes(hash, 5);
}

/** The canonical form of the first 16 bytes as an RFC 4122 UUID of `version` (version and variant bits set). */
export function uuidFromBytes(source: Uint8Array, version: number): string {
  const bytes = Buffer.from(source.subarray(0, 16));
  bytes[6] = ((bytes[6] as number) & 0x0f) | (version << 4);
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The fixed namespace of alias-derived user ids (D22). Changing it would change every derived id. */
export const ALIAS_NAMESPACE = '3f1c6f2e-8a4b-5d7e-9c0a-6b2d4e8f1a35';

/** D22: the stable user id of an alias no user has yet, derived from (organization, tag, id). */
export function aliasUserId(org: string, tag: string, id: string): string {
  return uuidV5(JSON.stringify([org, tag, id]), ALIAS_NAMESPACE);
}
