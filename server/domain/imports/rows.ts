// Connections rows (D27): writing resolved rows of one import, replacing a row loaded again under the same id (even
// when its user changed). Keys: mr (user -> row, read by the engine) and mri (row id -> user, for replacement).

import type { BatchOp, Store } from '../../store/contract.js';
import { rowKey, rowOwnerKey } from './keys.js';
import type { ImportRecord, RowsResult, StoredRow } from './types.js';

export interface ResolvedRow {
  readonly id: string;
  readonly user: string;
  /** Epoch ms. */
  readonly time: number;
  readonly properties: Readonly<Record<string, unknown>>;
}

/**
 * The writes of a load of rows (a later row with the same id wins), not written: the caller commits them in one batch
 * with the request's alias bindings (D41). Call under the import's lock.
 */
export async function planRows(
  store: Store,
  imported: ImportRecord,
  rows: readonly ResolvedRow[],
): Promise<{ ops: BatchOp[]; result: RowsResult }> {
  const org = imported.organization_id;
  const latest = new Map<string, ResolvedRow>();
  for (const row of rows) latest.set(row.id, row);
  const unique = [...latest.values()];
  const owners = await store.getMany<string>(unique.map((row) => rowOwnerKey(imported.id, row.id)));
  const affected = new Set<string>();
  const ops: BatchOp[] = [];
  unique.forEach((row, index) => {
    const owner = owners[index];
    if (owner !== undefined && owner !== row.user) {
      ops.push({ type: 'del', key: rowKey(org, owner, imported.id, row.id) });
      affected.add(owner);
    }
    const value: StoredRow = { provider: imported.code, time: row.time, properties: row.properties };
    ops.push(
      { type: 'put', key: rowKey(org, row.user, imported.id, row.id), value },
      { type: 'put', key: rowOwnerKey(imported.id, row.id), value: row.user },
    );
    affected.add(row.user);
  });
  return { ops, result: { loaded: unique.length, affectedUsers: [...affected] } };
}
