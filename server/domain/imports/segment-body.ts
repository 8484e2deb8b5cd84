// Validation of imported segment bodies (D26): create needs name and code; a patch may set name, description, cpm
// and categories; `code` never changes (a patch may repeat the current code, nothing else).

import { badBody } from '../../errors.js';
import {
  MAX_CATEGORIES,
  MAX_CODE,
  MAX_NAME,
  join,
  optionalCpm,
  optionalDescription,
  requireObject,
  requireText,
  stringList,
} from './fields.js';

export interface NewSegment {
  readonly name: string;
  readonly code: string;
  readonly description?: string | null;
  readonly cpm?: number | null;
  readonly categories?: readonly string[];
}

export interface SegmentPatch {
  readonly name?: string;
  readonly description?: string | null;
  readonly cpm?: number | null;
  readonly categories?: readonly string[];
  /** Accepted only when equal to the segment's code (D26: code never changes). */
  readonly code?: string;
}

export interface ValidNewSegment {
  readonly name: string;
  readonly code: string;
  readonly description: string | null;
  readonly cpm: number | null;
  readonly categories: string[];
}

export interface ValidPatch {
  readonly name?: string;
  readonly description?: string | null;
  readonly cpm?: number | null;
  readonly categories?: string[];
  readonly code?: string;
}


/** `extra` lists fields the caller handles itself (a batch operation's `operation`). */
export function validateNewSegment(input: unknown, path = '', extra: readonly string[] = []): ValidNewSegment {
  const body = requireObject(input, path === '' ? 'body' : path);
  return {
    name: requireText(body.name, join(path, 'name'), MAX_NAME),
    code: requireText(body.code, join(path, 'code'), MAX_CODE),
    description: body.description === undefined ? null : optionalDescription(body.description, join(path, 'description')),
    cpm: body.cpm === undefined ? null : optionalCpm(body.cpm, join(path, 'cpm')),
    categories:
      body.categories === undefined ? [] : stringList(body.categories, join(path, 'categories'), MAX_CATEGORIES, MAX_NAME),
  };
}

export function validatePatch(input: unknown, path = '', extra: readonly string[] = []): ValidPatch {
  const body = requireObject(input, path === '' ? 'body' : path);
  const patch: { -readonly [K in keyof ValidPatch]: ValidPatch[K] } = {};
  if (body.name !== undefined) patch.name = requireText(body.name, join(path, 'name'), MAX_NAME);
  if (body.description !== undefined) patch.description = optionalDescription(body.description, join(path, 'description'));
  if (body.cpm !== undefined) patch.cpm = optionalCpm(body.cpm, join(path, 'cpm'));
  if (body.categories !== undefined) {
    patch.categories = stringList(body.categories, join(path, 'categories'), MAX_CATEGORIES, MAX_NAME);
  }
  if (body.code !== undefined) patch.code = requireText(body.code, join(path, 'code'), MAX_CODE);
  return patch;
}

/** D26: a patch naming a different code is a bad body, not a rename. */
export function checkCodeUnchanged(patch: ValidPatch, code: string, path = ''): void {
  if (patch.code !== undefined && patch.code !== code) throw badBody(`${join(path, 'code')}: a segment's code never changes`);
}
