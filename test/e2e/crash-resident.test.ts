// Crash safety with states resident in the partition owners (server/ingest/README.md): two owner threads, a state
// cache far smaller than the users (so states are evicted, snapshotted by their owners and loaded again all the
// time), many users and cohorts, a stream of track calls, SIGKILL after the Nth acknowledgement while others are in
// flight. After a restart on the same directory every acknowledged event is readable, and every user's memberships,
// the state behind them (one more event moves each user exactly as a recomputation says) and every cohort's size
// equal a recomputation from the stored events. Needs `npm run build` (npm test does it).

import { randomUUID } from 'node:crypto';
import { Agent } from 'node:http';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isEncodedBlock } from '../../server/domain/events/blocks.js';
import { openLevelStore } from '../../server/store/level.js';
import { runCliProcess, tempDir } from '../support/processes.js';
import { call, listeningUrl, serve, streamUntilKill, type WireEvent } from './support-crash.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const USERS = 120;
const ACKS_BEFORE_KILL = 1500;
const CONCURRENCY = 24;
/** Cohorts by event name and how many of them make a member (all-time frequency: a recomputation is a count). */
const COHORTS = [
  { name: 'Pageview', atLeast: 8 },
  { name: 'Click', atLeast: 4 },
  { name: 'Buy', atLeast: 1 },
] as const;
/** The event of the i-th call: 6 Pageviews, 3 Clicks and 1 Buy in every 10 (spread over users by `USERS`). */
const nameOf = (i: number): string => ((i * 7) % 10 < 6 ? 'Pageview' : (i * 7) % 10 < 9 ? 'Click' : 'Buy');

/** Cohort indexes a user with these events is in. */
function expectedMemberships(events: readonly { name: string }[]): number[] {
  return COHORTS.flatMap((cohort, i) => (events.filter((event) => event.name === cohort.name).length >= cohort.atLeast ? [i] : []));
}

describe('kill -9 under load with resident states, two owners and a small state cache', () => {
  it('keeps every acknowledged event, and every membership, state and size equal to a recomputation', async () => {
    const dir = await tempDir('audience-crash-resident-');
    cleanups.push(dir.remove);
    const data = join(dir.path, 'data');
    const init = await runCliProcess(['init', '--data', data, '--json']);
    expect(init.code).toBe(0);
    const keys = JSON.parse(init.stdout) as { private_key: string; public_key: string };

    // 64 KiB of resident states holds a fraction of the users: evictions, owner-encoded snapshots and loads go on
    // throughout the stream.
    // --fold-every 4: users' single records are folded into blocks throughout the stream too (server/store/README.md
    // "Event blocks"), so the kill also lands among folds, and the reads and recovery below go through blocks.
    const first = serve(data, cleanups, ['--threads', '2', '--state-cache-bytes', String(64 * 1024), '--fold-every', '4']);
    const firstUrl = await listeningUrl(first);
    const firstAgent = new Agent({ keepAlive: true });
    cleanups.push(async () => firstAgent.destroy());
    const codes: number[] = [];
    const ids: string[] = [];
    for (const cohort of COHORTS) {
      const query = { event: cohort.name, frequency: { greater_than_or_equal_to: cohort.atLeast } };
      const created = await call(firstAgent, firstUrl, 'POST', '/cohorts-api/v2/cohorts', keys.private_key, { name: `${cohort.name} x${cohort.atLeast}`, query });
      expect(created.status).toBe(201);
      codes.push((created.body as { code: number }).code);
      ids.push((created.body as { id: string }).id);
    }

    const users = Array.from({ length: USERS }, () => randomUUID());
    const { acknowledged, calls, inFlightAtKill } = await streamUntilKill({
      agent: firstAgent,
      url: firstUrl,
      key: keys.public_key,
      server: first,
      concurrency: CONCURRENCY,
      acksBeforeKill: ACKS_BEFORE_KILL,
      body: (index) => ({ id: randomUUID(), user_id: users[(index * 31) % USERS] as string, name: nameOf(index), properties: { n: index } }),
    });
    expect((await first.exited).signal).toBe('SIGKILL');
    expect(inFlightAtKill).toBeGreaterThan(0);

    // The restart keeps the defaults: whatever the owners held is gone; snapshots plus stored events must do.
    const second = serve(data, cleanups);
    const secondUrl = await listeningUrl(second);
    const agent = new Agent({ keepAlive: true });
    cleanups.push(async () => agent.destroy());

    const stored = new Map<string, WireEvent>();
    const histories = new Map<string, WireEvent[]>();
    const sizes = COHORTS.map(() => 0);
    for (const user of users) {
      const answer = await call(agent, secondUrl, 'GET', `/v2.0/events?user_id=${user}&limit=1000`, keys.public_key);
      expect(answer.status).toBe(200);
      const events = answer.body as WireEvent[];
      expect(events.length).toBeLessThan(1000);
      histories.set(user, events);
      for (const event of events) stored.set(event.id, event);
      const expected = expectedMemberships(events);
      for (const i of expected) sizes[i] = (sizes[i] as number) + 1;
      const read = await call(agent, secondUrl, 'POST', '/ccs/v1/segmentation', keys.private_key, { user_id: user, events: [] });
      expect(read.status).toBe(200);
      expect((read.body as { cohorts: string[] }).cohorts.map(Number).sort((a, b) => a - b), `memberships of ${user}`).toEqual(expected.map((i) => codes[i]));
    }
    for (const [id, record] of acknowledged) expect(stored.get(id), `acknowledged event ${id}`).toEqual(record);
    expect(stored.size).toBeLessThanOrEqual(calls);
    for (const [i, id] of ids.entries()) {
      const cohort = await call(agent, secondUrl, 'GET', `/cohorts-api/v2/cohorts/${id}`, keys.private_key);
      expect(cohort.status).toBe(200);
      expect((cohort.body as { live_audience_size: number }).live_audience_size, `size of ${COHORTS[i]?.name}`).toBe(sizes[i]);
    }
    // Some users are in each cohort and some are not, so the comparison above decides something.
    for (const size of sizes) {
      expect(size).toBeGreaterThan(0);
      expect(size).toBeLessThan(USERS);
    }

    // The states behind the memberships: one more event per user moves it exactly as the recomputation says.
    for (const user of users) {
      const history = histories.get(user) as WireEvent[];
      const name = COHORTS.find((cohort) => history.filter((event) => event.name === cohort.name).length === cohort.atLeast - 1)?.name ?? 'Pageview';
      const answer = await call(agent, secondUrl, 'POST', '/ccs/v1/segmentation', keys.private_key, { user_id: user, events: [{ name, time: new Date().toISOString(), properties: {} }] });
      expect(answer.status).toBe(200);
      const expected = expectedMemberships([...history, { name }]).map((i) => codes[i]);
      expect((answer.body as { cohorts: string[] }).cohorts.map(Number).sort((a, b) => a - b), `memberships of ${user} after one more ${name}`).toEqual(expected);
    }

    // The folds did run: some histories are stored as blocks (the checks above read through them).
    second.child.kill('SIGTERM');
    expect((await second.exited).code).toBe(0);
    const store = await openLevelStore(data);
    try {
      const values = await store.encodedValues({ gte: 'e!', lt: 'e"' });
      expect(values.filter((bytes) => isEncodedBlock(bytes)).length).toBeGreaterThan(USERS / 2);
    } finally {
      await store.close();
    }
  });
});
