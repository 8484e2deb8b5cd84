// D39 end to end: `GET /v2.0/events` pages exactly through `Link: <...&cursor=...>; rel="next"`, ties in time
// included, keeping the other query parameters (from/to keep their meaning, D29); a malformed cursor is 400 1002.

import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runLimited, startIdentityHarness, type HttpAnswer, type IdentityHarness } from './support-identity.js';

interface WireEvent {
  id: string;
  time: string;
  properties: Record<string, unknown>;
}

let h: IdentityHarness;
beforeAll(async () => {
  h = await startIdentityHarness();
});
afterAll(async () => {
  await h?.close();
});

const BASE = Date.parse('2025-03-01T00:00:00.000Z');
/** 2,500 events in four milliseconds: 700 + 700 + 700 + 400, so every page boundary falls inside a tie. */
const TIMES = [700, 700, 700, 400].flatMap((count, ms) => Array.from({ length: count }, () => BASE + ms));

const track = (body: unknown) => h.call<WireEvent>('POST', '/v2.0/events', { key: h.keys.public_key, body });
const get = (path: string) => h.call<WireEvent[]>('GET', path, { key: h.keys.public_key });

/** The target of a `Link: <target>; rel="next"` header, or undefined when there is none. */
function nextOf(answer: HttpAnswer<unknown>): string | undefined {
  const link = answer.headers['link'];
  if (link === undefined) return undefined;
  const match = /^<([^>]+)>; rel="next"$/.exec(String(link));
  if (match === null) throw new Error(`not a next link: ${String(link)}`);
  return match[1];
}

function withoutKey(path: string): string {
  const url = new URL(path, 'http://localhost');
  url.searchParams.delete('k');
  return `${url.pathname}${url.search}`;
}

/** Follows next links from `first` until there is none (at most `maxPages`); answers every page's events. */
async function walk(first: string, maxPages: number): Promise<{ pages: WireEvent[][]; links: string[] }> {
  const pages: WireEvent[][] = [];
  const links: string[] = [];
  let path: string | undefined = first;
  while (path !== undefined) {
    if (pages.length >= maxPages) throw new Error(`more than ${maxPages} pages`);
    const answer = await get(path);
    expect(answer.status).toBe(200);
    pages.push(answer.body);
    const next = nextOf(answer);
    if (next !== undefined) links.push(next);
    // The harness adds the key as `k` to every path it is given; the link already carries it.
    path = next === undefined ? undefined : withoutKey(next);
  }
  return { pages, links };
}

describe('GET /v2.0/events paging (D39)', () => {
  const user = randomUUID();
  const sent = new Map<string, number>(); // event id -> time ms
  beforeAll(async () => {
    await runLimited(TIMES.length, 64, async (index) => {
      const id = randomUUID();
      const time = TIMES[index] as number;
      const answer = await track({ id, user_id: user, name: 'Tick', time: new Date(time).toISOString(), properties: { n: index } });
      expect(answer.status).toBe(200);
      sent.set(id, time);
    });
  }, 120_000);

  it('following Link reaches every event exactly once though many share the boundary millisecond', async () => {
    const { pages, links } = await walk(`/v2.0/events?user_id=${user}`, 10);
    expect(pages.map((page) => page.length)).toEqual([1000, 1000, 500]);
    const ids = pages.flat().map((event) => event.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.length).toBe(TIMES.length);
    expect(new Set(ids)).toEqual(new Set(sent.keys()));
    const times = pages.flat().map((event) => Date.parse(event.time));
    expect(times).toEqual([...times].sort((a, b) => a - b));
    // The other parameters as sent (this harness authenticates with `k` in the query), then the opaque cursor.
    for (const link of links) expect(link).toMatch(new RegExp(`^/v2\\.0/events\\?user_id=${user}&k=[0-9a-f-]+&cursor=[A-Za-z0-9_-]+$`));
  });

  it('keeps from (exclusive) and to (inclusive) across pages; the last page has no Link', async () => {
    const from = encodeURIComponent(new Date(BASE).toISOString());
    const to = encodeURIComponent(new Date(BASE + 2).toISOString());
    const { pages, links } = await walk(`/v2.0/events?user_id=${user}&from=${from}&to=${to}`, 10);
    expect(pages.map((page) => page.length)).toEqual([1000, 400]);
    expect(links).toHaveLength(1);
    expect(links[0]).toContain(`from=${from}`);
    expect(links[0]).toContain(`to=${to}`);
    const ids = pages.flat().map((event) => event.id);
    const expected = [...sent].filter(([, time]) => time > BASE && time <= BASE + 2).map(([id]) => id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(new Set(ids)).toEqual(new Set(expected));
  });

  it('a single page has no Link', async () => {
    const answer = await get(`/v2.0/events?user_id=${user}&from=${encodeURIComponent(new Date(BASE + 2).toISOString())}`);
    expect(answer.body).toHaveLength(400);
    expect(answer.headers['link']).toBeUndefined();
  });

  it.each(['not-a-cursor!', 'AAAA', Buffer.from('00000000000000!zz').toString('base64url'), ''.padEnd(40, 'A')])(
    'a malformed cursor %j is 400 code 1002',
    async (cursor) => {
      const answer = await get(`/v2.0/events?user_id=${user}&cursor=${encodeURIComponent(cursor)}`);
      expect(answer.status).toBe(400);
      expect((answer.body as unknown as { error: { code: number } }).error.code).toBe(1002);
    },
  );
});
