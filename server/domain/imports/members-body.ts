// Validation of a members body `{add?: [ident], remove?: [ident]}` (D27), at most MAX_MEMBER_REFS references in all.

import { badBody } from '../../errors.js';
import { requireObject, rejectUnknownFields } from './fields.js';
import { readUserRef } from './user-ref.js';
import type { UserRef } from './types.js';

export const MAX_MEMBER_REFS = 10_000;

export interface MembersBody {
  readonly add?: readonly UserRef[];
  readonly remove?: readonly UserRef[];
}

export interface ValidMembersBody {
  readonly add: UserRef[];
  readonly remove: UserRef[];
}

export function validateMembersBody(input: unknown, identifiers: readonly string[]): ValidMembersBody {
  const body = requireObject(input, 'body');
  const add = readRefs(body.add, 'add', identifiers);
  const remove = readRefs(body.remove, 'remove', identifiers);
  if (add.length + remove.length > MAX_MEMBER_REFS) throw badBody(`body: more than ${MAX_MEMBER_REFS} users in add and remove`);
  return { add, remove };
}

function readRefs(value: unknown, path: string, identifiers: readonly string[]): UserRef[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw badBody(`${path}: expected an array`);
  if (value.length > MAX_MEMBER_REFS) throw badBody(`${path}: more than ${MAX_MEMBER_REFS} users`);
  return value.map((item, index) => {
    const itemPath = `${path}[${index}]`;
    const ref = requireObject(item, itemPath);
    rejectUnknownFields(ref, ['user_id', 'alias'], itemPath);
    return readUserRef(ref, itemPath, identifiers);
  });
}
