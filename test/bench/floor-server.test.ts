// bench/floor-server.ts: the floor the ingestion target is judged against stores every track call it answers 200
// (one key per event, its record in msgpack), answers bad bodies 400 without storing them, and with `--engine`
// segments each event against a resident state. Its stateless calls answer the cohorts and a state the next call can
// pass back, and publish their events (stored, and segmented against the user's resident state).

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Level } from 'level';
import { unpack } from 'msgpackr';
import { afterEach, describe, expect, it } from 'vitest';
import { startFloor, type Running } from '../../bench/processes.js';

const dirs: string[] = [];
const servers: Running[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.stop();
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function post(url: string, body: string): Promise<{ status: number; text: string }> {
  const response = await fetch(`${url}/v2.0/events`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  return { status: response.status, text: await response.text() };
}

async function storedRecords(dir: string): Promise<{ key: string; value: { id: string; name: string; time: number; properties: Record<string, unknown> } }[]> {
  const db = new Level<string, Uint8Array>(dir, { keyEncoding: 'utf8', valueEncoding: 'view' });
  await db.open();
  try {
    const out = [];
    for await (const [key, value] of db.iterator()) out.push({ key, value: unpack(value) as { id: string; name: string; time: number; properties: Record<string, unknown> } });
    return out;
  } finally {
    await db.close();
  }
}

describe('the floor server', () => {
  for (const args of [[], ['--engine']]) {
    it(`stores each event it answers 200, and nothing it answers 400 (${args.join(' ') || 'store only'})`, async () => {
      const dir = await mkdtemp(join(tmpdir(), 'audience-floor-test-'));
      dirs.push(dir);
      const server = await startFloor(dir, args);
      servers.push(server);
      const calls = [
        post(server.url, '{"user_id":"u1","name":"Pageview","properties":{"url":"https://a.example/x"}}'),
        post(server.url, '{"user_id":"u1","name":"Buy","properties":{"price":3}}'),
        post(server.url, '{"aliases":[{"id":"reader1@bench.example","tag":"email","priority":1}],"name":"Click"}'),
      ];
      for (const answer of await Promise.all(calls)) expect(answer).toEqual({ status: 200, text: '{"ok":true}' });
      expect((await post(server.url, '{"user_id":')).status).toBe(400);
      expect((await post(server.url, '{"user_id":"u2"}')).status).toBe(400);
      expect((await fetch(`${server.url}/v2.0/other`, { method: 'POST', body: '{}' })).status).toBe(404);
      // Users: u1 and the alias's own (no binding); segmented only with --engine.
      expect(((await (await fetch(`${server.url}/stats`)).json()) as { states: number }).states).toBe(args.includes('--engine') ? 2 : 0);
      servers.pop();
      await server.stop();

      const records = await storedRecords(dir);
      expect(records.map((r) => r.value.name).sort()).toEqual(['Buy', 'Click', 'Pageview']);
      const u1 = records.filter((r) => r.key.startsWith('e!u1!'));
      expect(u1.map((r) => r.value.name).sort()).toEqual(['Buy', 'Pageview']);
      for (const { key, value } of records) {
        expect(key.endsWith(`!${value.id}`)).toBe(true);
        expect(typeof value.time).toBe('number');
      }
      expect(u1.find((r) => r.value.name === 'Buy')?.value.properties).toEqual({ price: 3 });
    }, 60_000);
  }

  it('answers stateless calls from the state passed back, and publishes their events', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'audience-floor-test-'));
    dirs.push(dir);
    const server = await startFloor(dir, []);
    servers.push(server);
    const call = async (body: string): Promise<{ status: number; json: { user_id?: string; cohorts?: number[]; state?: string } }> => {
      const response = await fetch(`${server.url}/ccs/v1/segmentation/stateless`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      return { status: response.status, json: (await response.json()) as { user_id?: string; cohorts?: number[]; state?: string } };
    };
    const events = (from: number): string =>
      JSON.stringify(Array.from({ length: 5 }, (_, i) => ({ name: 'Pageview', time: new Date(Date.UTC(2026, 11, 4, 12, 0, from + i)).toISOString(), properties: { url: `https://a.example/${i}` } })));
    const first = await call(`{"user_id":"u1","events":${events(0)}}`);
    expect(first.status).toBe(200);
    expect(first.json.user_id).toBe('u1');
    expect(Array.isArray(first.json.cohorts)).toBe(true);
    expect(typeof first.json.state).toBe('string');
    const second = await call(`{"user_id":"u1","events":${events(5)},"state":${JSON.stringify(first.json.state)}}`);
    expect(second.status).toBe(200);
    // The state passed back carries the first call's five events: a state of ten, not of five from scratch.
    const fresh = await call(`{"user_id":"u9","events":${events(5)}}`);
    expect(second.json.state).not.toBe(fresh.json.state);
    for (const bad of ['{"user_id":"u1"}', '{"user_id":"u1","events":[]}', '{"user_id":"u1","events":[{"time":"2026-12-04T12:00:00Z"}]}', `{"user_id":"u1","events":${events(0)},"state":"AAAA"}`]) {
      expect((await call(bad)).status).toBe(400);
    }
    // Published: u1's ten events and u9's five, stored and segmented against resident states.
    expect(await (await fetch(`${server.url}/stats`)).json()).toMatchObject({ states: 2, published: 15 });
    servers.pop();
    await server.stop();
    const records = await storedRecords(dir);
    expect(records.filter((r) => r.key.startsWith('e!u1!')).length).toBe(10);
    expect(records.filter((r) => r.key.startsWith('e!u9!')).length).toBe(5);
  }, 60_000);

  it('segments each event against a resident state with --engine', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'audience-floor-test-'));
    dirs.push(dir);
    const server = await startFloor(dir, ['--engine']);
    servers.push(server);
    const stats = async (): Promise<unknown> => (await fetch(`${server.url}/stats`)).json();
    expect(await stats()).toEqual({ states: 0, transitions: 0, published: 0 });
    expect((await post(server.url, '{"user_id":"u1","name":"Pageview","properties":{"url":"https://a.example/x"}}')).status).toBe(200);
    expect((await post(server.url, '{"user_id":"u2","name":"Pageview","properties":{"url":"https://a.example/y"}}')).status).toBe(200);
    const after = (await stats()) as { states: number; transitions: number };
    expect(after.states).toBe(2);
    // A first event enters cohorts of the bench's 100 (those with a "has not" or "at most" clause, say).
    expect(after.transitions).toBeGreaterThan(0);
  }, 60_000);
});
