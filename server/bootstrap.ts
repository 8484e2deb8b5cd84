// First-run setup of a data directory: the organization, a private `descendants` key and a public key
// (operations.md `init`). Keys are returned once to be printed; the store keeps only their hashes (D5).

import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { openLevelStore } from './store/level.js';
import { Tenancy, type InitializedOrganization } from './domain/tenancy/index.js';

export type InitResult = InitializedOrganization;

/** Creates the first organization unless one exists; answers 'already-initialised' and writes nothing then. */
export async function initialiseTenancy(tenancy: Tenancy, orgName: string): Promise<InitResult | 'already-initialised'> {
  if (tenancy.isInitialised()) return 'already-initialised';
  return tenancy.initOrganization({ name: orgName, now: new Date(), newId: randomUUID, newKey: randomUUID });
}

/**
 * Opens (creating) the data directory's store, initialises it when it holds no organization, and closes it. Opening
 * writes out what the store's log holds as a table: `compression` as the server that follows opens it with.
 */
export async function initialiseDataDir(dir: string, orgName: string, compression?: boolean): Promise<InitResult | 'already-initialised'> {
  await mkdir(dir, { recursive: true });
  const store = await openLevelStore(dir, { compression });
  try {
    return await initialiseTenancy(await Tenancy.open(store), orgName);
  } finally {
    await store.close();
  }
}

/**
 * The way back when every key is lost (operations.md, second round): runs `work` on the tenancy of a stopped
 * server's data directory (a running server holds its lock: "data directory is in use"). The directory must exist.
 */
export async function withOfflineTenancy<T>(dir: string, work: (tenancy: Tenancy) => Promise<T>): Promise<T> {
  if (!existsSync(join(dir, 'CURRENT'))) throw new Error(`no data directory at ${dir}`);
  const store = await openLevelStore(dir);
  try {
    return await work(await Tenancy.open(store));
  } finally {
    await store.close();
  }
}
