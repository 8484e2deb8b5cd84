// Reactions end to end with a real receiver (D36, D37): entry, exit and every-time deliveries with their bodies and
// signatures; a receiver answering 500 then 200 gets the same delivery again; a user who goes silent leaves a
// `the_last 2 seconds` cohort at its deadline (the exit is delivered and the size returns to 0 with no event).

import { createHash, createHmac, randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/service.js';
import { startReceiver, type Receiver } from '../support/receiver.js';

let h: TestService;
let receiver: Receiver;

beforeEach(async () => {
  h = await startTestService();
  receiver = await startReceiver();
});

afterEach(async () => {
  await h.close();
  await receiver.close();
});

async function cohort(name: string, query: unknown): Promise<{ id: string; code: number }> {
  const created = await h.json<{ id: string; code: number }>('POST', '/cohorts-api/v2/cohorts', { body: { name, query } });
  expect(created.status).toBe(201);
  return created.body;
}

async function reaction(name: string, cohortId: string, trigger: string): Promise<{ id: string; secret: string }> {
  const created = await h.json<{ id: string; secret: string }>('POST', '/reactions-api/v1/reactions', {
    body: { name, cohort_id: cohortId, trigger, action: { type: 'webhook', url: receiver.url } },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body;
}

async function track(user: string, name: string): Promise<string> {
  const id = randomUUID();
  const answer = await h.json('POST', '/v2.0/events', {
    key: h.keys.public_key,
    body: { id, user_id: user, name, time: new Date().toISOString(), properties: {} },
  });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return id;
}

/** D37's signature, computed here independently: t={unix seconds},v1={hex HMAC-SHA256(secret, "{t}.{raw body}")}. */
function signatureHolds(secret: string, header: string | string[] | undefined, raw: string): boolean {
  const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(header));
  if (match === null) return false;
  return createHmac('sha256', secret).update(`${match[1]}.${raw}`).digest('hex') === match[2];
}

describe('webhook deliveries (D37)', () => {
  it('entry, exit and every-time deliveries carry the documented body, headers and a valid signature', async () => {
    const viewers = await cohort('Viewers', { event: 'Pageview' });
    const newcomers = await cohort('Fewer than two views', { event: 'Pageview', frequency: { less_than: 2 } });
    const onEntry = await reaction('welcome', viewers.id, 'on_entry');
    const onExit = await reaction('graduated', newcomers.id, 'on_exit');
    const everyTime = await reaction('every view', viewers.id, 'every_time');
    const user = randomUUID();
    const first = await track(user, 'Pageview');
    const second = await track(user, 'Pageview');
    const third = await track(user, 'Pageview');
    await receiver.until((got) => got.length >= 4, 'four deliveries');

    const byReaction = (id: string) => receiver.received.filter((r) => r.body?.reaction_id === id);
    const entry = byReaction(onEntry.id);
    expect(entry.map((r) => r.body)).toEqual([
      { id: expect.stringMatching(/^dlv_/), reaction_id: onEntry.id, trigger: 'on_entry', cohort: { id: viewers.id, code: viewers.code, name: 'Viewers' }, user_id: user, time: expect.any(String), event_id: first },
    ]);
    expect(byReaction(onExit.id).map((r) => [r.body.trigger, r.body.event_id, r.body.cohort.code])).toEqual([['on_exit', second, newcomers.code]]);
    // every_time starts from the next page load: the first view made the user a member, the next two fire.
    expect(byReaction(everyTime.id).map((r) => r.body.event_id)).toEqual([second, third]);
    for (const request of receiver.received) {
      expect(request.headers['content-type']).toMatch(/^application\/json/);
      expect(request.headers['x-audience-delivery']).toBe(request.body.id);
      const secret = [onEntry, onExit, everyTime].find((r) => r.id === request.body.reaction_id)?.secret as string;
      expect(signatureHolds(secret, request.headers['x-audience-signature'], request.raw)).toBe(true);
      expect(signatureHolds(onEntry.secret === secret ? onExit.secret : onEntry.secret, request.headers['x-audience-signature'], request.raw)).toBe(false);
    }
    expect(new Set(receiver.received.map((r) => r.body.id)).size).toBe(4);
    // X-Audience-Transition: a digest of what the delivery is about, without its id (the same on another node).
    for (const request of receiver.received) {
      const { reaction_id, trigger, cohort: c, user_id, time, event_id } = request.body;
      const expected = createHash('sha256').update(JSON.stringify([reaction_id, trigger, c.code, user_id, time, event_id])).digest('base64url');
      expect(request.headers['x-audience-transition']).toBe(expected);
    }
    expect(new Set(receiver.received.map((r) => r.headers['x-audience-transition'])).size).toBe(4);
  });

  it('a receiver answering 500 then 200 gets the same delivery id again; the delivery ends delivered after 2 attempts', async () => {
    const viewers = await cohort('Viewers', { event: 'Pageview' });
    const onEntry = await reaction('welcome', viewers.id, 'on_entry');
    receiver.answerNext(500);
    await track(randomUUID(), 'Pageview');
    await receiver.until((got) => got.some((r) => r.answered === 200), 'a successful retry');
    expect(receiver.received.map((r) => r.answered)).toEqual([500, 200]);
    expect(receiver.received[1]?.body).toEqual(receiver.received[0]?.body);
    expect(receiver.received[1]?.headers['x-audience-delivery']).toBe(receiver.received[0]?.body.id);
    expect(receiver.received[1]?.headers['x-audience-transition']).toBe(receiver.received[0]?.headers['x-audience-transition']);
    // The receiver has answered; the loop records the outcome right after.
    const delivered = async () =>
      (await h.json<Array<{ id: string; status: string; attempts: number; last_status: number }>>('GET', `/reactions-api/v1/reactions/${onEntry.id}/deliveries?status=delivered`)).body.map((d) => [d.id, d.status, d.attempts, d.last_status]);
    await expect.poll(delivered, { timeout: 5000 }).toEqual([[receiver.received[0]?.body.id, 'delivered', 2, 200]]);
  });
});

describe('time passes (D36)', () => {
  it('a user who goes silent leaves a `the_last 2 seconds` cohort at its deadline: exit delivered, size back to 0', async () => {
    const recent = await cohort('Viewed in the last 2 seconds', { event: 'Pageview', during: { the_last: { value: 2, unit: 'seconds' } } });
    const onExit = await reaction('lapsed', recent.id, 'on_exit');
    const onEntry = await reaction('active', recent.id, 'on_entry');
    const user = randomUUID();
    const viewed = await track(user, 'Pageview');
    const size = async () => (await h.json<{ live_audience_size: number }>('GET', `/cohorts-api/v2/cohorts/${recent.id}`)).body.live_audience_size;
    await receiver.until((got) => got.some((r) => r.body?.reaction_id === onEntry.id), 'the entry');
    await receiver.until((got) => got.some((r) => r.body?.reaction_id === onExit.id), 'the exit, with no further event');
    const exit = receiver.received.find((r) => r.body?.reaction_id === onExit.id);
    const entry = receiver.received.find((r) => r.body?.reaction_id === onEntry.id);
    // The exit happens at the deadline (the view's time + 2 s), caused by no event.
    expect(exit?.body).toMatchObject({ trigger: 'on_exit', user_id: user, event_id: null });
    expect(entry?.body.event_id).toBe(viewed);
    expect(Date.parse(exit?.body.time) - Date.parse(entry?.body.time)).toBe(2000);
    expect(await size()).toBe(0);
    const read = await h.json<{ cohorts: string[] }>('POST', '/ccs/v1/segmentation', { body: { user_id: user, events: [] } });
    expect(read.body.cohorts).toEqual([]);
  });
});

describe('backfill computes deadlines (D36, D19)', () => {
  it('a cohort created after a view catches the user up (no webhook for replayed history), then the exit comes at the deadline', async () => {
    const user = randomUUID();
    await track(user, 'Pageview');
    const recent = await cohort('Viewed in the last 2 seconds', { event: 'Pageview', during: { the_last: { value: 2, unit: 'seconds' } } });
    const onEntry = await reaction('active', recent.id, 'on_entry');
    const onExit = await reaction('lapsed', recent.id, 'on_exit');
    const size = async () => (await h.json<{ live_audience_size: number }>('GET', `/cohorts-api/v2/cohorts/${recent.id}`)).body.live_audience_size;
    await receiver.until((got) => got.some((r) => r.body?.reaction_id === onExit.id), 'the exit at the deadline the catch-up indexed');
    expect(await size()).toBe(0);
    // The entry came from replayed history (the sweep), which fires nothing; the exit is live, at the deadline.
    expect(receiver.received.filter((r) => r.body?.reaction_id === onEntry.id)).toEqual([]);
    expect(receiver.received.find((r) => r.body?.reaction_id === onExit.id)?.body).toMatchObject({ user_id: user, event_id: null });
  });
});
