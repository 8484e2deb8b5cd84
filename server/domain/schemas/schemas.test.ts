// Event schemas (D30): inference from the first event, growth, null, nested objects, lists, `$` structures,
// mismatches with path/expected/actual, and the registry (1007, persistence ops, concurrent first events).

import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../errors.js';
import { MemoryStore } from '../../store/memory.js';
import type { EventSchema } from './check.js';
import { checkAgainstSchema, countPaths } from './check.js';
import { ByteLru, SchemaRegistry, schemaBytes, schemaKey } from './registry.js';

const ORG = 'a0000000-0000-4000-8000-0000000000d1';
const OTHER_ORG = 'a0000000-0000-4000-8000-0000000000d2';

function infer(...events: Array<Record<string, unknown>>): EventSchema {
  let schema: EventSchema | undefined;
  for (const properties of events) {
    const result = checkAgainstSchema(schema, properties);
    if (!result.ok) throw new Error(`unexpected mismatch at ${result.path}`);
    schema = result.schema;
  }
  return schema as EventSchema;
}

describe('checkAgainstSchema (D30)', () => {
  it('infers every property path from the first event', () => {
    const result = checkAgainstSchema(undefined, {
      title: 'Home',
      price: 9.5,
      count: 3,
      paid: false,
      client: { url: 'https://x', screen: { width: 1024 } },
      tags: ['a', 'b'],
      $document: { id: 'd1', properties: { author: 'me' } },
    });
    expect(result).toEqual({
      ok: true,
      changed: true,
      schema: {
        properties: {
          title: { type: 'string' },
          price: { type: 'number' },
          count: { type: 'number' },
          paid: { type: 'boolean' },
          client: {
            type: 'object',
            properties: { url: { type: 'string' }, screen: { type: 'object', properties: { width: { type: 'number' } } } },
          },
          tags: { type: 'list', items: { type: 'string' } },
          $document: {
            type: 'object',
            properties: { id: { type: 'string' }, properties: { type: 'object', properties: { author: { type: 'string' } } } },
          },
        },
      },
    });
  });

  it('an empty first event defines an empty schema', () => {
    expect(checkAgainstSchema(undefined, {})).toEqual({ ok: true, changed: true, schema: { properties: {} } });
  });

  it('a conforming event changes nothing and returns the same schema object', () => {
    const schema = infer({ a: 1, b: { c: 'x' }, l: [1] });
    const result = checkAgainstSchema(schema, { a: 2, b: { c: 'y' }, l: [3, 4] });
    expect(result).toEqual({ ok: true, changed: false, schema });
    expect(result.ok && result.schema).toBe(schema);
  });

  it('grows with new properties at any depth, without modifying the input schema', () => {
    const schema = infer({ a: 1, b: { c: 'x' } });
    const frozen = structuredClone(schema);
    const result = checkAgainstSchema(schema, { b: { d: true }, e: 'new' });
    expect(result).toEqual({
      ok: true,
      changed: true,
      schema: {
        properties: {
          a: { type: 'number' },
          b: { type: 'object', properties: { c: { type: 'string' }, d: { type: 'boolean' } } },
          e: { type: 'string' },
        },
      },
    });
    expect(schema).toEqual(frozen);
  });

  it('null conforms to any type and adds nothing', () => {
    const schema = infer({ a: 1 });
    expect(checkAgainstSchema(schema, { a: null })).toEqual({ ok: true, changed: false, schema });
    expect(checkAgainstSchema(schema, { z: null })).toEqual({ ok: true, changed: false, schema });
    expect(infer({ z: null }, { z: 'later' }).properties).toEqual({ z: { type: 'string' } });
    expect(infer({ l: [null, 2, null] }).properties).toEqual({ l: { type: 'list', items: { type: 'number' } } });
  });

  it('an empty list is a list of unknown type, refined by the first element seen later', () => {
    expect(infer({ l: [] }).properties).toEqual({ l: { type: 'list' } });
    const refined = infer({ l: [] }, { l: [] }, { l: ['x'] });
    expect(refined.properties).toEqual({ l: { type: 'list', items: { type: 'string' } } });
    const mismatch = checkAgainstSchema(refined, { l: ['y', 2] });
    expect(mismatch).toEqual({ ok: false, path: 'properties.l[1]', expected: 'string', actual: 'number' });
  });

  it('lists of objects merge their elements, lists of lists nest', () => {
    const schema = infer({ items: [{ sku: 'a' }, { price: 2 }] }, { grid: [[1, 2], [], [3]] });
    expect(schema.properties).toEqual({
      items: { type: 'list', items: { type: 'object', properties: { sku: { type: 'string' }, price: { type: 'number' } } } },
      grid: { type: 'list', items: { type: 'list', items: { type: 'number' } } },
    });
    expect(checkAgainstSchema(schema, { items: [{ sku: 'b' }, { sku: 'c', price: '3' }] })).toEqual({
      ok: false,
      path: 'properties.items[1].price',
      expected: 'number',
      actual: 'string',
    });
  });

  it('a list whose first event mixes types is a mismatch at the element', () => {
    expect(checkAgainstSchema(undefined, { l: [1, 'a'] })).toEqual({
      ok: false,
      path: 'properties.l[1]',
      expected: 'number',
      actual: 'string',
    });
  });

  it('reports the path, the expected and the actual type of the first mismatch', () => {
    const schema = infer({ a: { b: 1 }, s: 'x', l: ['x'], o: { p: 1 }, $doc: { id: 'd' } });
    const cases: Array<[Record<string, unknown>, string, string, string]> = [
      [{ a: { b: 'text' } }, 'properties.a.b', 'number', 'string'],
      [{ a: 5 }, 'properties.a', 'object', 'number'],
      [{ s: ['x'] }, 'properties.s', 'string', 'list'],
      [{ l: 'x' }, 'properties.l', 'list', 'string'],
      [{ o: [] }, 'properties.o', 'object', 'list'],
      [{ s: { x: 1 } }, 'properties.s', 'string', 'object'],
      [{ s: true }, 'properties.s', 'string', 'boolean'],
      [{ $doc: { id: 7 } }, 'properties.$doc.id', 'string', 'number'],
    ];
    for (const [properties, path, expected, actual] of cases) {
      expect(checkAgainstSchema(schema, properties)).toEqual({ ok: false, path, expected, actual });
    }
  });

  it('a mismatch after growth in the same event grows nothing', () => {
    const schema = infer({ a: 1 });
    const frozen = structuredClone(schema);
    expect(checkAgainstSchema(schema, { new_one: 'x', a: 'bad' }).ok).toBe(false);
    expect(schema).toEqual(frozen);
  });

  it('property names that are Object members are plain names', () => {
    const schema = infer(JSON.parse('{"constructor": 1, "__proto__": {"x": "y"}, "to_string": true}'));
    expect(Object.keys(schema.properties).sort()).toEqual(['__proto__', 'constructor', 'to_string']);
    expect(Object.getPrototypeOf(schema.properties)).toBe(Object.prototype);
    expect(checkAgainstSchema(schema, JSON.parse('{"constructor": "no"}'))).toEqual({
      ok: false,
      path: 'properties.constructor',
      expected: 'number',
      actual: 'string',
    });
  });
});

describe('SchemaRegistry (D30)', () => {
  async function mismatchOf(checked: unknown): Promise<ServiceError> {
    const error = await Promise.resolve(checked).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(ServiceError);
    return error as ServiceError;
  }

  it('the first event defines the schema; growth comes back as ops to commit; conforming events return none', async () => {
    const store = new MemoryStore();
    const registry = new SchemaRegistry(store);
    const first = await registry.check(ORG, 'Purchase', { price: 1 });
    expect(first).toEqual([{ type: 'put', key: schemaKey(ORG, 'Purchase'), value: { properties: { price: { type: 'number' } } } }]);
    expect(await store.get(schemaKey(ORG, 'Purchase'))).toBeUndefined();
    await store.batch(first);
    expect(await registry.check(ORG, 'Purchase', { price: 2 })).toEqual([]);
    const growth = await registry.check(ORG, 'Purchase', { currency: 'EUR' });
    expect(growth).toHaveLength(1);
    await store.batch(growth);
    expect(await new SchemaRegistry(store).get(ORG, 'Purchase')).toEqual({
      properties: { price: { type: 'number' }, currency: { type: 'string' } },
    });
  });

  it('a mismatch is 400 1007 whose detail names the path, expected and actual type', async () => {
    const registry = new SchemaRegistry(new MemoryStore());
    await registry.check(ORG, 'Purchase', { cart: { total: 10 } });
    const error = await mismatchOf(registry.check(ORG, 'Purchase', { cart: { total: 'ten' } }));
    expect(error.status).toBe(400);
    expect(error.code).toBe(1007);
    expect(error.detail).toBe('properties.cart.total: expected number, got string');
  });

  it('schemas are per organization and event name', async () => {
    const registry = new SchemaRegistry(new MemoryStore());
    await registry.check(ORG, 'A', { x: 1 });
    expect(await registry.check(ORG, 'B', { x: 'text' })).toHaveLength(1);
    expect(await registry.check(OTHER_ORG, 'A', { x: 'text' })).toHaveLength(1);
  });

  it('loads a stored schema and enforces it after a restart of the registry', async () => {
    const store = new MemoryStore();
    await store.batch(await new SchemaRegistry(store).check(ORG, 'View', { n: 1 }));
    const error = await mismatchOf(new SchemaRegistry(store).check(ORG, 'View', { n: 'x' }));
    expect(error.code).toBe(1007);
  });

  it('concurrent first events of one name: exactly one defines it, the conflicting one is rejected', async () => {
    const registry = new SchemaRegistry(new MemoryStore());
    const results = await Promise.allSettled([
      registry.check(ORG, 'Race', { v: 1 }),
      registry.check(ORG, 'Race', { v: 'one' }),
      registry.check(ORG, 'Race', { v: 2 }),
      registry.check(ORG, 'Race', { w: true }),
    ]);
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    const ops = results.map((result) => (result.status === 'fulfilled' ? result.value.length : -1));
    expect(ops).toEqual([1, -1, 0, 1]);
    expect(await registry.get(ORG, 'Race')).toEqual({ properties: { v: { type: 'number' }, w: { type: 'boolean' } } });
  });

  it('invalidate drops uncommitted growth: the stored schema is reloaded', async () => {
    const store = new MemoryStore();
    const registry = new SchemaRegistry(store);
    await store.batch(await registry.check(ORG, 'E', { a: 1 }));
    await registry.check(ORG, 'E', { b: 'lost' });
    registry.invalidate(ORG, 'E');
    expect(await registry.get(ORG, 'E')).toEqual({ properties: { a: { type: 'number' } } });
  });

  it('verify checks a list of events in order (each against the growth of those before) and grows nothing', async () => {
    const store = new MemoryStore();
    const registry = new SchemaRegistry(store);
    await store.batch(await registry.check(ORG, 'A', { x: 1 }));
    await registry.verify(ORG, [
      { name: 'A', properties: { x: 2, y: 'new' } },
      { name: 'B', properties: { z: true } },
    ]);
    const error = await mismatchOf(
      registry.verify(ORG, [
        { name: 'B', properties: { z: true } },
        { name: 'B', properties: { z: 'no' } },
      ]),
    );
    expect(error.code).toBe(1007);
    expect(error.detail).toBe('events[1].properties.z: expected boolean, got string');
    expect(await registry.get(ORG, 'A')).toEqual({ properties: { x: { type: 'number' } } });
    expect(await registry.get(ORG, 'B')).toBeUndefined();
  });

  it('caps property paths per event (1002) and per event schema (1007) at the configured limit, naming it (D40)', async () => {
    const store = new MemoryStore();
    const registry = new SchemaRegistry(store, { maxPaths: 4 });
    // a, a.b, l, l[].c: four paths (a list's items add their own properties, not a path of their own).
    await store.batch(await registry.check(ORG, 'E', { a: { b: 1 }, l: [{ c: 'x' }] }));
    const wide = await mismatchOf(registry.check(ORG, 'F', { a: 1, b: 2, c: 3, d: 4, e: 5 }));
    expect(wide.code).toBe(1002);
    expect(wide.detail).toBe('properties: more than 4 property paths, the limit per event (max schema paths)');
    const grown = await mismatchOf(registry.check(ORG, 'E', { z: 1 }));
    expect(grown.code).toBe(1007);
    expect(grown.detail).toBe('properties: the schema of E would grow past 4 property paths, the limit per event schema (max schema paths)');
    expect(await registry.check(ORG, 'E', { a: { b: 2 }, l: [{ c: 'y' }, { c: 'z' }] })).toEqual([]);
    const listed = await mismatchOf(registry.verify(ORG, [{ name: 'E', properties: { a: null } }, { name: 'E', properties: { y: true } }]));
    expect(listed.detail).toMatch(/^events\[1\]\.properties: the schema of E would grow past 4/);
    expect(await new SchemaRegistry(store, { maxPaths: 4 }).get(ORG, 'E')).toEqual(await registry.get(ORG, 'E'));
  });

  it('a schema stored larger than the limit accepts events within it, but not one event with more paths than the limit', async () => {
    const store = new MemoryStore();
    await store.batch(await new SchemaRegistry(store).check(ORG, 'Old', { a: 1, b: 2, c: 3, d: 4, e: 5, f: 6 }));
    const registry = new SchemaRegistry(store, { maxPaths: 4 });
    expect(await registry.check(ORG, 'Old', { a: 1, b: 2, c: 3, d: 4 })).toEqual([]);
    const wide = await mismatchOf(registry.check(ORG, 'Old', { a: 1, b: 2, c: 3, d: 4, e: 5 }));
    expect(wide.code).toBe(1002);
    expect(wide.detail).toBe('properties: more than 4 property paths, the limit per event (max schema paths)');
    const listed = await mismatchOf(registry.verify(ORG, [{ name: 'Old', properties: { a: 1, b: 2, c: 3, d: 4, e: 5 } }]));
    expect(listed.detail).toMatch(/^events\[0\]\.properties: more than 4 property paths/);
  });

  it('countPaths counts every named property at any depth, lists adding their items\' properties', () => {
    expect(countPaths(infer({}).properties)).toBe(0);
    expect(countPaths(infer({ a: 1, b: { c: { d: 'x' } }, l: [[{ e: 1, f: [] }]] }).properties)).toBe(7);
  });

  it('refuses a new event name past the organization\'s cap (400 1002 naming it), keeps accepting known names, also after a restart (D40)', async () => {
    const store = new MemoryStore();
    const registry = new SchemaRegistry(store, { maxEventNames: 3 });
    for (const name of ['A', 'B', 'C']) await store.batch(await registry.check(ORG, name, { x: 1 }));
    const refused = await mismatchOf(registry.check(ORG, 'D', { x: 1 }));
    expect(refused.code).toBe(1002);
    expect(refused.detail).toBe('name: the organization already has 3 event names, the limit (max event names)');
    expect(await registry.check(ORG, 'A', { y: 'grows' })).toHaveLength(1);
    expect(await registry.check(OTHER_ORG, 'D', { x: 1 })).toHaveLength(1);
    const listed = await mismatchOf(registry.verify(ORG, [{ name: 'B', properties: {} }, { name: 'E', properties: {} }]));
    expect(listed.detail).toBe('events[1].name: the organization already has 3 event names, the limit (max event names)');

    const restarted = new SchemaRegistry(store, { maxEventNames: 3 });
    expect((await mismatchOf(restarted.check(ORG, 'D', { x: 1 }))).code).toBe(1002);
    expect(await restarted.check(ORG, 'C', { x: 2 })).toEqual([]);
  });

  it('concurrent first events of new names never pass the cap together', async () => {
    const registry = new SchemaRegistry(new MemoryStore(), { maxEventNames: 2 });
    const outcomes = await Promise.allSettled(['P', 'Q', 'R', 'S'].map((name) => registry.check(ORG, name, { x: 1 })));
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(2);
  });

  it('holds no more schema bytes than its bound, and an evicted schema is read again and still enforced (D40)', async () => {
    const store = new MemoryStore();
    const one = schemaBytes(schemaKey(ORG, 'N0'), { properties: { a: { type: 'number' }, b: { type: 'string' } } });
    const bound = one * 3;
    const registry = new SchemaRegistry(store, { cacheBytes: bound });
    for (let i = 0; i < 40; i++) {
      await store.batch(await registry.check(ORG, `N${i % 10}`, { a: i, b: 'x' }));
      expect(registry.cachedBytes).toBeLessThanOrEqual(bound);
    }
    // N0 was evicted long ago: it is read again from the store and enforced as before.
    const error = await mismatchOf(registry.check(ORG, 'N0', { a: 'not a number' }));
    expect(error.detail).toBe('properties.a: expected number, got string');
    expect(await registry.get(ORG, 'N0')).toEqual({ properties: { a: { type: 'number' }, b: { type: 'string' } } });
  });
});

describe('ByteLru', () => {
  it('evicts the least recently used entries once past its byte bound; reading an entry makes it the newest', () => {
    const lru = new ByteLru<string>(30, (_key, value) => value.length);
    lru.set('a', 'x'.repeat(10));
    lru.set('b', 'x'.repeat(10));
    lru.set('c', 'x'.repeat(10));
    expect(lru.get('a')).toBe('x'.repeat(10));
    lru.set('d', 'x'.repeat(10));
    expect(lru.has('b')).toBe(false);
    expect(['a', 'c', 'd'].every((key) => lru.has(key))).toBe(true);
    expect(lru.bytes).toBe(30);
    lru.set('a', 'x'.repeat(25));
    expect(lru.bytes).toBeLessThanOrEqual(30);
    expect(lru.has('a')).toBe(true);
    lru.delete('a');
    expect(lru.bytes).toBe(0);
  });
});
