// First-run setup of a data directory: the organization, a private `descendants` key and a public key
// (operations.md `init`). Keys are returned once to be printed; the store keeps only their hashes (D5).

import { randomUUID } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { openLevelStore } from './store/level.js';
import { Tenancy, type InitializedOrganization } from './domain/tenancy/index.js';

export type InitResult = InitializedOrganization;

/** Creates the first organization unless one exists; answers 'already-initialised' and writes nothing then. */
export async function initialiseTenancy(tenancy: Tenancy, orgName: string): Promise<InitResult | 'already-initialised'> {
  if (tenancy.isInitialised()) return 'already-initialised';
  return tenancy.initOrganization({ name: orgName, now: new Date(), newId: randomUUID, newKey: randomUUID });
}

/** Opens (creating) the data directory's store, initialises it when it holds no organization, and closes it. */
export async function initialiseDataDir(dir: string, orgName: string): Promise<InitResult | 'already-initialised'> {
  await mkdir(dir, { recursive: true });
  const store = await openLevelStore(dir);
  try {
    return await initialiseTenancy(await Tenancy.open(store), orgName);
  } finally {
    await store.close();
  }
}
