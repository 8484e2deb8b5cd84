// Crash safety of the real binary (issue 5, D29 "acknowledged only once durable", D19): stream track calls, SIGKILL
// the server after the Nth acknowledgement while others are in flight, restart on the same directory, and check that
// every acknowledged event is readable and that the cohort's size equals a recomputation from the stored events.
// Needs `npm run build` (npm test does it). The cohort part runs when the cohorts route answers its create (D14).

import { randomUUID } from 'node:crypto';
import { Agent } from 'node:http';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCliProcess, tempDir } from '../support/processes.js';
import { call, listeningUrl, serve, streamUntilKill, type WireEvent } from './support-crash.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const USERS = 8;
const THRESHOLD = 30;
const ACKS_BEFORE_KILL = 300;
const CONCURRENCY = 24;

describe('kill -9 during a stream of track calls', () => {
  it('loses no acknowledged event and keeps cohort sizes equal to a recomputation', async () => {
    const dir = await tempDir('audience-crash-');
    cleanups.push(dir.remove);
    const data = join(dir.path, 'data');
    const init = await runCliProcess(['init', '--data', data, '--json']);
    expect(init.code).toBe(0);
    const keys = JSON.parse(init.stdout) as { private_key: string; public_key: string };

    const first = serve(data, cleanups);
    const firstUrl = await listeningUrl(first);
    const firstAgent = new Agent({ keepAlive: true });
    cleanups.push(async () => firstAgent.destroy());

    // Users get events in proportion 1..USERS, so that some pass the threshold and some do not.
    const schedule = Array.from({ length: USERS }, (_, u) => Array.from({ length: u + 1 }, () => u)).flat();
    const users = Array.from({ length: USERS }, () => randomUUID());
    const query = { event: 'Pageview', frequency: { greater_than_or_equal_to: THRESHOLD } };
    const created = await call(firstAgent, firstUrl, 'POST', '/cohorts-api/v2/cohorts', keys.private_key, { name: 'crash', query });
    const cohortsRouted = created.status !== 404;
    if (cohortsRouted) expect(created.status).toBe(201);
    const cohortId = cohortsRouted ? (created.body as { id: string }).id : undefined;

    const { acknowledged, calls: next, inFlightAtKill } = await streamUntilKill({
      agent: firstAgent,
      url: firstUrl,
      key: keys.public_key,
      server: first,
      concurrency: CONCURRENCY,
      acksBeforeKill: ACKS_BEFORE_KILL,
      body: (index) => ({ id: randomUUID(), user_id: users[schedule[index % schedule.length] as number] as string, name: 'Pageview', properties: { n: index } }),
    });
    expect((await first.exited).signal).toBe('SIGKILL');
    expect(inFlightAtKill).toBeGreaterThan(0);
    expect(acknowledged.size).toBeGreaterThanOrEqual(ACKS_BEFORE_KILL);

    const second = serve(data, cleanups);
    const secondUrl = await listeningUrl(second);
    const agent = new Agent({ keepAlive: true });
    cleanups.push(async () => agent.destroy());

    const storedById = new Map<string, WireEvent>();
    let expectedSize = 0;
    for (const user of users) {
      const answer = await call(agent, secondUrl, 'GET', `/v2.0/events?user_id=${user}`, keys.public_key);
      expect(answer.status).toBe(200);
      const events = answer.body as WireEvent[];
      expect(events.length).toBeLessThan(1000); // the whole history fits in one read
      for (const event of events) storedById.set(event.id, event);
      if (events.filter((event) => event.name === 'Pageview').length >= THRESHOLD) expectedSize++;
    }
    for (const [id, record] of acknowledged) expect(storedById.get(id), `acknowledged event ${id}`).toEqual(record);
    // Events in flight at the kill are either stored whole or not at all; nothing else appears.
    expect(storedById.size).toBeLessThanOrEqual(next);

    if (cohortId !== undefined) {
      expect(expectedSize).toBeGreaterThan(0);
      expect(expectedSize).toBeLessThan(USERS);
      const cohort = await call(agent, secondUrl, 'GET', `/cohorts-api/v2/cohorts/${cohortId}`, keys.private_key);
      expect(cohort.status).toBe(200);
      expect((cohort.body as { live_audience_size: number }).live_audience_size).toBe(expectedSize);
    }
  });
});
