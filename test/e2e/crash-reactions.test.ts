// D37 at least once across kill -9: a receiver refuses every delivery while events stream in, the server is
// SIGKILLed with deliveries pending, then restarted with the receiver accepting: every acknowledged event's entry is
// delivered at least once, and a duplicate carries the same id and body. Needs `npm run build` (npm test does it).

import { randomUUID } from 'node:crypto';
import { Agent } from 'node:http';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCliProcess, tempDir } from '../support/processes.js';
import { startReceiver } from '../support/receiver.js';
import { call, listeningUrl, serve, streamUntilKill } from './support-crash.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const USERS = 150;
const ACKS_BEFORE_KILL = 100;

describe('kill -9 with webhook deliveries pending (D37)', () => {
  it('delivers every acknowledged transition at least once after the restart, duplicates under the same id', async () => {
    const dir = await tempDir('audience-crash-reactions-');
    cleanups.push(dir.remove);
    const receiver = await startReceiver();
    cleanups.push(receiver.close);
    // Refuse everything until the restart: deliveries stay pending (some attempted, some not yet).
    receiver.answerNext(...Array.from({ length: 10_000 }, () => 503));
    const data = join(dir.path, 'data');
    const init = await runCliProcess(['init', '--data', data, '--json']);
    expect(init.code).toBe(0);
    const keys = JSON.parse(init.stdout) as { private_key: string; public_key: string };

    const first = serve(data, cleanups, ['--threads', '1']);
    const firstUrl = await listeningUrl(first);
    const agent = new Agent({ keepAlive: true });
    cleanups.push(async () => agent.destroy());
    const cohort = await call(agent, firstUrl, 'POST', '/cohorts-api/v2/cohorts', keys.private_key, { name: 'Viewers', query: { event: 'Pageview' } });
    expect(cohort.status).toBe(201);
    const reaction = await call(agent, firstUrl, 'POST', '/reactions-api/v1/reactions', keys.private_key, {
      name: 'welcome',
      cohort_id: cohort.body.id,
      trigger: 'on_entry',
      action: { type: 'webhook', url: receiver.url },
    });
    expect(reaction.status).toBe(201);

    // One event per user: each acknowledged one made its user enter (one delivery each).
    const users = Array.from({ length: USERS }, () => randomUUID());
    const { acknowledged } = await streamUntilKill({
      agent,
      url: firstUrl,
      key: keys.public_key,
      server: first,
      concurrency: 8,
      acksBeforeKill: ACKS_BEFORE_KILL,
      body: (index) => ({ id: randomUUID(), user_id: users[index % USERS] as string, name: 'Pageview', time: new Date().toISOString(), properties: {} }),
    });
    expect((await first.exited).signal).toBe('SIGKILL');
    const entered = new Set([...acknowledged.values()].map((event) => event.user_id));
    // Calls answered while the kill was on its way count too.
    expect(entered.size).toBeGreaterThanOrEqual(ACKS_BEFORE_KILL);

    // Requests before the kill (refused) stay in `received`: a retry after the restart must repeat them exactly.
    receiver.clearAnswers();
    const second = serve(data, cleanups, ['--threads', '1']);
    await listeningUrl(second);
    await receiver.until(
      (got) => [...entered].every((user) => got.some((r) => r.answered === 200 && r.body?.user_id === user)),
      'a successful delivery for every acknowledged entry',
      90_000,
    );
    const byId = new Map<string, string>();
    for (const request of receiver.received) {
      expect(request.body).toMatchObject({ reaction_id: reaction.body.id, trigger: 'on_entry', event_id: expect.any(String) });
      expect(request.headers['x-audience-delivery']).toBe(request.body.id);
      const seen = byId.get(request.body.id);
      if (seen !== undefined) expect(request.raw, `a duplicate of ${request.body.id}`).toBe(seen);
      byId.set(request.body.id, request.raw);
    }
    // One delivery (one id) per user that entered: users are never delivered under two ids.
    const idsByUser = new Map<string, Set<string>>();
    for (const request of receiver.received) {
      const ids = idsByUser.get(request.body.user_id) ?? new Set<string>();
      ids.add(request.body.id);
      idsByUser.set(request.body.user_id, ids);
    }
    for (const ids of idsByUser.values()) expect(ids.size).toBe(1);
    // Deliveries refused before the kill were sent again after it under the same id.
    const refused = new Set(receiver.received.filter((r) => r.answered === 503).map((r) => r.body.id as string));
    expect(refused.size).toBeGreaterThan(0);
    expect(receiver.received.some((r) => r.answered === 200 && refused.has(r.body.id))).toBe(true);
  });
});
