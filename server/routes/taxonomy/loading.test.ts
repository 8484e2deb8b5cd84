// D41 at the depth where it can fail: a members or rows load whose write fails binds none of its new aliases,
// because the bindings are committed in the same batch as the load (the route's resolver over the real identity).

import { describe, expect, it } from 'vitest';
import type { BatchOp, Store } from '../../store/contract.js';
import { MemoryStore } from '../../store/memory.js';
import { Identity } from '../../domain/identity/index.js';
import { Imports } from '../../domain/imports/index.js';
import { resolverFor } from './loading.js';

/** A memory store whose batches fail while `failing` is set and the batch writes a key with one of `prefixes`. */
class FailingStore extends MemoryStore implements Store {
  failing = false;
  constructor(private readonly prefixes: readonly string[]) {
    super();
  }
  override async batch(ops: readonly BatchOp[]): Promise<void> {
    if (this.failing && ops.some((op) => this.prefixes.some((prefix) => op.key.startsWith(prefix)))) {
      throw new Error('disk full');
    }
    return super.batch(ops);
  }
}

async function setup(prefixes: readonly string[]) {
  const store = new FailingStore(prefixes);
  let next = 0;
  const newId = () => `00000000-0000-4000-8000-${String(++next).padStart(12, '0')}`;
  const identity = new Identity(store, { newId });
  const imports = Imports.open(store, { newId, now: () => Date.UTC(2024, 0, 1) });
  const panel = await imports.createImport('org1', 'ws1', {
    name: 'Panel', code: 'panel', relation: '3rd', kind: 'segments', identifiers: ['email'],
  });
  await imports.createSegment('org1', panel.id, { name: 'Sports', code: 'sports' });
  const crm = await imports.createImport('org1', 'ws1', {
    name: 'CRM', code: 'crm', relation: '3rd', kind: 'connections', identifiers: ['email'], schema: { plan: 'string' },
  });
  return { store, identity, imports, panel, crm, resolve: resolverFor({ identity }, 'org1', new Set()) };
}

const alias = { tag: 'email', id: 'new@example.com' };

describe('a load that fails to write binds no alias (D41)', () => {
  it('members: the membership batch fails, so the new alias stays unbound, and a retry binds it once', async () => {
    const { store, identity, imports, panel, resolve } = await setup(['mb!']);
    store.failing = true;
    await expect(imports.loadMembers('org1', panel.id, 'sports', { add: [{ alias }] }, resolve)).rejects.toThrow('disk full');
    expect(await identity.findAliasUser('org1', alias)).toBeUndefined();
    store.failing = false;
    expect(await imports.loadMembers('org1', panel.id, 'sports', { add: [{ alias }] }, resolve)).toMatchObject({ added: 1 });
    const user = await identity.findAliasUser('org1', alias);
    expect(user).toBeDefined();
    expect(await imports.loadMembers('org1', panel.id, 'sports', { add: [{ alias }] }, resolve)).toMatchObject({ added: 0 });
    expect(await identity.findAliasUser('org1', alias)).toBe(user);
  });

  it('rows: the rows batch fails, so the new alias stays unbound', async () => {
    const { store, identity, imports, crm, resolve } = await setup(['mr!']);
    store.failing = true;
    const rows = [{ alias, properties: { plan: 'gold' } }];
    await expect(imports.loadRows('org1', crm.id, rows, resolve)).rejects.toThrow('disk full');
    expect(await identity.findAliasUser('org1', alias)).toBeUndefined();
    store.failing = false;
    expect(await imports.loadRows('org1', crm.id, rows, resolve)).toMatchObject({ loaded: 1 });
    expect(await identity.findAliasUser('org1', alias)).toBeDefined();
  });
});
