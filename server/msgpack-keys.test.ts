// Every map key reads back as written through the store's codec, the owners' messages and the cluster's codec,
// and a backup's file, `__proto__` included (msgpackr alone reads it as `__proto_`); bytes written before the escape
// read as before.

import { join } from 'node:path';
import { Packr } from 'msgpackr';
import { describe, expect, it } from 'vitest';
import { mapKeys, mayHoldProtoKeys, plainCodec } from './msgpack-keys.js';
import { concatValues, decodeFirstValue, decodeValue, decodeValueAt, decodeValues, encodeValue } from './store/values.js';
import { packMessage, unpackMessage } from './ingest/worker/messages.js';
import { openLevelStore } from './store/level.js';
import { restoreBackup, writeBackup } from './backup.js';
import { tempDir } from '../test/support/processes.js';

/** Keys msgpackr could confuse, and their neighbours. */
const KEYS = ['__proto__', '__proto_', '__proto___', '__proto', '__proto__\u0000', '__proto_\u0000\u0000', 'proto', '_proto__', '__proto__x', 'constructor', 'a'];

/** A value holding every key at the top, nested in an object and in a list of objects, in JSON.parse's own way. */
function sample(): Record<string, unknown> {
  const members = KEYS.map((key, i) => `${JSON.stringify(key)}: ${i}`).join(', ');
  return JSON.parse(`{${members}, "nested": {${members}, "deeper": {${members}}}, "list": [{${members}}, 1, "__proto__"]}`) as Record<string, unknown>;
}

/** Own keys in order, with their values, all the way down (what JSON.stringify would show and more). */
function shape(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(shape);
  if (typeof value !== 'object' || value === null) return value;
  if (value instanceof Uint8Array) return ['bytes', [...value]];
  expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
  return Object.keys(value).map((key) => [key, shape((value as Record<string, unknown>)[key])]);
}

describe('keys kept through msgpack', () => {
  it('msgpackr alone renames __proto__ (the reason for the escape)', () => {
    const packr = new Packr({ useRecords: false, mapsAsObjects: true });
    expect(Object.keys(packr.unpack(packr.pack(JSON.parse('{"__proto__": 1}'))) as object)).toEqual(['__proto_']);
  });

  it('the store codec reads back every key, in order, as an own property', () => {
    const value = sample();
    const bytes = encodeValue(value);
    expect(shape(decodeValue(bytes))).toEqual(shape(value));
    const decoded = decodeValue<Record<string, unknown>>(bytes);
    expect(Object.hasOwn(decoded, '__proto__')).toBe(true);
    expect(decoded['__proto__']).toBe(0);
    expect(Object.getPrototypeOf(decoded)).toBe(Object.prototype);
    expect(JSON.stringify(decoded)).toBe(JSON.stringify(value));
  });

  it('values laid one after another read back alike (decodeValues, decodeValueAt, decodeFirstValue)', () => {
    const values = [sample(), { plain: 1 }, sample()];
    const parts = values.map(encodeValue);
    const all = concatValues(parts);
    expect(decodeValues(all).map(shape)).toEqual(values.map(shape));
    const secondStart = (parts[0] as Uint8Array).byteLength;
    const thirdStart = secondStart + (parts[1] as Uint8Array).byteLength;
    expect(shape(decodeValueAt(all, thirdStart, all.byteLength))).toEqual(shape(values[2]));
    const first = decodeFirstValue(all, 0);
    expect(shape(first.value)).toEqual(shape(values[0]));
    expect(first.end).toBe(secondStart);
    expect(shape(decodeFirstValue(all, thirdStart).value)).toEqual(shape(values[2]));
    // A range is searched alone: the plain value between two with such keys holds none.
    expect(mayHoldProtoKeys(all, secondStart, thirdStart)).toBe(false);
    expect(mayHoldProtoKeys(all, 0, secondStart)).toBe(true);
    expect(mayHoldProtoKeys(all, thirdStart)).toBe(true);
  });

  it("the owners' messages and the cluster's codec read back every key", () => {
    const task = { groups: [{ users: [{ steps: [{ events: [{ name: 'x', properties: sample() }] }] }] }], state: new Uint8Array([1, 2, 3]) };
    expect(shape(unpackMessage(packMessage(task)))).toEqual(shape(task));
    const codec = plainCodec();
    expect(shape(codec.unpack(codec.pack(task)))).toEqual(shape(task));
  });

  it('bytes written before the escape read as they always did', () => {
    const old = new Packr({ useRecords: false, mapsAsObjects: true });
    expect(decodeValue(old.pack(JSON.parse('{"__proto__": 1, "__proto_": 2, "a": {"__proto___": 3}}')))).toEqual({ __proto_: 2, a: { __proto___: 3 } });
  });

  it('values without such keys are encoded exactly as msgpackr encodes them, and decoded without a walk', () => {
    const plain = new Packr({ useRecords: false, mapsAsObjects: true });
    const value = { name: 'Pageview', properties: { proto: '__proto', list: [{ a: 1 }] }, bytes: new Uint8Array([95, 95]) };
    const bytes = encodeValue(value);
    expect(Buffer.from(bytes).equals(Buffer.from(plain.pack(value)))).toBe(true);
    expect(mayHoldProtoKeys(bytes)).toBe(false);
    expect(mayHoldProtoKeys(encodeValue({ text: 'a __proto_ in a value' }))).toBe(true);
    expect(decodeValue(encodeValue({ text: 'a __proto_ in a value' }))).toEqual({ text: 'a __proto_ in a value' });
  });

  it('mapKeys copies only what changed and leaves binary and class instances whole', () => {
    const bytes = new Uint8Array([1]);
    const date = new Date(0);
    const value = { a: { b: 1 }, c: [bytes, date], d: { __proto_: 1 } };
    const mapped = mapKeys(value, (key) => (key === '__proto_' ? 'renamed' : key)) as typeof value & { d: Record<string, unknown> };
    expect(mapped).not.toBe(value);
    expect(mapped.a).toBe(value.a);
    expect(mapped.c).toBe(value.c);
    expect(mapped.d).toEqual({ renamed: 1 });
    expect(mapKeys(value, (key) => key)).toBe(value);
  });
});

describe('a backup and its restore keep every key', () => {
  it('a stored value with __proto__ keys reads back the same from the restored directory', async () => {
    const dir = await tempDir('audience-proto-backup-');
    try {
      const store = await openLevelStore(join(dir.path, 'a'));
      const value = sample();
      await store.batch([{ type: 'put', key: 'e!x', value }]);
      const file = join(dir.path, 'copy.backup');
      await writeBackup(store, file);
      await store.close();
      expect(await restoreBackup(file, join(dir.path, 'b'))).toBe(1);
      const restored = await openLevelStore(join(dir.path, 'b'));
      expect(shape(await restored.get('e!x'))).toEqual(shape(value));
      await restored.close();
    } finally {
      await dir.remove();
    }
  });
});
