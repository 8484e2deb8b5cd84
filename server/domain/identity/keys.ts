// Store keys of the identity area (server/store/layout.ts): users `u!`, alias -> user `a!`, user -> aliases `ua!`.
// Organization and user ids are UUIDs; tags and alias ids are free-form and go through keyPart.

import { fromKeyPart, key, keyPart, scanPrefix } from '../../store/layout.js';

export const userKey = (org: string, user: string): string => key('u', org, user);

export const aliasKey = (org: string, tag: string, id: string): string => key('a', org, keyPart(tag), keyPart(id));

export const userAliasKey = (org: string, user: string, tag: string, id: string): string =>
  key('ua', org, user, keyPart(tag), keyPart(id));

/** Scan bounds of every `ua!` key of one user. The upper bound swaps the final '!' for '"' (the next character),
 * which bounds the prefix in UTF-16 and in UTF-8 byte order alike, whatever characters tags hold. */
export function userAliasRange(org: string, user: string): { gte: string; lt: string } {
  const prefix = scanPrefix('ua', org, user);
  return { gte: prefix, lt: prefix.slice(0, -1) + '"' };
}

/** The (tag, id) of a `ua!` key. */
export function parseUserAliasKey(storeKey: string): { tag: string; id: string } {
  const parts = storeKey.split('!');
  return { tag: fromKeyPart(parts[3] ?? ''), id: fromKeyPart(parts[4] ?? '') };
}

/** What `a!` holds: the user the alias points to and the priority it was last given, if any. */
export interface AliasPointer {
  readonly user_id: string;
  readonly priority?: number;
}

/** What `u!` holds. */
export interface UserRecord {
  readonly id: string;
}

/** What `ua!` holds: the alias as given (the key holds it escaped). */
export interface UserAliasEntry {
  readonly id: string;
  readonly tag: string;
}
