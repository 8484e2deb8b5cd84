// Validation of display names shared by workspaces, keys and cohorts (D14: 1..256 characters).

import { badBody } from '../../errors.js';

export const NAME_MAX_LENGTH = 256;

/** Throws 400 1002 naming `path` unless `value` is a string of 1..256 characters (code points). */
export function checkName(path: string, value: unknown): string {
  if (typeof value !== 'string') throw badBody(`${path}: expected a string`);
  const length = [...value].length;
  if (length < 1 || length > NAME_MAX_LENGTH) throw badBody(`${path}: must be 1 to ${NAME_MAX_LENGTH} characters long`);
  return value;
}
