// Validation of a user reference `{user_id}` or `{alias: {tag, id}}` (D27) in members and rows bodies. When the
// import lists `identifiers` (D25), an alias must carry one of those tags.

import { badBody } from '../../errors.js';
import { MAX_NAME, join, requireObject, requireText } from './fields.js';
import type { UserRef } from './types.js';

/** Reads the user reference out of `body` (other fields of `body` are the caller's to check). */
export function readUserRef(body: Record<string, unknown>, path: string, identifiers: readonly string[]): UserRef {
  const hasUser = body.user_id !== undefined;
  const hasAlias = body.alias !== undefined;
  if (hasUser === hasAlias) throw badBody(`${path}: expected exactly one of user_id or alias`);
  if (hasUser) return { user_id: requireText(body.user_id, join(path, 'user_id'), MAX_NAME) };
  const aliasPath = join(path, 'alias');
  const alias = requireObject(body.alias, aliasPath);
  for (const field of Object.keys(alias)) {
    if (field !== 'tag' && field !== 'id') throw badBody(`${join(aliasPath, field)}: unknown field`);
  }
  const tag = requireText(alias.tag, join(aliasPath, 'tag'), MAX_NAME);
  const id = requireText(alias.id, join(aliasPath, 'id'), MAX_NAME);
  if (identifiers.length > 0 && !identifiers.includes(tag)) {
    throw badBody(`${join(aliasPath, 'tag')}: not one of the import's identifiers`);
  }
  return { alias: { tag, id } };
}
