// API key values: the UUID shape check and the SHA-256 hash that is all the store ever holds of a key (D5).

import { createHash } from 'node:crypto';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Any UUID (case-insensitive); keys are created as v4, but any UUID-shaped value gets past the 2005 check. */
export function isUuid(value: string): boolean {
  return value.length === 36 && UUID.test(value);
}

/** The stored identity of a key: hex SHA-256 of its lower-case form (UUIDs compare case-insensitively). */
export function hashKey(rawKey: string): string {
  return createHash('sha256').update(rawKey.toLowerCase()).digest('hex');
}
