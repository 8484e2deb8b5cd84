// Checks of a cohort's own fields (D14, D16): the registry refuses impossible records even though the HTTP layer
// validates wire bodies first. Failures are 400 1002 naming the field.

import { ServiceError, badBody } from '../../errors.js';
import type { CohortState, SegmentType } from './types.js';

export function checkDescription(value: unknown): string {
  if (typeof value !== 'string') throw badBody('description: expected a string or null');
  return value;
}

export function checkTags(value: unknown): readonly string[] {
  if (!Array.isArray(value)) throw badBody('tags: expected an array of strings');
  value.forEach((tag, index) => {
    if (typeof tag !== 'string') throw badBody(`tags[${index}]: expected a string`);
  });
  return Object.freeze([...(value as string[])]);
}

export function checkSegmentType(value: unknown): SegmentType {
  if (value !== 'real_time' && value !== 'offline') throw badBody('segment_type: must be "real_time" or "offline"');
  return value;
}

export function checkState(value: unknown): CohortState {
  if (value !== 'Enabled' && value !== 'Disabled') throw badBody('state: must be "Enabled" or "Disabled"');
  return value;
}

/** References come from the validator: non-negative integers (an unknown one, 0 included, is a D18 400). Anything else is a programming error (500). */
export function checkReferences(value: unknown): readonly number[] {
  if (!Array.isArray(value) || !value.every((code) => Number.isSafeInteger(code) && (code as number) >= 0)) {
    throw new ServiceError(5000, 'Cohort references must be an array of integer codes.');
  }
  return Object.freeze([...new Set(value as number[])]);
}
