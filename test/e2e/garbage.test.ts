// Issue 5: random garbage bodies on every route get 4xx (never 5xx, never a hang) and the server stays healthy.
// Seeded, so a failure names a reproducible body; real resources exist so garbage reaches deep validation paths.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/service.js';
import { createRng, type Rng } from '../differential/random.js';

let service: TestService;
const ids: Record<string, string> = {};

beforeAll(async () => {
  service = await startTestService();
  const cohort = await service.json<{ id: string }>('POST', '/cohorts-api/v2/cohorts', {
    body: { name: 'Viewers', query: { event: 'Pageview' } },
  });
  const imported = await service.json<{ id: string }>('POST', '/audience-api/v1/imports', {
    body: { name: 'Sports data', code: 'sportsdata', relation: '3rd', kind: 'segments' },
  });
  const connections = await service.json<{ id: string }>('POST', '/audience-api/v1/imports', {
    body: { name: 'CRM', code: 'crm', relation: '2nd', kind: 'connections', schema: { plan: 'string', seats: 'number' } },
  });
  const segment = await service.json<{ id: string }>('POST', `/audience-api/v1/imports/${imported.body.id}/segments`, {
    body: { name: 'Fans', code: 'fans' },
  });
  const user = await service.json<{ id: string }>('POST', '/v2.0/users', { key: service.keys.public_key });
  for (const [name, response] of Object.entries({ cohort, imported, connections, segment, user })) {
    expect(response.status, name).toBeLessThan(300);
    ids[name] = response.body.id;
  }
});

afterAll(async () => {
  await service?.close();
});

const RANDOM_ID = '9b2f6a1e-3c4d-4e5f-8a7b-1c2d3e4f5a6b';

/** Every route of the service, with real ids where a real resource makes the garbage reach deeper. */
function routes(): Array<[method: string, path: string]> {
  const imp = `/audience-api/v1/imports/${ids['imported']}`;
  return [
    ['POST', '/admin/v1/workspaces'],
    ['GET', '/admin/v1/workspaces'],
    ['POST', '/admin/v1/keys'],
    ['GET', '/admin/v1/keys'],
    ['DELETE', `/admin/v1/keys/${RANDOM_ID}`],
    ['GET', '/cohorts-api/v2/cohorts'],
    ['POST', '/cohorts-api/v2/cohorts'],
    ['GET', `/cohorts-api/v2/cohorts/${ids['cohort']}`],
    ['PATCH', `/cohorts-api/v2/cohorts/${ids['cohort']}`],
    ['DELETE', `/cohorts-api/v2/cohorts/${RANDOM_ID}`],
    ['POST', '/ccs/v1/segmentation/stateless'],
    ['POST', '/ccs/v1/segmentation/stateless?synchronous-validation=true'],
    ['POST', '/ccs/v1/segmentation'],
    ['POST', '/v2.0/users'],
    ['POST', '/v2.0/identify'],
    ['GET', `/v2.0/users/${ids['user']}/aliases`],
    ['POST', `/v2.0/users/${ids['user']}/aliases`],
    ['POST', '/v2.0/events'],
    ['GET', `/v2.0/events?user_id=${ids['user']}`],
    ['POST', '/audience-api/v1/imports'],
    ['GET', '/audience-api/v1/imports'],
    ['GET', imp],
    ['POST', `${imp}/segments`],
    ['GET', `${imp}/segments`],
    ['PATCH', `${imp}/segments`],
    ['GET', `${imp}/segments/${ids['segment']}`],
    ['PATCH', `${imp}/segments/${ids['segment']}`],
    ['DELETE', `${imp}/segments/${RANDOM_ID}`],
    ['GET', `${imp}/segments/code/fans`],
    ['PATCH', `${imp}/segments/code/fans`],
    ['DELETE', `${imp}/segments/code/no-such-code`],
    ['POST', `${imp}/segments/code/fans/members`],
    ['POST', `/audience-api/v1/imports/${ids['connections']}/rows`],
  ];
}

/** Bodies shaped like the real ones, so that mutations land on fields validators care about. */
const SHAPES: unknown[] = [
  { name: 'Pageview', user_id: RANDOM_ID, properties: { client: { url: 'https://x' } } },
  { name: 'c', query: { and: [{ event: 'Pageview', frequency: { greater_than: 2 }, during: { the_last: { value: 1, unit: 'days' } } }] } },
  { user_id: RANDOM_ID, events: [{ name: 'Pageview', time: '2026-01-01T00:00:00Z', properties: {} }], state: { internal_state: { v: 1, s: 'AA==', sig: 'x' } } },
  { user_id: RANDOM_ID, aliases: [{ id: 'a', tag: 'email', priority: 0 }] },
  { add: [{ user_id: RANDOM_ID }, { alias: { tag: 'email', id: 'x' } }], remove: [] },
  [{ user_id: RANDOM_ID, time: '2026-01-01T00:00:00Z', properties: { plan: 'pro', seats: 3 } }],
  { operations: [{ operation: 'Create', name: 'n', code: 'c' }, { operation: 'Delete', code: 'fans' }] },
  { workspace_id: RANDOM_ID, type: 'public', name: 'k', parent_id: RANDOM_ID },
];

function randomJson(rng: Rng, depth: number): unknown {
  const pick = rng.int(0, depth > 3 ? 5 : 8);
  switch (pick) {
    case 0: return null;
    case 1: return rng.next() < 0.5;
    case 2: return [0, -1, 1e308, -0, 3.5, Number.MAX_SAFE_INTEGER + 2, 1e-300][rng.int(0, 6)];
    case 3: return ['', 'Pageview', '\u0000', '\ud800', '😀'.repeat(3), 'x'.repeat(70_000), '2026-13-45T99:99:99Z', '__proto__'][rng.int(0, 7)];
    case 4: return RANDOM_ID;
    case 5: return 'properties.a.b';
    case 6: return Array.from({ length: rng.int(0, 4) }, () => randomJson(rng, depth + 1));
    default: {
      const object: Record<string, unknown> = {};
      const keys = ['name', 'query', 'events', 'state', 'user_id', 'aliases', 'alias', 'properties', 'time', 'add', 'operations', 'and', 'or', 'event', '__proto__', 'constructor', 'code'];
      for (let i = rng.int(0, 4); i > 0; i--) object[keys[rng.int(0, keys.length - 1)] as string] = randomJson(rng, depth + 1);
      return object;
    }
  }
}

function mutate(rng: Rng, value: unknown, depth = 0): unknown {
  if (depth > 6 || value === null || typeof value !== 'object') return rng.next() < 0.3 ? randomJson(rng, depth) : value;
  if (Array.isArray(value)) return value.map((item) => (rng.next() < 0.3 ? randomJson(rng, depth) : mutate(rng, item, depth + 1)));
  const copy: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const roll = rng.next();
    if (roll < 0.15) continue;
    copy[k] = roll < 0.4 ? randomJson(rng, depth + 1) : mutate(rng, v, depth + 1);
  }
  return copy;
}

function garbageBody(rng: Rng): string | Uint8Array<ArrayBuffer> {
  const kind = rng.int(0, 6);
  const shape = SHAPES[rng.int(0, SHAPES.length - 1)];
  switch (kind) {
    case 0: return new Uint8Array(Array.from({ length: rng.int(1, 400) }, () => rng.int(0, 255)));
    case 1: {
      const text = JSON.stringify(shape);
      return text.slice(0, rng.int(1, text.length - 1));
    }
    case 2: return JSON.stringify(randomJson(rng, 0));
    case 3: return '['.repeat(20_000) + ']'.repeat(20_000);
    case 4: return JSON.stringify({ where: { and: [{ and: [{ or: [] }] }] }, query: '{'.repeat(5) });
    default: return JSON.stringify(mutate(rng, shape));
  }
}

describe('garbage bodies on every route (issue 5)', () => {
  it('answers every one below 500 and stays healthy', async () => {
    const rng = createRng(20261120);
    const failures: string[] = [];
    let sent = 0;
    for (let round = 0; round < 10; round++) {
      for (const [method, path] of routes()) {
        const body = garbageBody(rng);
        const keyRoll = rng.next();
        const key = keyRoll < 0.8 ? service.keys.private_key : keyRoll < 0.9 ? service.keys.public_key : 'not-a-key';
        const response = await fetch(`${service.url}${path}`, {
          method,
          headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
          body: method === 'GET' ? undefined : body,
        });
        const text = await response.text();
        sent++;
        if (response.status >= 500) {
          const shown = typeof body === 'string' ? body.slice(0, 300) : `<${body.length} random bytes>`;
          failures.push(`${method} ${path} -> ${response.status} ${text.slice(0, 200)} for body ${shown}`);
        }
      }
    }
    expect(sent).toBeGreaterThanOrEqual(300);
    expect(failures).toEqual([]);

    const health = await fetch(`${service.url}/healthz`);
    expect(health.status).toBe(200);
    const tracked = await service.json('POST', '/v2.0/events', {
      key: service.keys.public_key,
      body: { name: 'Pageview', user_id: ids['user'], properties: {} },
    });
    expect(tracked.status).toBe(200);
  });
});
