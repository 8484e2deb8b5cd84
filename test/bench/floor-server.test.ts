// bench/floor-server.ts: the floor the ingestion target is judged against stores every track call it answers 200
// (one key per event, its record in msgpack), answers bad bodies 400 without storing them, and with `--engine`
// segments each event against a resident state.

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

  it('segments each event against a resident state with --engine', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'audience-floor-test-'));
    dirs.push(dir);
    const server = await startFloor(dir, ['--engine']);
    servers.push(server);
    const stats = async (): Promise<unknown> => (await fetch(`${server.url}/stats`)).json();
    expect(await stats()).toEqual({ states: 0, transitions: 0 });
    expect((await post(server.url, '{"user_id":"u1","name":"Pageview","properties":{"url":"https://a.example/x"}}')).status).toBe(200);
    expect((await post(server.url, '{"user_id":"u2","name":"Pageview","properties":{"url":"https://a.example/y"}}')).status).toBe(200);
    const after = (await stats()) as { states: number; transitions: number };
    expect(after.states).toBe(2);
    // A first event enters cohorts of the bench's 100 (those with a "has not" or "at most" clause, say).
    expect(after.transitions).toBeGreaterThan(0);
  }, 60_000);
});
