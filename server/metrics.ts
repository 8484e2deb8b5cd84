// `GET /metrics` (operations.md, second round): Prometheus text from prom-client, a registry per running service.
// Counters move where things happen (requests, commits, deadlines, deliveries, dropped events); gauges are read from
// the areas when scraped (lanes, the state cache, the data directory's size, sweeps, stream clients).

import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { ResponseInfo } from './http/index.js';
import type { Services } from './services.js';

export interface ServiceMetrics {
  readonly registry: Registry;
  /** The HTTP layer's onResponse hook. */
  observeResponse(info: ResponseInfo): void;
}

/** Bucket bounds in seconds for latencies from a fraction of a millisecond to a minute. */
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** What the stateless route reports (routes/segmentation: its handle's totals and recentStates). */
export interface StatelessMetrics {
  dropped(): number;
  recentStates(): { readonly hits: number; readonly misses: number; readonly bytes: number };
}

export function createMetrics(services: Services, dataDir: string, stateless: StatelessMetrics): ServiceMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'audience_' });
  const requests = new Counter({ name: 'audience_http_requests_total', help: 'HTTP requests answered, by route pattern, method and status.', labelNames: ['route', 'method', 'status'] as const, registers: [registry] });
  const requestSeconds = new Histogram({ name: 'audience_http_request_duration_seconds', help: 'Time from a request to its answer, by route pattern.', labelNames: ['route'] as const, buckets: LATENCY_BUCKETS, registers: [registry] });
  const events = new Counter({ name: 'audience_ingest_events_total', help: 'Events stored by the ingest pipeline (acknowledged appends).', registers: [registry] });
  const snapshots = new Counter({ name: 'audience_state_snapshots_total', help: "Users' engine state snapshots written by the ingest groups (every snapshotEvery events, after the state was newer than its snapshot for 10 minutes, on eviction, after a catch-up or re-evaluation).", registers: [registry] });
  const ticks = new Counter({ name: 'audience_ingest_ticks_total', help: 'Group commits of the ingest pipeline.', registers: [registry] });
  const tickSeconds = new Histogram({ name: 'audience_ingest_tick_duration_seconds', help: 'Time from a group starting to its batch committing.', buckets: LATENCY_BUCKETS, registers: [registry] });
  const phaseSeconds = new Histogram({ name: 'audience_ingest_group_phase_seconds', help: "A group's time from start to commit by phase: reads (retried ids, states, imported data), compute (the owners' round trip), build (its writes), write (behind earlier batches, then its own).", labelNames: ['phase'] as const, buckets: LATENCY_BUCKETS, registers: [registry] });
  const transitions = new Counter({ name: 'audience_transitions_total', help: 'Cohort entries and exits committed (catch-ups included), by kind.', labelNames: ['kind'] as const, registers: [registry] });
  const deadlines = new Counter({ name: 'audience_deadlines_evaluated_total', help: 'Users re-evaluated at a deadline (D36).', registers: [registry] });
  const deadlineLag = new Histogram({ name: 'audience_deadline_lag_seconds', help: 'Lag from a deadline to the commit of its re-evaluation (D36).', buckets: LATENCY_BUCKETS, registers: [registry] });
  const deliveries = new Counter({ name: 'audience_deliveries_total', help: 'Webhook delivery attempts recorded, by outcome (delivered, retry, failed) (D37).', labelNames: ['outcome'] as const, registers: [registry] });
  const deliveryLag = new Histogram({ name: 'audience_delivery_lag_seconds', help: 'Time from a delivery being written to its successful attempt (D37).', buckets: LATENCY_BUCKETS, registers: [registry] });

  const { pipeline, deliveries: loop, stream, cohorts, backfill } = services;
  new Gauge({ name: 'audience_lane_queue_depth', help: 'Items waiting in the ingest lanes (weighted by events).', registers: [registry], collect() { this.set(pipeline.stats().queued); } });
  new Counter({ name: 'audience_ingest_store_batches_total', help: 'Store batches the ingest groups were written in (groups built during a write share the next one).', registers: [registry], collect() { this.reset(); this.inc(pipeline.stats().storeBatches); } });
  new Counter({ name: 'audience_ingest_events_folded_total', help: 'Event records folded into per-user blocks behind the writes (fewer values to read a history).', registers: [registry], collect() { this.reset(); this.inc(pipeline.stats().eventsFolded); } });
  new Gauge({ name: 'audience_state_cache_bytes', help: "Estimated bytes of users' resident engine states.", registers: [registry], collect() { this.set(pipeline.stats().cacheBytes); } });
  new Gauge({ name: 'audience_state_cache_users', help: "Users whose engine state is resident.", registers: [registry], collect() { this.set(pipeline.stats().cacheEntries); } });
  new Counter({ name: 'audience_state_cache_hits_total', help: 'State lookups that found the user resident.', registers: [registry], collect() { this.reset(); this.inc(pipeline.stats().cacheHits); } });
  new Counter({ name: 'audience_state_cache_misses_total', help: 'State lookups that had to load the user.', registers: [registry], collect() { this.reset(); this.inc(pipeline.stats().cacheMisses); } });
  new Gauge({ name: 'audience_deadlines_in_flight', help: 'Deadline re-evaluations queued and not yet committed (D36).', registers: [registry], collect() { this.set(pipeline.deadlineStats()?.inFlight ?? 0); } });
  new Gauge({ name: 'audience_deliveries_in_flight', help: 'Webhook attempts under way (D37).', registers: [registry], collect() { this.set(loop.stats().inFlight); } });
  new Gauge({ name: 'audience_stream_clients', help: 'Live stream subscribers (D38).', registers: [registry], collect() { this.set(stream.clients); } });
  new Counter({ name: 'audience_events_dropped_total', help: 'Stateless segmentation events dropped by asynchronous validation (D24).', registers: [registry], collect() { this.reset(); this.inc(stateless.dropped()); } });
  new Counter({ name: 'audience_stateless_recent_state_hits_total', help: 'Stateless calls whose state sent back was one sealed lately and kept decoded (no decryption, decoding or new binding).', registers: [registry], collect() { this.reset(); this.inc(stateless.recentStates().hits); } });
  new Counter({ name: 'audience_stateless_recent_state_misses_total', help: 'Stateless calls whose state sent back was opened from its bytes (sealed elsewhere, long ago, or under another plan).', registers: [registry], collect() { this.reset(); this.inc(stateless.recentStates().misses); } });
  new Gauge({ name: 'audience_stateless_recent_state_bytes', help: 'Estimated bytes of the states the stateless route sealed lately and keeps decoded (--stateless-cache-bytes).', registers: [registry], collect() { this.set(stateless.recentStates().bytes); } });
  new Gauge({
    name: 'audience_backfill_users_remaining',
    help: 'Users a running backfill sweep or offline computation still has to visit, over all cohorts (D19, D20).',
    registers: [registry],
    collect() {
      let remaining = 0;
      for (const org of cohorts.organizations()) {
        for (const cohort of cohorts.allOf(org)) {
          const progress = backfill.progressOf(cohort);
          if (progress?.state === 'running') remaining += Math.max(0, progress.users_total - progress.users_done);
        }
      }
      this.set(remaining);
    },
  });
  new Gauge({ name: 'audience_store_bytes', help: 'Bytes of the LevelDB data directory on disk.', registers: [registry], async collect() { this.set(await directoryBytes(dataDir)); } });
  new Gauge({
    name: 'audience_store_memory_bytes',
    help: "LevelDB's estimate of the memory it holds (memtables and block cache; leveldb.approximate-memory-usage).",
    registers: [registry],
    collect() {
      const bytes = services.store.memoryBytes?.();
      if (bytes !== undefined) this.set(bytes);
    },
  });

  pipeline.onCommitted((outcome) => {
    ticks.inc();
    if (outcome.events > 0) events.inc(outcome.events);
    if (outcome.snapshots > 0) snapshots.inc(outcome.snapshots);
    tickSeconds.observe(outcome.durationMs / 1000);
    const phases = outcome.phasesMs;
    phaseSeconds.observe({ phase: 'reads' }, phases.reads / 1000);
    phaseSeconds.observe({ phase: 'compute' }, phases.compute / 1000);
    phaseSeconds.observe({ phase: 'build' }, phases.build / 1000);
    phaseSeconds.observe({ phase: 'write' }, phases.write / 1000);
    // Counted here, then one increment per kind: a labelled increment hashes its labels each time, and an event often
    // moves its user in or out of several cohorts at once.
    let entered = 0;
    let exited = 0;
    for (const { entry } of outcome.log) {
      for (const t of entry.transitions) {
        if (t.kind === 'entered') entered++;
        else exited++;
      }
    }
    if (entered > 0) transitions.inc({ kind: 'entered' }, entered);
    if (exited > 0) transitions.inc({ kind: 'exited' }, exited);
  });
  pipeline.onDeadline((lagMs) => {
    deadlines.inc();
    deadlineLag.observe(Math.max(0, lagMs) / 1000);
  });
  loop.onOutcome(({ delivery, result }) => {
    deliveries.inc({ outcome: result });
    if (result === 'delivered' && delivery.last_attempt_at !== null) deliveryLag.observe(Math.max(0, delivery.last_attempt_at - delivery.created_at) / 1000);
  });

  return {
    registry,
    observeResponse(info) {
      requests.inc({ route: info.route, method: methodLabel(info.method), status: String(info.status) });
      requestSeconds.observe({ route: info.route }, info.durationMs / 1000);
    },
  };
}

/** Methods labelled as themselves; any other (a client may send any token) is `other`, so labels stay bounded. */
const LABELLED_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

export function methodLabel(method: string): string {
  return LABELLED_METHODS.has(method) ? method : 'other';
}

async function directoryBytes(dir: string): Promise<number> {
  let total = 0;
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    const info = await stat(join(dir, name)).catch(() => undefined);
    if (info?.isFile() === true) total += info.size;
  }
  return total;
}
