// Backups (operations.md, second round): every key of the store through ONE iterator (LevelDB iterators read a
// snapshot, so the copy is consistent while the server goes on writing), streamed to a file in bounded chunks; and
// the restore of such a file into an empty data directory. File: a header line `audience-backup 1\n`, then chunks of
// [4-byte big-endian length][msgpack of [key, value][]], as the store decodes and encodes values.

import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readdir, rename } from 'node:fs/promises';
import { once } from 'node:events';
import { Packr } from 'msgpackr';
import { packKeepingKeys, restoreKeys } from './msgpack-keys.js';
import type { Store } from './store/contract.js';
import { openLevelStore } from './store/level.js';

const HEADER = 'audience-backup 1\n';
const CHUNK_ENTRIES = 1000;
const packr = new Packr({ structuredClone: true, useRecords: false, moreTypes: true });

export interface BackupSummary {
  readonly file: string;
  readonly keys: number;
  readonly bytes: number;
}

/** Writes every key of `store` to `file` (via a temporary name, renamed when complete). */
export async function writeBackup(store: Store, file: string): Promise<BackupSummary> {
  const partial = `${file}.partial`;
  const out = createWriteStream(partial);
  let keys = 0;
  let bytes = 0;
  const write = async (buffer: Buffer): Promise<void> => {
    bytes += buffer.length;
    if (!out.write(buffer)) await once(out, 'drain');
  };
  try {
    await write(Buffer.from(HEADER, 'utf8'));
    let chunk: Array<[string, unknown]> = [];
    const flush = async (): Promise<void> => {
      if (chunk.length === 0) return;
      const body = packKeepingKeys((value) => packr.pack(value), chunk);
      const length = Buffer.alloc(4);
      length.writeUInt32BE(body.length);
      await write(length);
      await write(body);
      chunk = [];
    };
    // One iterator over the whole keyspace: a snapshot of the store when it starts.
    for await (const [key, value] of store.iterate<unknown>({})) {
      chunk.push([key, value]);
      keys++;
      if (chunk.length >= CHUNK_ENTRIES) await flush();
    }
    await flush();
    out.end();
    await once(out, 'finish');
  } catch (error) {
    out.destroy();
    throw error;
  }
  await rename(partial, file);
  return { file, keys, bytes };
}

/** Restores `file` into `dir`, which must be empty or absent; answers the number of keys restored. */
export async function restoreBackup(file: string, dir: string): Promise<number> {
  await mkdir(dir, { recursive: true });
  if ((await readdir(dir)).length > 0) throw new Error(`${dir} is not empty: restore needs an empty data directory`);
  const store = await openLevelStore(dir);
  let keys = 0;
  try {
    let buffered = Buffer.alloc(0);
    let headerSeen = false;
    for await (const piece of createReadStream(file)) {
      buffered = Buffer.concat([buffered, piece as Buffer]);
      if (!headerSeen) {
        if (buffered.length < HEADER.length) continue;
        if (buffered.subarray(0, HEADER.length).toString('utf8') !== HEADER) throw new Error(`${file} is not an audience backup`);
        buffered = buffered.subarray(HEADER.length);
        headerSeen = true;
      }
      while (buffered.length >= 4 && buffered.length >= 4 + buffered.readUInt32BE(0)) {
        const length = buffered.readUInt32BE(0);
        const body = buffered.subarray(4, 4 + length);
        const entries = restoreKeys(body, packr.unpack(body) as Array<[string, unknown]>);
        buffered = buffered.subarray(4 + length);
        await store.batch(entries.map(([key, value]) => ({ type: 'put' as const, key, value })));
        keys += entries.length;
      }
    }
    if (!headerSeen || buffered.length > 0) throw new Error(`${file} is truncated`);
  } finally {
    await store.close();
  }
  return keys;
}
