// Where the cores went during one run of the server under test: its CPU time (all threads, its main thread, its
// partition owners' threads, and the rest: V8's helper threads, libuv's pool running LevelDB's reads and writes,
// LevelDB's compaction) and this bench process's (the load generator), each divided by the run's wall time, from
// /proc; and, from the server's /metrics, how many events each ingest group committed, how long a group took from
// start to commit (and how much of it was the owners' round trip), how many groups shared a store batch, how many
// state lookups found the user resident (and how many stateless calls started from a state the server kept since
// sealing it), how many state snapshots were written and how many users were re-evaluated at a deadline (D36) per
// event. So each HTTP row also says what bounded it.

import { threadCpuTicks, type Running } from './processes.js';

/** Clock ticks per second of /proc's CPU times (USER_HZ; 100 on Linux). */
const TICKS_PER_SECOND = 100;

export interface RunUsage {
  /** Cores used by the server (CPU seconds over wall seconds) and by its main thread. */
  readonly serverCores: number;
  readonly mainCores: number;
  /** By its partition owners' threads (all of them; 0 with `--threads 0`: the main thread owns the partitions). */
  readonly ownerCores: number;
  /** By its other threads: V8's helpers (GC, compilation), libuv's pool (LevelDB's reads and writes), LevelDB's compaction. */
  readonly otherCores: number;
  /** Cores used by this process: autocannon and the bench. */
  readonly loadGeneratorCores: number;
  /** Events stored per ingest group commit, and a group's mean time from start to commit (ms). */
  readonly eventsPerGroup: number;
  readonly groupMs: number;
  /** Of a group's time, its owners' round trip (ms, mean; `audience_ingest_group_phase_seconds{phase="compute"}`). */
  readonly ownersMs: number;
  /** The other phases of a group's time (ms, means): its reads, building its writes, and its write until committed. */
  readonly readsMs: number;
  readonly buildMs: number;
  readonly writeMs: number;
  /** Groups per store batch (groups built while a batch is written share the next one). */
  readonly groupsPerBatch: number;
  /** Share of the state lookups that found the user resident (the others loaded a snapshot and later events). */
  readonly residentShare: number;
  /**
   * Share of the stateless calls with a state sent back that started from a copy the server kept since it sealed it
   * (routes/segmentation/recent-states.ts); NaN when there were none.
   */
  readonly keptStateShare: number;
  /** Users' state snapshots written per 1,000 events stored. */
  readonly snapshotsPerThousand: number;
  /** Users re-evaluated at a deadline (D36) per 1,000 events stored (each re-evaluation also writes a snapshot). */
  readonly deadlinesPerThousand: number;
}

interface Counters {
  readonly events: number;
  readonly groups: number;
  readonly groupSeconds: number;
  readonly ownersSeconds: number;
  readonly readsSeconds: number;
  readonly buildSeconds: number;
  readonly writeSeconds: number;
  readonly batches: number;
  readonly hits: number;
  readonly misses: number;
  readonly kept: number;
  readonly opened: number;
  readonly snapshots: number;
  readonly deadlines: number;
}

async function counters(url: string): Promise<Counters | undefined> {
  try {
    const text = await (await fetch(`${url}/metrics`)).text();
    const read = (name: string): number => {
      const line = text.split('\n').find((l) => l.startsWith(`${name} `));
      return line === undefined ? Number.NaN : Number(line.slice(name.length + 1));
    };
    return {
      events: read('audience_ingest_events_total'),
      groups: read('audience_ingest_ticks_total'),
      groupSeconds: read('audience_ingest_tick_duration_seconds_sum'),
      ownersSeconds: read('audience_ingest_group_phase_seconds_sum{phase="compute"}'),
      readsSeconds: read('audience_ingest_group_phase_seconds_sum{phase="reads"}'),
      buildSeconds: read('audience_ingest_group_phase_seconds_sum{phase="build"}'),
      writeSeconds: read('audience_ingest_group_phase_seconds_sum{phase="write"}'),
      batches: read('audience_ingest_store_batches_total'),
      hits: read('audience_state_cache_hits_total'),
      misses: read('audience_state_cache_misses_total'),
      kept: read('audience_stateless_recent_state_hits_total'),
      opened: read('audience_stateless_recent_state_misses_total'),
      snapshots: read('audience_state_snapshots_total'),
      deadlines: read('audience_deadlines_evaluated_total'),
    };
  } catch {
    return undefined;
  }
}

/** Runs `load` against `server` and measures what the server and this process used meanwhile. */
export async function withUsage<T>(server: Running, load: () => Promise<T>): Promise<{ result: T; usage: RunUsage }> {
  const before = await threadCpuTicks(server.pid);
  const metricsBefore = await counters(server.url);
  const ownBefore = process.cpuUsage();
  const start = performance.now();
  const result = await load();
  const seconds = (performance.now() - start) / 1000;
  const own = process.cpuUsage(ownBefore);
  const after = await threadCpuTicks(server.pid);
  const metricsAfter = await counters(server.url);
  const cores = (ticks: number): number => ticks / TICKS_PER_SECOND / seconds;
  let owners = 0;
  let others = 0;
  for (const [tid, ticks] of after.others) {
    const used = ticks - (before.others.get(tid) ?? 0);
    if (after.owners.has(tid)) owners += used;
    else others += used;
  }
  const moved = (name: keyof Counters): number => (metricsAfter !== undefined && metricsBefore !== undefined ? metricsAfter[name] - metricsBefore[name] : Number.NaN);
  const groups = moved('groups');
  const hits = moved('hits');
  const kept = moved('kept');
  const keptOrOpened = kept + moved('opened');
  return {
    result,
    usage: {
      serverCores: cores(after.main - before.main + owners + others),
      mainCores: cores(after.main - before.main),
      ownerCores: cores(owners),
      otherCores: cores(others),
      loadGeneratorCores: (own.user + own.system) / 1e6 / seconds,
      eventsPerGroup: moved('events') / groups,
      groupMs: (moved('groupSeconds') * 1000) / groups,
      ownersMs: (moved('ownersSeconds') * 1000) / groups,
      readsMs: (moved('readsSeconds') * 1000) / groups,
      buildMs: (moved('buildSeconds') * 1000) / groups,
      writeMs: (moved('writeSeconds') * 1000) / groups,
      groupsPerBatch: groups / moved('batches'),
      residentShare: hits / (hits + moved('misses')),
      keptStateShare: keptOrOpened > 0 ? kept / keptOrOpened : Number.NaN,
      snapshotsPerThousand: (moved('snapshots') * 1000) / moved('events'),
      deadlinesPerThousand: (moved('deadlines') * 1000) / moved('events'),
    },
  };
}
