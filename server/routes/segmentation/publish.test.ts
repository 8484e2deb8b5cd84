// The publication after the reply (D24) is bounded: past its capacity in waiting events, new calls wait for room.

import { describe, expect, it } from 'vitest';
import { Publisher } from './publish.js';
import type { SchemaRegistry } from '../../domain/schemas/index.js';
import type { IngestPipeline, NewEvent } from '../../ingest/types.js';

describe('Publisher backlog (D24)', () => {
  it('answers room at once below capacity, a promise at capacity that resolves once publications finish', async () => {
    const releases: Array<() => void> = [];
    const appended: number[] = [];
    const pipeline = {
      append: async ({ events }: { events: readonly NewEvent[] }) => {
        await new Promise<void>((resolve) => releases.push(resolve));
        appended.push(events.length);
        return { memberships: [] };
      },
    } as unknown as IngestPipeline;
    const schemas = { check: async () => [], invalidate: () => undefined } as unknown as SchemaRegistry;
    const publisher = new Publisher({ schemas, pipeline, log: () => undefined, capacity: 4 });
    const events = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `e${i}`, name: 'Pageview', time: '2026-01-01T00:00:00Z', properties: {} })) as unknown as NewEvent[];
    expect(publisher.room()).toBeUndefined();
    publisher.publishLater({ org: 'o', user: 'a', events: events(2) });
    expect(publisher.room()).toBeUndefined();
    publisher.publishLater({ org: 'o', user: 'b', events: events(2) });
    expect(publisher.pendingEvents).toBe(4);
    const room = publisher.room();
    expect(room).toBeInstanceOf(Promise);
    let admitted = false;
    void room?.then(() => (admitted = true));
    while (releases.length < 2) await new Promise((resolve) => setImmediate(resolve));
    expect(admitted).toBe(false);
    releases.shift()?.();
    await room;
    expect(admitted).toBe(true);
    releases.shift()?.();
    await publisher.published('o');
    expect(publisher.pendingEvents).toBe(0);
    expect(appended).toEqual([2, 2]);
    expect(publisher.stats('o').published).toBe(4);
  });
});
