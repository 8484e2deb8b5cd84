// Track-body validation (D29, D3, D1): what is accepted and normalised, and 400 1002 naming the JSON path otherwise.

import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../errors.js';
import { buildEventRecord, validateTrackBody } from './validate.js';

const NOW = new Date('2026-11-20T12:00:00.000Z');
const USER = 'b0000000-0000-4000-8000-000000000001';
const UUID = 'c0000000-0000-4000-8000-000000000001';

function pathOf(body: unknown): string | undefined {
  try {
    validateTrackBody(body, NOW);
  } catch (error) {
    expect(error).toBeInstanceOf(ServiceError);
    expect((error as ServiceError).code).toBe(1002);
    expect((error as ServiceError).status).toBe(400);
    return (error as ServiceError).detail?.split(':')[0];
  }
  return undefined;
}

describe('validateTrackBody (D29)', () => {
  it('normalises a minimal body: time defaults to now, properties to {}', () => {
    expect(validateTrackBody({ name: 'Pageview', user_id: USER }, NOW)).toEqual({
      name: 'Pageview',
      user_id: USER,
      properties: {},
      time: '2026-11-20T12:00:00.000Z',
      timeMs: NOW.getTime(),
    });
  });

  it('keeps every optional field, converts time to UTC with milliseconds (D3), ignores unknown fields (D1)', () => {
    const body = {
      name: 'Add_to_cart_2',
      aliases: [{ id: 'a@x', tag: 'email', priority: 1 }],
      properties: { price: 9.5, tags: ['a'], nested: { ok: true, deeper: [{ x_1: null }] }, $document: { id: 'd' } },
      time: '2026-11-20T13:59:59.5+02:00',
      id: UUID,
      session_id: UUID,
      view_id: UUID,
      surprise: 'ignored',
    };
    const input = validateTrackBody(body, NOW);
    expect(input).toEqual({
      name: 'Add_to_cart_2',
      aliases: [{ id: 'a@x', tag: 'email', priority: 1 }],
      properties: body.properties,
      time: '2026-11-20T11:59:59.500Z',
      timeMs: Date.parse('2026-11-20T11:59:59.500Z'),
      id: UUID,
      session_id: UUID,
      view_id: UUID,
    });
  });

  it('user_id and aliases together are both kept (the user_id wins at resolution)', () => {
    const input = validateTrackBody({ name: 'x', user_id: USER, aliases: [] }, NOW);
    expect(input.user_id).toBe(USER);
    expect(input.aliases).toEqual([]);
  });

  it('null counts as absent for optional fields', () => {
    const input = validateTrackBody(
      { name: 'x', user_id: USER, properties: null, time: null, id: null, session_id: null, view_id: null },
      NOW,
    );
    expect(input.properties).toEqual({});
    expect(input.time).toBe(NOW.toISOString());
    expect('id' in input || 'session_id' in input || 'view_id' in input).toBe(false);
  });

  it('a time exactly 5 minutes ahead is accepted; later is 400 (D29)', () => {
    expect(validateTrackBody({ name: 'x', user_id: USER, time: '2026-11-20T12:05:00Z' }, NOW).timeMs).toBe(
      NOW.getTime() + 300_000,
    );
    expect(pathOf({ name: 'x', user_id: USER, time: '2026-11-20T12:05:00.001Z' })).toBe('time');
  });

  it('names the JSON path of each problem', () => {
    const cases: Array<[unknown, string]> = [
      ['text', 'body'],
      [{ user_id: USER }, 'name'],
      [{ name: '', user_id: USER }, 'name'],
      [{ name: 'has space', user_id: USER }, 'name'],
      [{ name: 'x'.repeat(129), user_id: USER }, 'name'],
      [{ name: 'x' }, 'user_id'],
      [{ name: 'x', user_id: 'not-a-uuid' }, 'user_id'],
      [{ name: 'x', aliases: [] }, 'aliases'],
      [{ name: 'x', aliases: [{ id: 'a', tag: 't' }] }, 'aliases[0].priority'],
      [{ name: 'x', aliases: [{ id: 'a', tag: 't', priority: 1 }, { id: 'b', priority: 1 }] }, 'aliases[1].tag'],
      [{ name: 'x', user_id: USER, properties: [] }, 'properties'],
      [{ name: 'x', user_id: USER, properties: { Bad: 1 } }, 'properties.Bad'],
      [{ name: 'x', user_id: USER, properties: { a: { b: { 'c-d': 1 } } } }, 'properties.a.b.c-d'],
      [{ name: 'x', user_id: USER, properties: { a: { $nested: 1 } } }, 'properties.a.$nested'],
      [{ name: 'x', user_id: USER, properties: { list: [{ ok: 1 }, { Bad: 2 }] } }, 'properties.list[1].Bad'],
      [{ name: 'x', user_id: USER, properties: { $: 1 } }, 'properties.$'],
      // The first pass (no paths built) and the one that names the path agree on what is wrong, at any depth.
      [{ name: 'x', user_id: USER, properties: JSON.parse('{"ok": 1, "__proto__": {"fine": [1], "Bad": 2}}') }, 'properties.__proto__.Bad'],
      [{ name: 'x', user_id: USER, properties: { ok: 'a', n: Number.NaN } }, 'properties.n'],
      [{ name: 'x', user_id: USER, properties: { list: [1, [2, [Number.POSITIVE_INFINITY]]] } }, 'properties.list[1][1][0]'],
      [{ name: 'x', user_id: USER, properties: { a: [{ ok: null }, { f: () => 1 }] } }, 'properties.a[1].f'],
      [{ name: 'x', user_id: USER, time: 'yesterday' }, 'time'],
      [{ name: 'x', user_id: USER, time: '2026-11-20T12:00:00' }, 'time'],
      [{ name: 'x', user_id: USER, time: 1_700_000_000_000 }, 'time'],
      [{ name: 'x', user_id: USER, id: 'nope' }, 'id'],
      [{ name: 'x', user_id: USER, session_id: 5 }, 'session_id'],
      [{ name: 'x', user_id: USER, view_id: 'v' }, 'view_id'],
    ];
    for (const [body, path] of cases) expect(pathOf(body), JSON.stringify(body)).toBe(path);
  });

  it('rejects property values nested deeper than the limit', () => {
    let deep: Record<string, unknown> = { leaf: 1 };
    for (let i = 0; i < 40; i++) deep = { a: deep };
    expect(pathOf({ name: 'x', user_id: USER, properties: deep })?.startsWith('properties.a.a')).toBe(true);
  });
});

describe('buildEventRecord', () => {
  it("uses the client's id when given, else a new one, and carries session and view ids", () => {
    const withId = validateTrackBody({ name: 'x', user_id: USER, id: UUID, view_id: UUID }, NOW);
    expect(buildEventRecord(withId, USER, () => 'fresh')).toEqual({
      id: UUID,
      user_id: USER,
      name: 'x',
      time: NOW.toISOString(),
      properties: {},
      view_id: UUID,
    });
    const withoutId = validateTrackBody({ name: 'x', aliases: [{ id: 'a', tag: 't', priority: 0 }] }, NOW);
    expect(buildEventRecord(withoutId, USER, () => 'fresh').id).toBe('fresh');
  });
});
