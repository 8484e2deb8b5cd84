// Parsing of a segment batch (D26: `{operations: [{operation: Create|Update|Delete, ...}]}`, up to 5000): the list
// is checked as a whole (1002), each operation on its own so that one bad item fails alone.

import { badBody } from '../../errors.js';
import { MAX_CODE, join, requireObject, requireText } from './fields.js';
import { validateNewSegment, validatePatch } from './segment-body.js';
import type { ValidNewSegment, ValidPatch } from './segment-body.js';
import type { BatchOperationName } from './types.js';

export const MAX_BATCH_OPERATIONS = 5000;

/** Update and Delete name their segment by `id` (the UUID) or by `code`; with both, they must name the same one. */
export interface SegmentTarget {
  readonly id?: string;
  readonly code?: string;
}

export type ParsedOperation =
  | { readonly operation: 'Create'; readonly fields: ValidNewSegment }
  | { readonly operation: 'Update'; readonly target: SegmentTarget; readonly patch: ValidPatch }
  | { readonly operation: 'Delete'; readonly target: SegmentTarget };

const OPERATIONS: readonly string[] = ['Create', 'Update', 'Delete'];

export function requireOperationList(input: unknown): readonly unknown[] {
  if (!Array.isArray(input)) throw badBody('operations: expected an array');
  if (input.length > MAX_BATCH_OPERATIONS) throw badBody(`operations: more than ${MAX_BATCH_OPERATIONS} operations`);
  return input;
}

/** The operation's name when it has a valid one (for the per-item result), else null. */
export function operationName(input: unknown): BatchOperationName | null {
  if (typeof input !== 'object' || input === null) return null;
  const name = (input as Record<string, unknown>).operation;
  return typeof name === 'string' && OPERATIONS.includes(name) ? (name as BatchOperationName) : null;
}

export function parseOperation(input: unknown, index: number): ParsedOperation {
  const path = `operations[${index}]`;
  const body = requireObject(input, path);
  const name = operationName(body);
  if (name === null) throw badBody(`${join(path, 'operation')}: expected one of ${OPERATIONS.join(', ')}`);
  if (name === 'Create') return { operation: 'Create', fields: validateNewSegment(body, path, ['operation']) };
  const target = parseTarget(body, path);
  if (name === 'Update') return { operation: 'Update', target, patch: validatePatch(body, path, ['operation', 'id']) };
  return { operation: 'Delete', target };
}

function parseTarget(body: Record<string, unknown>, path: string): SegmentTarget {
  if (body.id === undefined && body.code === undefined) throw badBody(`${path}: expected an id or a code`);
  return {
    ...(body.id === undefined ? {} : { id: requireText(body.id, join(path, 'id'), MAX_CODE) }),
    ...(body.code === undefined ? {} : { code: requireText(body.code, join(path, 'code'), MAX_CODE) }),
  };
}
