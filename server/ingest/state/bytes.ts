// What a decoded user state costs in memory, by estimate: the bound the resident states' and the stateless route's
// caches are kept within (D40).

import type { UserState } from '../../../engine/index.js';
import { contextBytes } from '../tick/context.js';

/**
 * An estimate of the bytes a decoded state holds (D40: the LRU is bounded in bytes): its typed arrays, ring objects
 * and keys, plus about 2,000 bytes of objects around them (the state, its maps and sets, the arrays' headers and
 * backing-store overhead), measured with the benchmark's 100 cohorts (heap + array buffers ≈ 6.3 KB a user, 4 KB of
 * which were the arrays; 3.1 KB since counts are 32-bit). The imported data its cohorts were last decided with, when
 * kept with it (tick/context.ts), is counted too.
 */
export function residentBytes(state: UserState): number {
  let bytes = 2000 + state.nums.byteLength + state.flags.byteLength + 8 * state.objs.length;
  for (const obj of state.objs) {
    if (obj instanceof Uint8Array) bytes += 100 + obj.byteLength;
    else if (Array.isArray(obj)) bytes += 32 + 8 * obj.length;
  }
  return bytes + 2 * ((state.sessionKey?.length ?? 0) + (state.viewKey?.length ?? 0)) + contextBytes(state.context);
}
