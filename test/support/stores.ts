// A store of either kind for tests that run the same cases on both (the memory store and LevelDB in a temp dir).

import type { Store } from '../../server/store/contract.js';
import { MemoryStore } from '../../server/store/memory.js';
import { openLevelStore } from '../../server/store/level.js';
import { tempDir } from './processes.js';

export type StoreKind = 'memory' | 'LevelDB';

export const STORE_KINDS: readonly StoreKind[] = ['memory', 'LevelDB'];

/** An empty store of `kind`; `cleanup` closes it and removes its directory. */
export async function openTestStore(kind: StoreKind, prefix: string): Promise<{ store: Store; cleanup: () => Promise<void> }> {
  if (kind === 'memory') return { store: new MemoryStore(), cleanup: async () => undefined };
  const dir = await tempDir(prefix);
  const store = await openLevelStore(dir.path);
  return {
    store,
    cleanup: async () => {
      await store.close();
      await dir.remove();
    },
  };
}
