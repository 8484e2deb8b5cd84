// Hooks the in-memory Store into the shared contract suite.
import { describeStoreContract } from '../../test/support/store-contract.js';
import { MemoryStore } from './memory.js';

describeStoreContract('memory', async () => {
  const store = new MemoryStore();
  return { store, cleanup: () => store.close() };
});
