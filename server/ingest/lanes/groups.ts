// Groups of partition ticks (server/ingest/README.md): every lane due in an event-loop turn joins ONE group (one
// executor task, one store batch); one group builds at a time and the next starts as soon as it has built its batch
// (which is then written after the earlier groups', tick/writer.ts); a user in an uncommitted group keeps its later
// items queued (E1).

import { weightOf } from '../../backfill/catchup.js';
import { orgOf, userOf, type CatchUpItem, type Lane, type LaneItem } from './lane.js';
import { userKey } from '../state/cache.js';
import { runTicks, type TickEnv, type TickRun } from '../tick/tick.js';

export class GroupScheduler {
  /** A group is building (reads, compute); the next one starts once it has built its batch. */
  private building = false;
  private kickPending = false;
  /** Lanes due in the next group. */
  private kicked: Lane[] = [];
  /** The groups not committed (or failed) yet. */
  private readonly groups = new Set<GroupRun>();

  constructor(
    private readonly env: TickEnv,
    /** server/backfill/README.md: background catch-ups a lane's part takes after its live items. */
    private readonly catchUpsPerTick: number,
  ) {}

  /** Resolves once every group started so far has committed or failed. */
  async settled(): Promise<void> {
    await Promise.all([...this.groups].map((run) => run.done));
  }

  /**
   * Starts the lane's next tick on the next turn, so that everything arriving meanwhile joins it. Every lane due then
   * joins ONE group: one executor task and one store batch for all of them (tick/tick.ts `runTicks`). One group builds
   * (reads, compute) at a time; the next one starts as soon as it has built its batch, while that batch is written.
   */
  schedule(lane: Lane): void {
    if (!lane.kicked) {
      if (lane.queue.length === 0 && lane.background.length === 0 && !lane.flushWanted) {
        lane.notifyIfIdle();
        return;
      }
      lane.kicked = true;
      this.kicked.push(lane);
    }
    this.kick();
  }

  private kick(): void {
    if (this.building || this.kickPending || this.kicked.length === 0) return;
    this.kickPending = true;
    setImmediate(() => {
      this.kickPending = false;
      this.startGroup();
    });
  }

  private startGroup(): void {
    if (this.building) return;
    const lanes = this.kicked;
    this.kicked = [];
    const runs: TickRun[] = [];
    for (const lane of lanes) {
      lane.kicked = false;
      const run = this.takeRun(lane);
      if (run === undefined) {
        lane.notifyIfIdle();
        continue;
      }
      lane.building += 1;
      lane.inFlight += 1;
      runs.push(run);
    }
    if (runs.length === 0) return;
    this.building = true;
    const group = new GroupRun(this, runs);
    this.groups.add(group);
    group.done = this.runGroup(group);
  }

  /**
   * Runs the group to its commit or failure. An async method and a GroupRun, not callbacks made per group: V8 keeps a
   * closure's optimized code only while a closure holding it lives, so closures made per group were compiled again
   * after every collection (docs/performance.md).
   */
  private async runGroup(run: GroupRun): Promise<void> {
    try {
      await runTicks(this.env, run.runs, run);
    } catch (error) {
      this.env.log(`ingest: tick failed unexpectedly: ${String(error)}`);
    } finally {
      this.groups.delete(run);
      for (const { lane, items } of run.runs) {
        lane.inFlight -= 1;
        for (const item of items) lane.busy.delete(userKey(orgOf(item), userOf(item)));
      }
      if (run.released) for (const { lane } of run.runs) this.schedule(lane);
      else this.release(run);
    }
  }

  /** The group has built its batch (or ended before): the next group may start building. */
  release(run: GroupRun): void {
    if (run.released) return;
    run.released = true;
    this.building = false;
    for (const { lane } of run.runs) lane.building -= 1;
    for (const { lane } of run.runs) this.schedule(lane);
    this.kick();
  }

  /**
   * The lane's part of the next group: its queued items and a bounded number of background catch-ups
   * (server/backfill/README.md: they never starve live work), except those of users still in an uncommitted group
   * (they stay queued, in order, E1); an empty part when only asks to the owners wait (state/residents.ts); undefined
   * when there is nothing to do.
   */
  private takeRun(lane: Lane): TickRun | undefined {
    const busy = lane.busy;
    let items: LaneItem[];
    if (busy.size === 0) {
      items = lane.queue;
      lane.queue = [];
      lane.queued = 0;
    } else {
      items = [];
      const kept: LaneItem[] = [];
      let weight = 0;
      for (const item of lane.queue) {
        if (busy.has(userKey(orgOf(item), userOf(item)))) {
          kept.push(item);
          weight += weightOf(item);
        } else items.push(item);
      }
      lane.queue = kept;
      lane.queued = weight;
    }
    if (lane.background.length > 0) {
      const kept: CatchUpItem[] = [];
      let taken = 0;
      for (const item of lane.background) {
        if (taken < this.catchUpsPerTick && !busy.has(userKey(item.org, item.user))) {
          items.push(item);
          taken += 1;
        } else kept.push(item);
      }
      lane.background = kept;
    }
    const flush = lane.flushWanted;
    lane.flushWanted = false;
    if (items.length === 0 && !flush) return undefined;
    for (const item of items) busy.add(userKey(orgOf(item), userOf(item)));
    return { lane, items };
  }
}

/** One group's lanes and whether it has let the next group start (runTicks' listener). */
class GroupRun {
  released = false;
  /** Settles once the group has committed or failed. */
  done: Promise<void> = Promise.resolve();

  constructor(
    private readonly scheduler: GroupScheduler,
    readonly runs: readonly TickRun[],
  ) {}

  /** runTicks: the group's batch is built. */
  built(): void {
    this.scheduler.release(this);
  }
}
