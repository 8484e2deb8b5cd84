// What a group's batch tells the world besides the events (D36–D38): the global transitions log `t!` (commit order;
// the live stream's cursors), the reactions' outbox (`od!` + `oq!`: a delivery written in the same batch as the
// transition or page load that fires it, D37) and the deadline index `dl!` (D36). One CommitLog per group: cursors and
// outbox sequences are global and taken in build order, which is commit order (writer.ts writes groups in build order).

import type { BatchOp } from '../../store/contract.js';
import type { LoggedTransition } from '../../domain/events/index.js';
import { storedLogEntry } from '../../domain/reactions/log.js';
import {
  deliveryId,
  reactionsKeys,
  type Delivery,
  type FiringReaction,
  type ReactionLookup,
  type ReactionTrigger,
  type TransitionLogEntry,
} from '../../domain/reactions/contract.js';

/** The last transitions-log cursor and outbox sequence taken (0: none yet). */
export interface Cursors {
  log: number;
  outbox: number;
}

/** What a committed group hands to the stream, the delivery loop and the deadline scheduler. */
export interface Committed {
  /** New `t!` entries in commit order. */
  readonly log: readonly { readonly cursor: number; readonly entry: TransitionLogEntry }[];
  /** Reactions that got new pending deliveries. */
  readonly reactions: ReadonlySet<string>;
  /** Deadlines written to the index (D36). */
  readonly deadlines: readonly number[];
  /** New events the batch stored, and how long the group took from its start to its commit (metrics). */
  readonly events: number;
  readonly durationMs: number;
  /** Users' state snapshots the group wrote (due with its steps, or asked for: written behind). */
  readonly snapshots: number;
  /** Where `durationMs` went (metrics: `audience_ingest_group_phase_seconds`). */
  readonly phasesMs: GroupPhases;
}

/**
 * A group's time by phase (ms), from its start to its commit: `reads` (retried ids, users' states, catch-up
 * decisions, imported data), `compute` (the owners' round trip: the task there, the segment steps, the reply back to a
 * main thread that may be busy), `build` (sequences, the writes), `write` (behind earlier groups' batches, then its
 * own, until it commits).
 */
export interface GroupPhases {
  readonly reads: number;
  readonly compute: number;
  readonly build: number;
  readonly write: number;
}

const PAGEVIEW = 'Pageview';

/** Reads the cursors where the last batch left them. */
export async function loadCursors(get: <T>(key: string) => Promise<T | undefined>): Promise<Cursors> {
  const log = await get<number>(reactionsKeys.logCursor());
  const outbox = await get<number>(reactionsKeys.outboxSeq());
  return { log: typeof log === 'number' ? log : 0, outbox: typeof outbox === 'number' ? outbox : 0 };
}

export class CommitLog {
  readonly ops: BatchOp[] = [];
  private readonly entries: { cursor: number; entry: TransitionLogEntry }[] = [];
  private readonly reactions = new Set<string>();
  private readonly deadlines: number[] = [];
  private readonly from: Cursors;

  constructor(
    private readonly cursors: Cursors,
    private readonly lookup: ReactionLookup | undefined,
    /** Commit time (epoch ms): the log's retention and the deliveries' horizon start here. */
    private readonly at: number,
  ) {
    this.from = { ...cursors };
  }

  /**
   * One user's transitions of one step: an event's (`eventId`), or a deadline's / re-evaluation's (null). Live ones
   * fire the cohorts' on_entry / on_exit reactions; a catch-up's (`replay`, replayed history) fire nothing (D37).
   */
  transitions(org: string, user: string, eventId: string | null, transitions: readonly LoggedTransition[], replay = false, quiet = false): void {
    if (transitions.length === 0) return;
    const cursor = ++this.cursors.log;
    const entry: { -readonly [K in keyof TransitionLogEntry]: TransitionLogEntry[K] } = {
      org,
      user,
      event_id: eventId,
      transitions: transitions.map((t) => ({ cohort: t.cohort, kind: t.kind, time: t.time })),
      at: this.at,
    };
    if (replay) entry.replay = true;
    if (quiet) entry.quiet = true;
    this.ops.push({ type: 'put', key: reactionsKeys.logEntry(cursor), value: storedLogEntry(entry) });
    this.entries.push({ cursor, entry });
    if (replay || this.lookup === undefined) return;
    for (const t of transitions) {
      const trigger: ReactionTrigger = t.kind === 'entered' ? 'on_entry' : 'on_exit';
      for (const reaction of this.lookup.firing(org, t.cohort)) {
        if (reaction.trigger === trigger) this.deliver(org, user, reaction, t.time, eventId);
      }
    }
  }

  /** Whether `org` has every_time reactions (else the tick need not track memberships event by event). */
  wantsPageviews(org: string): boolean {
    return this.lookup !== undefined && this.lookup.hasEveryTime(org);
  }

  /**
   * D37 every_time: a page load (`Pageview`) of a user who was in the cohort before that event (called before the
   * event's own transitions are logged: its deliveries come first).
   */
  pageview(org: string, user: string, name: string, eventId: string, time: number, inBefore: Iterable<number>): void {
    if (name !== PAGEVIEW || this.lookup === undefined) return;
    for (const code of inBefore) {
      for (const reaction of this.lookup.firing(org, code)) {
        if (reaction.trigger === 'every_time') this.deliver(org, user, reaction, time, eventId);
      }
    }
  }

  /**
   * D36: the user's next deadline moved from `before` to `after` (either may be +Infinity: none); `due` are the index
   * keys this tick's deadline re-evaluations came from (done). Deletes come before the put: the same key may be both.
   */
  deadline(partition: number, org: string, user: string, before: number, after: number, due: readonly string[] = []): void {
    for (const key of due) this.ops.push({ type: 'del', key });
    if (before === after && due.length === 0) return;
    if (Number.isFinite(before) && before !== after) this.ops.push({ type: 'del', key: reactionsKeys.deadline(partition, before, org, user) });
    if (Number.isFinite(after)) {
      this.ops.push({ type: 'put', key: reactionsKeys.deadline(partition, after, org, user), value: 1 });
      this.deadlines.push(after);
    }
  }

  /** The cursors' writes (once per batch that took any). */
  finish(): BatchOp[] {
    const ops: BatchOp[] = [];
    if (this.cursors.log !== this.from.log) ops.push({ type: 'put', key: reactionsKeys.logCursor(), value: this.cursors.log });
    if (this.cursors.outbox !== this.from.outbox) ops.push({ type: 'put', key: reactionsKeys.outboxSeq(), value: this.cursors.outbox });
    return ops;
  }

  /** The batch failed: cursors go back unless a later group took some meanwhile (gaps are harmless). */
  rollback(taken: Cursors): void {
    if (this.cursors.log === taken.log) this.cursors.log = this.from.log;
    if (this.cursors.outbox === taken.outbox) this.cursors.outbox = this.from.outbox;
  }

  /** Where the cursors stood once this group took its own (for rollback). */
  taken(): Cursors {
    return { ...this.cursors };
  }

  committed(events: number, durationMs: number, snapshots: number, phasesMs: GroupPhases): Committed {
    return { log: this.entries, reactions: this.reactions, deadlines: this.deadlines, events, durationMs, snapshots, phasesMs };
  }

  private deliver(org: string, user: string, reaction: FiringReaction, time: number, eventId: string | null): void {
    const seq = ++this.cursors.outbox;
    const delivery: Delivery = {
      seq,
      org,
      body: {
        id: deliveryId(seq),
        reaction_id: reaction.id,
        trigger: reaction.trigger,
        cohort: { id: reaction.cohort.id, code: reaction.cohort.code, name: reaction.cohort.name },
        user_id: user,
        time: new Date(time).toISOString(),
        event_id: eventId,
      },
      status: 'pending',
      attempts: 0,
      created_at: this.at,
      next_at: this.at,
      last_status: null,
      last_error: null,
      last_attempt_at: null,
    };
    this.ops.push({ type: 'put', key: reactionsKeys.delivery(reaction.id, seq), value: delivery });
    this.ops.push({ type: 'put', key: reactionsKeys.pending(reaction.id, seq), value: user });
    this.reactions.add(reaction.id);
  }
}
