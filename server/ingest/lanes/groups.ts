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
  private readonly groups = new Set<Promise<void>>();

  constructor(
    private readonly env: TickEnv,
    /** server/backfill/README.md: background catch-ups a lane's part takes after its live items. */
    private readonly catchUpsPerTick: number,
  ) {}

  /** Resolves once every group started so far has committed or failed. */
  async settled(): Promise<void> {
    await Promise.all([...this.groups]);
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
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      this.building = false;
      for (const { lane } of runs) lane.building -= 1;
      for (const { lane } of runs) this.schedule(lane);
      this.kick();
    };
    const group: Promise<void> = runTicks(this.env, runs, release)
      .catch((error: unknown) => this.env.log(`ingest: tick failed unexpectedly: ${String(error)}`))
      .finally(() => {
        this.groups.delete(group);
        for (const { lane, items } of runs) {
          lane.inFlight -= 1;
          for (const item of items) lane.busy.delete(userKey(orgOf(item), userOf(item)));
        }
        if (released) for (const { lane } of runs) this.schedule(lane);
        else release();
      });
    this.groups.add(group);
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
