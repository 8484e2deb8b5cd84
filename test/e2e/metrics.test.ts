// `GET /metrics` (operations.md, second round): Prometheus text without a key; after known traffic the counters moved
// by exactly that much (requests by route and status, stored events, transitions, D24's dropped events), the
// gauges are there, and `metrics: false` (serve --metrics off) answers 404.

import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/service.js';

let h: TestService | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** The value of one sample (`name{labels} value`), 0 when absent. */
function sample(text: string, name: string, labels = ''): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels === '' ? '' : `{${labels}}`} `));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe('GET /metrics', () => {
  it('is Prometheus text without a key; counters move by the traffic sent', async () => {
    const service = (h = await startTestService());
    const scrape = async () => {
      const response = await service.request('GET', '/metrics', { key: null });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
      return response.text();
    };
    const created = await service.json<{ id: string }>('POST', '/cohorts-api/v2/cohorts', { body: { name: 'Viewers', query: { event: 'Pageview' } } });
    expect(created.status).toBe(201);
    const before = await scrape();
    const user = randomUUID();
    for (let i = 0; i < 3; i++) {
      const answer = await service.json('POST', '/v2.0/events', { key: service.keys.public_key, body: { user_id: user, name: 'Pageview', properties: {} } });
      expect(answer.status).toBe(200);
    }
    expect((await service.json('GET', '/no/such/route')).status).toBe(404);
    // A client may send any method token: each is counted as `other`, so the labels stay bounded.
    for (const method of ['BREW', 'CONSTRUCTOR', `X${randomUUID().replace(/-/g, '').toUpperCase()}`]) {
      expect((await service.request(method, '/v2.0/events', { key: null })).status).toBe(405);
    }
    expect((await service.json('POST', '/v2.0/events', { key: service.keys.public_key, body: { name: 'Pageview' } })).status).toBe(400);
    // D24: a stateless call whose event does not fit its schema (seconds was a number) drops it after the reply.
    await service.json('POST', '/ccs/v1/segmentation', { body: { user_id: randomUUID(), events: [{ name: 'Video', time: new Date().toISOString(), properties: { seconds: 1 } }] } });
    const stateless = await service.json('POST', '/ccs/v1/segmentation/stateless', { body: { user_id: randomUUID(), events: [{ name: 'Video', time: new Date().toISOString(), properties: { seconds: 'long' } }] } });
    expect(stateless.status).toBe(200);
    await expect.poll(async () => sample(await scrape(), 'audience_events_dropped_total'), { timeout: 5000 }).toBe(sample(before, 'audience_events_dropped_total') + 1);

    const after = await scrape();
    const moved = (name: string, labels = '') => sample(after, name, labels) - sample(before, name, labels);
    expect(moved('audience_http_requests_total', 'route="/v2.0/events",method="POST",status="200"')).toBe(3);
    expect(moved('audience_http_requests_total', 'route="/v2.0/events",method="POST",status="400"')).toBe(1);
    expect(moved('audience_http_requests_total', 'route="unmatched",method="GET",status="404"')).toBe(1);
    expect(moved('audience_http_requests_total', 'route="unmatched",method="other",status="405"')).toBe(3);
    expect(after).not.toMatch(/method="(BREW|CONSTRUCTOR|X[0-9A-F]{32}|function[^"]*)"/);
    // Three tracked events, the stateful call's one and the stateless call's none (its only event was dropped).
    expect(moved('audience_ingest_events_total')).toBe(4);
    expect(moved('audience_transitions_total', 'kind="entered"')).toBe(1);
    // A user's first state is snapshotted when a cohort has a generation (the one created above): the tracked user's and
    // the stateful call's user's; the tracked user's later events are not due (snapshotEvery, 10 minutes).
    expect(moved('audience_state_snapshots_total')).toBe(2);
    // Groups share a store batch only when built during another's write: never more batches than groups.
    expect(moved('audience_ingest_store_batches_total')).toBeGreaterThanOrEqual(3);
    expect(moved('audience_ingest_store_batches_total')).toBeLessThanOrEqual(moved('audience_ingest_ticks_total'));
    // No user of this test reached --fold-every's 32 events: the counter is exposed, at 0 (its counts: pipeline.test.ts).
    expect(sample(after, 'audience_ingest_events_folded_total')).toBe(0);
    for (const gauge of ['audience_lane_queue_depth', 'audience_state_cache_bytes', 'audience_stream_clients', 'audience_store_bytes', 'audience_store_memory_bytes', 'audience_deadlines_in_flight', 'audience_backfill_users_remaining']) {
      expect(after).toMatch(new RegExp(`^${gauge} \\d+`, 'm'));
    }
    expect(sample(after, 'audience_store_bytes')).toBeGreaterThan(0);
    expect(sample(after, 'audience_store_memory_bytes')).toBeGreaterThan(0);
    expect(after).toContain('audience_ingest_tick_duration_seconds_bucket');
    // Every committed group is observed once per phase, and its phases add up to its time from start to commit.
    const phases = ['reads', 'compute', 'build', 'write'];
    for (const phase of phases) {
      expect(moved('audience_ingest_group_phase_seconds_count', `phase="${phase}"`)).toBe(moved('audience_ingest_ticks_total'));
    }
    const phaseSum = phases.reduce((sum, phase) => sum + sample(after, 'audience_ingest_group_phase_seconds_sum', `phase="${phase}"`), 0);
    expect(sample(after, 'audience_ingest_group_phase_seconds_sum', 'phase="compute"')).toBeGreaterThan(0);
    expect(phaseSum).toBeCloseTo(sample(after, 'audience_ingest_tick_duration_seconds_sum'), 6);
  });

  it('is absent when turned off', async () => {
    h = await startTestService({ metrics: false });
    expect((await h.request('GET', '/metrics', { key: null })).status).toBe(404);
  });
});
