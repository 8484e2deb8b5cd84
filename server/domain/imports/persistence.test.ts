import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openLevelStore } from '../../store/level.js';
import { Imports } from './index.js';
import type { ResolveUser } from './index.js';

const resolve: ResolveUser = async (refs, write) => write(refs.map((ref) => ('user_id' in ref ? ref.user_id : `u-${ref.alias.id}`)), []);
const dirs: string[] = [];

afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

describe('imports on LevelDB', () => {
  it('keeps imports, segments, memberships and rows across a restart', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'audience-imports-'));
    dirs.push(dir);
    const first = await openLevelStore(dir);
    const before = Imports.open(first);
    const acme = await before.createImport('org1', 'ws1', { name: 'Acme', code: 'acme', relation: '3rd', kind: 'segments' });
    const crm = await before.createImport('org1', 'ws1', {
      name: 'CRM', code: 'crm', relation: '2nd', kind: 'connections', schema: { plan: 'string', tags: 'list' },
    });
    const sports = await before.createSegment('org1', acme.id, { name: 'Sports', code: 'sports', cpm: 1.25, categories: ['a'] });
    await before.createSegment('org1', acme.id, { name: 'News', code: 'news', description: null });
    await before.loadMembers('org1', acme.id, 'sports', { add: [{ user_id: 'a' }, { user_id: 'b' }] }, resolve);
    await before.loadRows('org1', crm.id, [{ id: 'r1', user_id: 'a', time: 5, properties: { plan: 'pro', tags: ['x'] } }], resolve);
    await first.close();

    const second = await openLevelStore(dir);
    try {
      const after = Imports.open(second);
      expect(await after.getImport('org1', acme.id)).toEqual(acme);
      expect(await after.getImportByCode('org1', 'crm')).toEqual(crm);
      expect(await after.getSegment('org1', acme.id, sports.id)).toEqual(sports);
      const page = await after.listSegments('org1', acme.id);
      expect(page.elements.map((segment) => segment.code)).toEqual(['news', 'sports']);
      expect(page.pagination.total_count).toBe(2);
      const ctx = await after.contextFor('org1', 'a');
      expect(ctx.inImportedSegment('3rd', 'acme', 'sports')).toBe(true);
      expect(ctx.connectionRows('crm')).toEqual([{ time: 5, properties: { plan: 'pro', tags: ['x'] } }]);
      await expect(after.createSegment('org1', acme.id, { name: 'again', code: 'sports' })).rejects.toMatchObject({ code: 4000 });
      expect((await after.loadMembers('org1', acme.id, 'sports', { add: [{ user_id: 'b' }] }, resolve)).added).toBe(0);
      expect((await after.loadRows('org1', crm.id, [{ id: 'r1', user_id: 'a', time: 6, properties: {} }], resolve)).loaded).toBe(1);
      expect((await after.contextFor('org1', 'a')).connectionRows('crm')).toEqual([{ time: 6, properties: {} }]);
      await after.deleteSegment('org1', acme.id, sports.id);
      expect((await after.contextFor('org1', 'b')).inImportedSegment('3rd', 'acme', 'sports')).toBe(false);
    } finally {
      await second.close();
    }
  });
});
