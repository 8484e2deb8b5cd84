// A failed group batch (tick.ts) must not fail the good items of its group because of one bad one (D40): after a
// failure, the items whose own writes cannot be stored are found here; the group rejects them alone and hands the
// others back to their lanes for a later group.

import { encodeValue } from '../../store/values.js';
import type { LaneItem } from '../lanes/lane.js';

/** Why the item's own writes (its events and extra ops) cannot be stored, or undefined when they can. */
export function unstorable(item: LaneItem): Error | undefined {
  if (item.kind !== 'append') return undefined;
  const values: unknown[] = item.request.events.map((event) => event.properties);
  for (const op of item.request.extraOps ?? []) if (op.type === 'put') values.push(op.value);
  try {
    for (const value of values) {
      encodeValue(value);
      structuredClone(value);
    }
    return undefined;
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}
