// End-to-end tests of loading imported data (D27) over a real server: members and rows with identity resolution,
// re-evaluation of the affected users, and a membership clause (`in_third_party_segment`) reaching a cohort's size.

import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateQuery } from '../../engine/index.js';
import { UUID, V1, expectTaxonomyError, startTaxonomyHarness, type Reply, type TaxonomyHarness } from './support-taxonomy.js';

let h: TaxonomyHarness;
beforeAll(async () => {
  h = await startTaxonomyHarness();
});
afterAll(async () => {
  await h?.close();
});

const expectError = expectTaxonomyError;
const createImport = (fields?: Record<string, unknown>, key?: string) => h.createImport(fields, key);
const createSegment = (importId: string, code: string, extra?: Record<string, unknown>) => h.createSegment(importId, code, extra);

/** D27: a load answers its counts once the affected users are re-evaluated. */
function expectLoaded(reply: Reply, body: Record<string, number>): void {
  expect(reply).toEqual({ status: 200, body });
}

describe('members and rows (D27)', () => {
  let panel: any;
  beforeAll(async () => {
    panel = await createImport({ identifiers: ['email'] });
    await createSegment(panel.id, 'sports');
  });
  const membersPath = () => `${V1}/imports/${panel.id}/segments/code/sports/members`;

  it('adds and removes by user_id and alias; counts report changes; a repeated load changes nothing', async () => {
    const user = randomUUID();
    const alias = { tag: 'email', id: `fan-${randomUUID()}@example.com` };
    const first = await h.call('POST', membersPath(), { body: { add: [{ user_id: user }, { alias }], remove: null } });
    expectLoaded(first, { added: 2, removed: 0 });
    const bound = await h.services.identity.findAliasUser(h.org, alias);
    expect(bound).toMatch(UUID);
    const again = await h.call('POST', membersPath(), { body: { add: [{ user_id: user }, { alias }] } });
    expectLoaded(again, { added: 0, removed: 0 });
    const removed = await h.call('POST', membersPath(), { body: { remove: [{ alias }] } });
    expectLoaded(removed, { added: 0, removed: 1 });
    const both = await h.call('POST', membersPath(), { body: { add: [{ user_id: user }], remove: [{ user_id: user }] } });
    expectLoaded(both, { added: 0, removed: 1 });
  });

  it('a remove-only unknown alias binds nothing', async () => {
    const alias = { tag: 'email', id: `ghost-${randomUUID()}@example.com` };
    const reply = await h.call('POST', membersPath(), { body: { remove: [{ alias }] } });
    expectLoaded(reply, { added: 0, removed: 0 });
    expect(await h.services.identity.findAliasUser(h.org, alias)).toBeUndefined();
  });

  it('400 for bad references, 404 for an unknown segment or import', async () => {
    expectError(await h.call('POST', membersPath(), { body: { add: [{ user_id: 'nope' }] } }), 400, 'InvalidRequestBody', 1002);
    const wrongTag = await h.call('POST', membersPath(), { body: { add: [{ alias: { tag: 'phone', id: '1' } }] } });
    expectError(wrongTag, 400, 'InvalidRequestBody', 1002);
    expectError(await h.call('POST', membersPath(), { body: { add: [{}] } }), 400, 'InvalidRequestBody', 1002);
    expectError(await h.call('POST', membersPath(), { body: { add: 'all' } }), 400, 'InvalidRequestBody', 1002);
    expectError(await h.call('POST', membersPath(), { jsonHeaderOnly: true }), 400, 'InvalidRequestBody', 1003);
    const unknownSegment = await h.call('POST', `${V1}/imports/${panel.id}/segments/code/none/members`, { body: { add: [{ user_id: randomUUID() }] } });
    expectError(unknownSegment, 404, 'DoesNotExist', 3000);
    const unknownImport = await h.call('POST', `${V1}/imports/${randomUUID()}/segments/code/sports/members`, { body: { add: [] } });
    expectError(unknownImport, 404, 'DoesNotExist', 3000);
  });

  it('rows of a connections import: loaded counts rows; schema, kind and shape are checked', async () => {
    const crm = await createImport({ kind: 'connections', identifiers: ['email'], schema: { plan: 'string', spend: 'number' } });
    const path = `${V1}/imports/${crm.id}/rows`;
    const rows = [
      { user_id: randomUUID(), alias: null, time: '2024-05-01T10:00:00+02:00', properties: { plan: 'gold', spend: 12.5 }, id: 'r1' },
      { alias: { tag: 'email', id: `crm-${randomUUID()}@example.com` }, properties: { plan: 'silver', spend: null } },
    ];
    expectLoaded(await h.call('POST', path, { body: rows }), { loaded: 2 });
    expectLoaded(await h.call('POST', path, { body: [rows[0]] }), { loaded: 1 });
    expect(await h.call('POST', path, { body: [] })).toEqual({ status: 200, body: { loaded: 0 } });
    expectError(await h.call('POST', path, { body: [{ user_id: randomUUID(), properties: { tier: 'x' } }] }), 400, 'InvalidRequestBody', 1002);
    expectError(await h.call('POST', path, { body: [{ user_id: randomUUID(), properties: { spend: 'lots' } }] }), 400, 'InvalidRequestBody', 1002);
    expectError(await h.call('POST', path, { body: [{ user_id: 'nope', properties: {} }] }), 400, 'InvalidRequestBody', 1002);
    expectError(await h.call('POST', path, { body: { rows: [] } }), 400, 'InvalidRequestBody', 1002);
    expectError(await h.call('POST', path, { jsonHeaderOnly: true }), 400, 'InvalidRequestBody', 1003);
    const onSegments = await h.call('POST', `${V1}/imports/${panel.id}/rows`, { body: [] });
    expectError(onSegments, 400, 'InvalidRequestBody', 1002);
    expectError(await h.call('POST', `${V1}/imports/${randomUUID()}/rows`, { body: [] }), 404, 'DoesNotExist', 3000);
  });
});

describe('D27: a membership clause over loaded members reaches a cohort', () => {
  let code: number;
  let provider: any;
  beforeAll(async () => {
    provider = await createImport({ code: 'sportsdata', relation: '3rd' });
    await createSegment(provider.id, 'fans');
    const query = { and: [{ in_third_party_segment: { provider: 'sportsdata', segment: 'fans' } }, { event: 'Pageview' }] };
    const validated = validateQuery(query);
    if (!validated.ok) throw new Error(JSON.stringify(validated.problems));
    const cohort = await h.services.cohorts.create({
      workspaceId: h.workspaces.root,
      name: 'Sports fans who read',
      query,
      ast: validated.query,
      references: validated.references,
      now: new Date(),
      newId: randomUUID,
    });
    h.services.pipeline.planChanged(h.org);
    code = cohort.code;
  });

  const pageview = (user: string) =>
    h.services.pipeline.append({
      org: h.org,
      user,
      events: [{ id: randomUUID(), name: 'Pageview', time: new Date().toISOString(), timeMs: Date.now(), properties: {} }],
    });
  const members = (body: unknown) => h.call('POST', `${V1}/imports/${provider.id}/segments/code/fans/members`, { body });

  it('a member who then has a Pageview is in the cohort (size 1)', async () => {
    const user = randomUUID();
    expectLoaded(await members({ add: [{ user_id: user }] }), { added: 1, removed: 0 });
    const appended = await pageview(user);
    expect(appended.memberships).toContain(code);
    expect(h.services.pipeline.audienceSize(h.org, code)).toBe(1);
  });

  it('an alias member: the user bound to the alias is the one the cohort counts', async () => {
    const alias = { tag: 'email', id: `reader-${randomUUID()}@example.com` };
    expectLoaded(await members({ add: [{ alias }] }), { added: 1, removed: 0 });
    const user = await h.services.identity.findAliasUser(h.org, alias);
    expect(user).toMatch(UUID);
    await pageview(user as string);
    expect(h.services.pipeline.audienceSize(h.org, code)).toBe(2);
  });

  it('loading re-evaluates: a reader who becomes a member enters, and leaves when removed', async () => {
    const user = randomUUID();
    const before = await pageview(user);
    expect(before.memberships).not.toContain(code);
    expect(h.services.pipeline.audienceSize(h.org, code)).toBe(2);
    expectLoaded(await members({ add: [{ user_id: user }] }), { added: 1, removed: 0 });
    expect(await h.services.pipeline.membershipsOf(h.org, user)).toContain(code);
    expect(h.services.pipeline.audienceSize(h.org, code)).toBe(3);
    expectLoaded(await members({ remove: [{ user_id: user }] }), { added: 0, removed: 1 });
    expect(await h.services.pipeline.membershipsOf(h.org, user)).not.toContain(code);
    expect(h.services.pipeline.audienceSize(h.org, code)).toBe(2);
  });
});
