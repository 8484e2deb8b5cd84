// D36 through the pipeline: a user who goes silent leaves a `the_last` cohort at its deadline (the exit logged with
// no event, the size back to 0, the index entry gone), the same after a restart that finds the deadline overdue, and
// a new event moves the deadline (the old index entry is replaced, not left behind).

import { afterEach, describe, expect, it } from 'vitest';
import { MemoryStore } from '../../store/memory.js';
import { MapContexts, MapPlans, ORG, cohort, userId } from '../../../test/support/ingest.js';
import { openIngestPipeline, type IngestOptions, type Pipeline } from '../pipeline.js';
import { readTransitionLog } from '../../domain/reactions/log.js';
import type { NewEvent } from '../../domain/events/index.js';
import { randomUUID } from 'node:crypto';
import { waitUntil } from '../../../test/support/wait.js';

const WINDOW_MS = 1000;
const RECENT = cohort(1, { event: 'Pageview', during: { the_last: { value: 1, unit: 'seconds' } } });

let open: Pipeline[] = [];
afterEach(async () => {
  for (const pipeline of open) await pipeline.close();
  open = [];
});

async function start(store: MemoryStore, options: Partial<IngestOptions> = {}): Promise<Pipeline> {
  const pipeline = await openIngestPipeline({ store, plans: new MapPlans(ORG, [RECENT]), contexts: new MapContexts(), ...options });
  open.push(pipeline);
  return pipeline;
}

function pageview(timeMs: number): NewEvent {
  return { id: randomUUID(), name: 'Pageview', time: new Date(timeMs).toISOString(), timeMs, properties: {} };
}

async function deadlineKeys(store: MemoryStore): Promise<string[]> {
  const keys: string[] = [];
  for await (const [key] of store.iterate({ gte: 'dl!', lt: 'dl"' })) keys.push(key);
  return keys;
}

async function logged(store: MemoryStore): Promise<Array<[string | null, string]>> {
  const out: Array<[string | null, string]> = [];
  for await (const { entry } of readTransitionLog(store)) for (const t of entry.transitions) out.push([entry.event_id, `${t.kind}@${t.time}`]);
  return out;
}

describe('deadlines in the pipeline (D36)', () => {
  it('a silent user leaves a `the_last` cohort at its deadline: exit logged without an event, size 0, index empty', async () => {
    const store = new MemoryStore();
    const pipeline = await start(store);
    const t = Date.now();
    const event = pageview(t);
    const answer = await pipeline.append({ org: ORG, user: userId(1), events: [event] });
    expect(answer.memberships).toEqual([1]);
    expect(pipeline.audienceSize(ORG, 1)).toBe(1);
    expect(await deadlineKeys(store)).toHaveLength(1);
    await waitUntil(() => pipeline.audienceSize(ORG, 1) === 0, 'the exit at the deadline');
    expect(await logged(store)).toEqual([
      [event.id, `entered@${t}`],
      [null, `exited@${t + WINDOW_MS}`],
    ]);
    expect(await pipeline.membershipsOf(ORG, userId(1))).toEqual([]);
    await waitUntil(async () => (await deadlineKeys(store)).length === 0, 'the index entry to go');
    expect(pipeline.deadlineStats()?.evaluated).toBe(1);
  });

  it('a later event moves the deadline: one index entry, the exit at the later deadline', async () => {
    const store = new MemoryStore();
    const pipeline = await start(store);
    const t = Date.now();
    await pipeline.append({ org: ORG, user: userId(2), events: [pageview(t)] });
    const second = pageview(t + 100);
    await pipeline.append({ org: ORG, user: userId(2), events: [second] });
    // The ring holds both views; the deadline is the first one's expiry, then the second's.
    await waitUntil(() => pipeline.audienceSize(ORG, 1) === 0, 'the exit');
    const exits = (await logged(store)).filter(([, what]) => what.startsWith('exited'));
    expect(exits).toEqual([[null, `exited@${t + 100 + WINDOW_MS}`]]);
    await waitUntil(async () => (await deadlineKeys(store)).length === 0, 'the index to empty');
  });

  it('a deadline that passed while the service was down is evaluated at start, at the deadline instant', async () => {
    const store = new MemoryStore();
    const first = await start(store, { deadlines: false });
    const t = Date.now() - 60_000;
    await first.append({ org: ORG, user: userId(3), events: [pageview(t)] });
    await first.close();
    open = [];
    expect(await deadlineKeys(store)).toHaveLength(1);
    const second = await start(store);
    await waitUntil(async () => (await deadlineKeys(store)).length === 0, 'the overdue deadline');
    expect(second.audienceSize(ORG, 1)).toBe(0);
    expect((await logged(store)).at(-1)).toEqual([null, `exited@${t + WINDOW_MS}`]);
  });
});
