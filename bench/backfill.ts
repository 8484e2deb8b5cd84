// Benchmark of the D19 backfill: events replayed per second when a cohort is created over an organization with at
// least 1,000,000 stored events (seeded through the ingest pipeline with a fixed seed, LevelDB in a temp directory),
// timed from the create to the end of the sweep. Seeded, fixed settings; JSON to stdout.
// Run: npm run build && node dist/bench/backfill.js

import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { validateQuery } from '../engine/index.js';
import type { NewEvent } from '../server/ingest/index.js';
import { openServices } from '../server/services.js';
import { openLevelStore } from '../server/store/level.js';
import { createRng } from '../test/differential/random.js';

export interface BackfillBenchOptions {
  readonly seed: number;
  readonly users: number;
  readonly eventsPerUser: number;
  /** Events per append while seeding. */
  readonly eventsPerAppend: number;
  /** Engine worker threads (piscina); 0 = main thread. */
  readonly threads: number;
  /** A cohort that exists while the events arrive (an organization rarely has none). */
  readonly existing: unknown;
  /** The query of the cohort created over the stored history. */
  readonly query: unknown;
}

export const DEFAULT_BACKFILL_BENCH: BackfillBenchOptions = {
  seed: 42,
  users: 5_000,
  eventsPerUser: 200,
  eventsPerAppend: 200,
  threads: 1,
  existing: { event: 'Signup' },
  query: {
    and: [
      { event: 'Pageview', frequency: { greater_than_or_equal_to: 125 } },
      { or: [{ event: 'Purchase', during: { the_last: { value: 7, unit: 'days' } } }, { event: 'Click', where: { property: 'properties.kind', condition: { equal_to: 'buy' } } }] },
    ],
  },
};

export interface BackfillBenchResult {
  readonly settings: BackfillBenchOptions;
  readonly storedEvents: number;
  readonly seedSeconds: number;
  /** Seeding rate through the pipeline (appends acknowledged once durable). */
  readonly seedEventsPerSecond: number;
  /** From the create to the end of the sweep (every user caught up, the size exact). */
  readonly sweepSeconds: number;
  readonly replayedEventsPerSecond: number;
  readonly usersPerSecond: number;
  readonly audienceSize: number;
  readonly loadAverage: readonly number[];
}

/** The shared seeded PRNG (mulberry32). */
const random = (seed: number): (() => number) => createRng(seed).next;

function userEvents(next: () => number, user: number, count: number): NewEvent[] {
  let time = Date.parse('2026-01-01T00:00:00.000Z') + Math.floor(next() * 86_400_000);
  const events: NewEvent[] = [];
  for (let i = 0; i < count; i++) {
    time += Math.floor(next() * 3_600_000);
    const roll = next();
    const name = roll < 0.6 ? 'Pageview' : roll < 0.9 ? 'Click' : 'Purchase';
    const properties = name === 'Click' ? { kind: next() < 0.2 ? 'buy' : 'look' } : { path: `/p/${Math.floor(next() * 50)}` };
    events.push({ id: `b${user}-${i}`, name, time: new Date(time).toISOString(), timeMs: time, properties });
  }
  return events;
}

export async function runBackfillBench(overrides: Partial<BackfillBenchOptions> = {}): Promise<BackfillBenchResult> {
  const settings: BackfillBenchOptions = { ...DEFAULT_BACKFILL_BENCH, ...overrides };
  const dir = await mkdtemp(join(tmpdir(), 'audience-bench-backfill-'));
  const store = await openLevelStore(dir);
  const services = await openServices(store, { threads: settings.threads, log: (line) => process.stderr.write(`${line}\n`) });
  try {
    const org = await services.tenancy.initOrganization({ name: 'Bench', now: new Date(), newId: randomUUID, newKey: randomUUID });
    const create = async (query: unknown) => {
      const validated = validateQuery(query);
      if (!validated.ok) throw new Error(`invalid bench query: ${JSON.stringify(validated.problems)}`);
      const cohort = await services.cohorts.create({
        workspaceId: org.workspace_id,
        name: 'bench',
        query,
        ast: validated.query,
        references: validated.references,
        now: new Date(),
        newId: randomUUID,
      });
      services.pipeline.planChanged(org.organization_id);
      services.backfill.planChanged(org.organization_id);
      return cohort;
    };
    await create(settings.existing);
    await services.backfill.whenSwept(org.organization_id);
    const next = random(settings.seed);
    const seedStart = performance.now();
    // Users in waves so that every partition has appends in flight.
    const wave = 64;
    for (let first = 0; first < settings.users; first += wave) {
      const appends: Promise<unknown>[] = [];
      for (let u = first; u < Math.min(settings.users, first + wave); u++) {
        const user = `u${String(u).padStart(8, '0')}`;
        const events = userEvents(next, u, settings.eventsPerUser);
        appends.push(
          (async () => {
            for (let i = 0; i < events.length; i += settings.eventsPerAppend) {
              await services.pipeline.append({ org: org.organization_id, user, events: events.slice(i, i + settings.eventsPerAppend) });
            }
          })(),
        );
      }
      await Promise.all(appends);
    }
    const seedSeconds = (performance.now() - seedStart) / 1000;
    const storedEvents = settings.users * settings.eventsPerUser;

    const sweepStart = performance.now();
    const cohort = await create(settings.query);
    await services.backfill.whenSwept(org.organization_id);
    const sweepSeconds = (performance.now() - sweepStart) / 1000;
    return {
      settings,
      storedEvents,
      seedSeconds: round(seedSeconds),
      seedEventsPerSecond: Math.round(storedEvents / seedSeconds),
      sweepSeconds: round(sweepSeconds),
      replayedEventsPerSecond: Math.round(storedEvents / sweepSeconds),
      usersPerSecond: Math.round(settings.users / sweepSeconds),
      audienceSize: services.pipeline.audienceSize(org.organization_id, cohort.code),
      loadAverage: loadavg().map(round),
    };
  } finally {
    services.backfill.stop();
    await services.pipeline.close();
    await services.backfill.closed();
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const result = await runBackfillBench();
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}
