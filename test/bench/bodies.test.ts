// The benchmark's request bodies: stable seeded UUID v4 users, realistic sizes, and property types that never change
// per event name (D30: a type change would be a 1007 and turn the benchmark into an error benchmark).

import { describe, expect, it } from 'vitest';
import { StatelessBodies, TrackBodies, userIdOf } from '../../bench/workload/bodies.js';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

function typeOf(value: unknown): string {
  if (Array.isArray(value)) return `list<${[...new Set(value.map(typeOf))].join('|')}>`;
  if (value === null) return 'null';
  if (typeof value === 'object') return `{${Object.entries(value as object).map(([k, v]) => `${k}:${typeOf(v)}`).sort().join(',')}}`;
  return typeof value;
}

describe('bench request bodies', () => {
  it('derives the same UUID v4 for the same (seed, user) and different ones otherwise', () => {
    expect(userIdOf(42, 7)).toBe(userIdOf(42, 7));
    expect(userIdOf(42, 7)).not.toBe(userIdOf(42, 8));
    expect(userIdOf(42, 7)).not.toBe(userIdOf(43, 7));
    for (let i = 0; i < 100; i++) expect(userIdOf(42, i)).toMatch(UUID_V4);
  });

  it('makes 300-650-byte track bodies, by user_id or alias, with one type per property per event name (D29, D30)', () => {
    const bodies = new TrackBodies(42, 1_000);
    const types = new Map<string, string>();
    let byAlias = 0;
    for (let k = 0; k < 2_000; k++) {
      const text = bodies.next();
      expect(Buffer.byteLength(text)).toBeGreaterThanOrEqual(300);
      expect(Buffer.byteLength(text)).toBeLessThanOrEqual(650);
      const body = JSON.parse(text) as { name: string; user_id?: string; aliases?: unknown[]; properties: Record<string, unknown> };
      if (body.aliases !== undefined) byAlias++;
      else expect(body.user_id).toMatch(UUID_V4);
      for (const [key, value] of Object.entries(body.properties)) {
        const shape = key === 'tags' ? 'list<string>' : key === 'items' ? 'list<{key:string,n:number}>' : typeOf(value);
        const seen = types.get(`${body.name}.${key}`);
        if (seen === undefined) types.set(`${body.name}.${key}`, shape);
        else expect(shape).toBe(seen);
      }
    }
    expect(byAlias).toBeGreaterThan(200);
    expect(byAlias).toBeLessThan(800);
  });

  it('makes stateless bodies of 10 timed events for one user, passing the state back unchanged', () => {
    const bodies = new StatelessBodies(42, 10);
    const state = '{"internal_state":{"v":1},"external_state":{},"cohorts":[]}';
    const body = JSON.parse(bodies.withState(userIdOf(42, 1), state)) as { user_id: string; events: Array<{ name: string; time: string }>; state: unknown };
    expect(body.user_id).toBe(userIdOf(42, 1));
    expect(body.events).toHaveLength(10);
    for (const event of body.events) expect(Number.isNaN(Date.parse(event.time))).toBe(false);
    expect(body.state).toEqual(JSON.parse(state));
  });
});
