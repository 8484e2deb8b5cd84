// D19 backfill end to end over real services and LevelDB: cohorts created, changed, disabled, enabled and deleted
// after users have history come out exactly as the reference evaluator says over each user's full stored history,
// whatever the order of sweep, lazy catch-ups, live appends and restarts.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRng, randomEvents, randomQuery, type Rng } from '../../test/differential/generate.js';
import type { ReferenceCohort } from '../../test/reference/index.js';
import { readTransitionLog } from '../domain/reactions/log.js';
import type { TransitionLogEntry } from '../domain/reactions/contract.js';
import type { Cohort } from '../domain/cohorts/index.js';
import { harnessDir, openHarness, referenceAudiences, storedHistory, type Harness, type HarnessDir } from '../../test/support/backfill-harness.js';
import { sweepKey } from './keys.js';

const userId = (n: number): string => `b0000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;

let dir: HarnessDir;
let open: Harness[];

beforeEach(async () => {
  dir = await harnessDir();
  open = [];
});

afterEach(async () => {
  for (const harness of open) await harness.close().catch(() => undefined);
  await dir.remove();
});

async function start(options: Parameters<typeof openHarness>[1] = {}, existing?: { org: string; workspace: string }): Promise<Harness> {
  const harness = await openHarness(dir.path, options, existing);
  open.push(harness);
  return harness;
}

async function closeHarness(harness: Harness): Promise<void> {
  open.splice(open.indexOf(harness), 1);
  await harness.close();
}

/** Users with random histories (E1 late events, sessions, views), appended through the pipeline. */
async function seedUsers(h: Harness, rng: Rng, users: number, maxEvents: number): Promise<string[]> {
  const ids = Array.from({ length: users }, (_, i) => userId(i + 1));
  await Promise.all(ids.map((user) => h.append(user, randomEvents(rng, rng.int(1, maxEvents)))));
  return ids;
}

/** Times worth using as window edges: a sample of stored event times. */
async function instantsOf(h: Harness, users: readonly string[]): Promise<number[]> {
  const out: number[] = [];
  for (const user of users.slice(0, 5)) for (const event of await storedHistory(h.store, h.org, user)) out.push(event.time);
  return out;
}

/** Memberships and live sizes equal the reference over every user's full history (D19). */
async function expectExact(h: Harness, users: readonly string[], cohorts: readonly ReferenceCohort[]): Promise<void> {
  const reference = await referenceAudiences(h.store, h.org, users, cohorts);
  for (const user of users) {
    expect(await h.services.pipeline.membershipsOf(h.org, user), `memberships of ${user}`).toEqual(reference.memberships.get(user));
  }
  for (const cohort of cohorts) {
    const expected = cohort.inactive === true ? 0 : (reference.sizes.get(cohort.code) ?? 0);
    expect(h.services.pipeline.audienceSize(h.org, cohort.code), `size of cohort ${cohort.code}`).toBe(expected);
  }
}

const referenceOf = (cohort: Cohort, inactive = false): ReferenceCohort => ({ code: cohort.code, query: cohort.query, inactive });

type Logged = TransitionLogEntry['transitions'][number] & { replay?: true };

/** Every logged transition of the data directory: with an event, or alone (catch-ups, marked replay). */
async function loggedTransitions(h: Harness): Promise<{ withEvent: Logged[]; alone: Logged[] }> {
  const withEvent: Logged[] = [];
  const alone: Logged[] = [];
  for await (const { entry } of readTransitionLog(h.store)) {
    const list = entry.event_id !== null ? withEvent : alone;
    for (const t of entry.transitions) list.push({ ...t, ...(entry.replay === true ? { replay: true } : {}) });
  }
  return { withEvent, alone };
}

describe('D19: a created or changed cohort is evaluated over every user\'s stored history', () => {
  it('random cohorts created after random histories: memberships and sizes equal the reference; changes are replay-marked', async () => {
    const rng = createRng(1901);
    const h = await start();
    const users = await seedUsers(h, rng, 40, 60);
    const instants = await instantsOf(h, users);
    const cohorts: Cohort[] = [];
    for (let code = 1; code <= 6; code++) cohorts.push(await h.create(randomQuery(rng, { code, instants })));
    await h.services.backfill.whenSwept(h.org);
    await expectExact(h, users, cohorts.map((c) => referenceOf(c)));

    const logged = await loggedTransitions(h);
    expect(logged.alone.length).toBeGreaterThan(0);
    expect(logged.alone.every((t) => t.replay === true)).toBe(true);
    expect(logged.withEvent.some((t) => t.replay === true)).toBe(false);

    // PATCH a query: users who no longer match leave with a replay-marked exit; the sizes stay exact.
    const before = new Map(await Promise.all(users.map(async (u) => [u, await h.services.pipeline.membershipsOf(h.org, u)] as const)));
    const changed = await h.update(cohorts[0] as Cohort, { query: randomQuery(rng, { code: 1, instants }) });
    cohorts[0] = changed;
    const third = await h.update(cohorts[2] as Cohort, { query: { event: 'Purchase', frequency: { greater_than_or_equal_to: 2 } } });
    cohorts[2] = third;
    await h.services.backfill.whenSwept(h.org);
    await expectExact(h, users, cohorts.map((c) => referenceOf(c)));
    const after = (await referenceAudiences(h.store, h.org, users, [referenceOf(third)])).memberships;
    const leavers = users.filter((u) => before.get(u)?.includes(third.code) === true && after.get(u)?.includes(third.code) !== true).length;
    const exits = (await loggedTransitions(h)).alone.filter((t) => t.cohort === third.code && t.kind === 'exited');
    expect(leavers).toBeGreaterThan(0);
    expect(exits).toHaveLength(leavers);
    expect(exits.every((t) => t.replay === true)).toBe(true);
  });

  it('a restart in the middle of a sweep resumes from the stored cursor and ends exact', async () => {
    const rng = createRng(1902);
    const tuning = { sweepBatch: 8 };
    let stopAt: (() => void) | undefined;
    const reached = new Promise<void>((resolve) => (stopAt = resolve));
    const first = await start({ tuning, onSwept: (_org, done) => (done >= 16 ? stopAt?.() : undefined) });
    const users = await seedUsers(first, rng, 120, 30);
    const instants = await instantsOf(first, users);
    const cohorts: Cohort[] = [];
    for (let code = 1; code <= 4; code++) cohorts.push(await first.create(randomQuery(rng, { code, instants })));
    await reached;
    const ids = { org: first.org, workspace: first.workspace };
    await closeHarness(first);

    const resumedFrom: number[] = [];
    const second = await start({ tuning, onSwept: (_org, done) => resumedFrom.push(done) }, ids);
    const record = await second.store.get<{ complete: boolean; done: number }>(sweepKey(ids.org));
    await second.services.backfill.whenSwept(ids.org);
    expect(record?.done ?? 0).toBeGreaterThanOrEqual(16);
    // Resumed, not restarted: the first batch after the restart already counts the users done before it.
    expect(resumedFrom[0]).toBeGreaterThan(16);
    expect((await second.store.get<{ complete: boolean }>(sweepKey(ids.org)))?.complete).toBe(true);
    await expectExact(second, users, cohorts.map((c) => referenceOf(c)));
    // And stays exact through another restart and more events.
    await closeHarness(second);
    const third = await start({ tuning }, ids);
    await third.services.backfill.whenSwept(ids.org);
    await Promise.all(users.slice(0, 30).map((user) => third.append(user, randomEvents(rng, 5))));
    await expectExact(third, users, cohorts.map((c) => referenceOf(c)));
  });

  it('a crash (no close) in the middle of a sweep with live appends: reopened, counts are neither lost nor repeated', async () => {
    const rng = createRng(1906);
    const tuning = { sweepBatch: 8 };
    let crashAt: (() => void) | undefined;
    const reached = new Promise<void>((resolve) => (crashAt = resolve));
    const first = await start({ tuning, onSwept: (_org, done) => (done >= 24 ? crashAt?.() : undefined) });
    const users = await seedUsers(first, rng, 100, 25);
    const instants = await instantsOf(first, users);
    const cohorts: Cohort[] = [];
    for (let code = 1; code <= 3; code++) cohorts.push(await first.create(randomQuery(rng, { code, instants })));
    await Promise.all(users.filter((_, i) => i % 7 === 0).map((user) => first.append(user, randomEvents(rng, 2), 1)));
    await reached;
    // The crash: the service is abandoned; only the store handle goes (acknowledged appends are durable).
    const ids = { org: first.org, workspace: first.workspace };
    open.splice(open.indexOf(first), 1);
    first.services.backfill.stop();
    await first.store.close();

    const second = await start({ tuning }, ids);
    await second.services.backfill.whenSwept(ids.org);
    await expectExact(second, users, cohorts.map((c) => referenceOf(c)));
  });

  it('live appends flow during a sweep: acknowledged before it ends, lazily caught up first, and exact after', async () => {
    const rng = createRng(1903);
    const h = await start({ tuning: { sweepBatch: 4, catchUpsPerTick: 2 } });
    const users = await seedUsers(h, rng, 300, 12);
    const instants = await instantsOf(h, users);
    const cohorts = [await h.create(randomQuery(rng, { code: 1, instants })), await h.create({ event: 'Pageview', frequency: { greater_than_or_equal_to: 3 } })];
    let swept = false;
    const sweeping = h.services.backfill.whenSwept(h.org).then(() => {
      swept = true;
    });
    // The last users in key order: the sweep reaches them last, so their appends are caught up lazily.
    const late = users.slice(-20);
    await Promise.all(late.map((user) => h.append(user, randomEvents(rng, 3), 1)));
    expect(swept).toBe(false);
    await sweeping;
    await expectExact(h, users, cohorts.map((c) => referenceOf(c)));
  });

  it('long histories are replayed off the lane in chunks while the user\'s appends wait, in order', async () => {
    const rng = createRng(1904);
    const h = await start({ tuning: { catchUpInline: 40, catchUpBudget: 60, historyChunk: 16 } });
    const users = await seedUsers(h, rng, 12, 150);
    const instants = await instantsOf(h, users);
    const cohorts: Cohort[] = [];
    for (let code = 1; code <= 3; code++) cohorts.push(await h.create(randomQuery(rng, { code, instants })));
    // Appends and reads right away: lazy catch-ups of long histories park the users until their replay is done.
    await Promise.all(users.map((user) => h.append(user, randomEvents(rng, 4), 2)));
    await h.services.backfill.whenSwept(h.org);
    await expectExact(h, users, cohorts.map((c) => referenceOf(c)));
  });
});

describe('D19 sweep progress and the worker pool', () => {
  it('the read model reports running progress during a sweep and none once done', async () => {
    const rng = createRng(1907);
    const seen: unknown[] = [];
    let cohort: Cohort | undefined;
    const h = await start({
      tuning: { sweepBatch: 10 },
      onSwept: () => seen.push(cohort === undefined ? undefined : h.services.backfill.progressOf(cohort)),
    });
    const users = await seedUsers(h, rng, 35, 5);
    cohort = await h.create({ event: 'Click' });
    await h.services.backfill.whenSwept(h.org);
    expect(seen).toEqual([
      { state: 'running', users_done: 10, users_total: 35 },
      { state: 'running', users_done: 20, users_total: 35 },
      { state: 'running', users_done: 30, users_total: 35 },
      { state: 'running', users_done: 35, users_total: 35 },
    ]);
    expect(h.services.backfill.progressOf(cohort)).toBeUndefined();
    await expectExact(h, users, [referenceOf(cohort)]);
  });

  it('catch-ups and off-lane replays run in piscina workers (threads: 2) with the same exact result', async () => {
    const h = await start({ threads: 2, tuning: { catchUpInline: 30, historyChunk: 10 } });
    await sweepBesideAppends(h, createRng(1908), { users: 30, history: 80, cohorts: 4, live: 8, liveEvents: 3 });
  });
});

describe('D19: a group heavy with catch-ups goes to its owners as several tasks', () => {
  it('tasks of about 25 history events each (threads: 2), live appends among them: the same exact result', async () => {
    const h = await start({ threads: 2, tuning: { taskEvents: 25 } });
    await sweepBesideAppends(h, createRng(1911), { users: 40, history: 30, cohorts: 3, live: 10, liveEvents: 2 });
  });
});

/**
 * Seeds users with histories, creates random cohorts over their instants (each sweeps them), appends to the first
 * `live` users meanwhile, and once swept checks every user and size against the reference.
 */
async function sweepBesideAppends(
  h: Awaited<ReturnType<typeof start>>,
  rng: ReturnType<typeof createRng>,
  o: { users: number; history: number; cohorts: number; live: number; liveEvents: number },
): Promise<void> {
  const users = await seedUsers(h, rng, o.users, o.history);
  const instants = await instantsOf(h, users);
  const cohorts: Cohort[] = [];
  for (let code = 1; code <= o.cohorts; code++) cohorts.push(await h.create(randomQuery(rng, { code, instants })));
  await Promise.all(users.slice(0, o.live).map((user) => h.append(user, randomEvents(rng, o.liveEvents), 1)));
  await h.services.backfill.whenSwept(h.org);
  await expectExact(h, users, cohorts.map((c) => referenceOf(c)));
}

describe('D19: disabled cohorts have no members; enabling evaluates over history again; deleting', () => {
  it('disable clears membership and size at once, re-enable recomputes, delete removes', async () => {
    const rng = createRng(1905);
    const h = await start();
    const users = await seedUsers(h, rng, 30, 40);
    const a = await h.create({ event: 'Pageview', frequency: { greater_than_or_equal_to: 2 } });
    const b = await h.create({ event: 'Click' });
    await h.services.backfill.whenSwept(h.org);
    await expectExact(h, users, [referenceOf(a), referenceOf(b)]);
    expect(h.services.pipeline.audienceSize(h.org, a.code)).toBeGreaterThan(0);

    const disabled = await h.update(a, { state: 'Disabled' });
    // At once: no sweep awaited.
    expect(h.services.pipeline.audienceSize(h.org, a.code)).toBe(0);
    for (const user of users) expect(await h.services.pipeline.membershipsOf(h.org, user)).not.toContain(a.code);
    // Events while disabled count when it is enabled again (evaluated over the whole history).
    await Promise.all(users.slice(0, 10).map((user) => h.append(user, [{ name: 'Pageview', time: Date.parse('2026-06-01T00:00:00Z'), properties: {} }])));
    await h.services.backfill.whenSwept(h.org);
    await expectExact(h, users, [referenceOf(disabled, true), referenceOf(b)]);

    const enabled = await h.update(disabled, { state: 'Enabled' });
    await h.services.backfill.whenSwept(h.org);
    await expectExact(h, users, [referenceOf(enabled), referenceOf(b)]);

    await h.remove(b);
    expect(h.services.pipeline.audienceSize(h.org, b.code)).toBe(0);
    for (const user of users) expect(await h.services.pipeline.membershipsOf(h.org, user)).not.toContain(b.code);
    await Promise.all(users.map((user) => h.append(user, [{ name: 'Click', time: Date.parse('2026-06-02T00:00:00Z'), properties: {} }])));
    await expectExact(h, users, [referenceOf(enabled)]);
  });
});
