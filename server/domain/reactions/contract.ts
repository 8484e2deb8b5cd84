// The shared contract of the reactions area (D36 deadlines, D37 reactions and their outbox, D38 the transitions log
// the live stream reads): record shapes and store keys. The ingest tick writes the transitions log, the outbox and
// the deadline index in the same batch as the events that caused them; the reactions registry, the delivery loop
// and the stream read them. Keys are listed in server/store/layout.ts.

import { key, keyPart, scanPrefix, seqPart } from '../../store/layout.js';
import { timePart } from '../events/keys.js';

export type ReactionTrigger = 'on_entry' | 'on_exit' | 'every_time';
export type ReactionState = 'Enabled' | 'Disabled';

/** D37: a reaction as stored (`r!{org}!{id}`); `secret` and `organization_id` never go on the wire after creation. */
export interface Reaction {
  readonly id: string;
  readonly name: string;
  readonly cohort_id: string;
  readonly cohort_code: number;
  readonly trigger: ReactionTrigger;
  readonly action: { readonly type: 'webhook'; readonly url: string };
  readonly state: ReactionState;
  readonly workspace_id: string;
  readonly created_at: string;
  readonly last_updated_at: string;
  /** The webhook signing secret (hex), shown once in the create response. */
  readonly secret: string;
  readonly organization_id: string;
}

/** What the ingest tick needs of a reaction to fill the outbox: which cohort and trigger fire it. */
export interface FiringReaction {
  readonly id: string;
  readonly trigger: ReactionTrigger;
  readonly cohort: { readonly id: string; readonly code: number; readonly name: string };
}

/** The reactions the tick consults (implemented by the reactions registry; in memory, no I/O). */
export interface ReactionLookup {
  /** Enabled reactions of `org` on cohort `code` (any trigger); empty when none. */
  firing(org: string, code: number): readonly FiringReaction[];
  /** Whether `org` has any enabled `every_time` reaction (so the tick looks at Pageview events at all). */
  hasEveryTime(org: string): boolean;
}

/** The JSON body POSTed to the webhook (D37). */
export interface DeliveryBody {
  readonly id: string;
  readonly reaction_id: string;
  readonly trigger: ReactionTrigger;
  readonly cohort: { readonly id: string; readonly code: number; readonly name: string };
  readonly user_id: string;
  /** ISO 8601 time of the transition (the event's effective time, or the deadline). */
  readonly time: string;
  /** The causing event's id; null for a deadline (D36). */
  readonly event_id: string | null;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

/** A delivery as stored (`od!{reactionId}!{seq}`): the body it sends and where it stands. */
export interface Delivery {
  /** The global outbox sequence (commit order); the id is `deliveryId(seq)`. */
  readonly seq: number;
  readonly org: string;
  readonly body: DeliveryBody;
  readonly status: DeliveryStatus;
  /** Attempts made so far. */
  readonly attempts: number;
  /** Epoch ms the delivery was written (its 24-hour horizon starts here). */
  readonly created_at: number;
  /** Epoch ms of the next attempt (pending only). */
  readonly next_at: number;
  /** HTTP status of the last attempt, or null (no answer: timeout, refused). */
  readonly last_status: number | null;
  readonly last_error: string | null;
  /** Epoch ms of the last attempt, or null. */
  readonly last_attempt_at: number | null;
  /** Epoch ms of the last manual retry of a failed delivery (its new 24-hour horizon starts here). */
  readonly retried_at?: number;
}

/** A delivery's stable id (D37: the same across retries and restarts): from its global outbox sequence. */
export function deliveryId(seq: number): string {
  return `dlv_${seqPart(seq)}`;
}

/** The outbox sequence of a delivery id, or undefined when it is not one. */
export function deliverySeqOf(id: string): number | undefined {
  const match = /^dlv_([0-9a-f]{14})$/.exec(id);
  return match === null ? undefined : parseInt(match[1] as string, 16);
}

/** One entry of the global transitions log `t!{cursor}` (D38 cursors): one user's transitions of one commit step. */
export interface TransitionLogEntry {
  readonly org: string;
  readonly user: string;
  /** The causing event's id; null for a deadline (D36), a re-evaluation (E20) or a catch-up. */
  readonly event_id: string | null;
  readonly transitions: readonly { readonly cohort: number; readonly kind: 'entered' | 'exited'; readonly time: number }[];
  /** A catch-up's (replayed history, D19): not live, never streamed nor delivered. */
  readonly replay?: true;
  /**
   * Repeats what an earlier owner of the user's partition already logged (a cluster node replaying or catching up a
   * partition it took over, issue 15): kept locally, never published to the cluster's transitions stream.
   */
  readonly quiet?: true;
  /** Epoch ms of the commit (the 24-hour retention of D38 is measured on it). */
  readonly at: number;
}

export const reactionsKeys = {
  /** D37 reaction record. */
  reaction: (org: string, id: string): string => key('r', org, id),
  reactionPrefix: (org: string): string => scanPrefix('r', org),
  allReactionsPrefix: (): string => 'r!',
  /** Delivery record, per reaction in commit order (list, retry). */
  delivery: (reactionId: string, seq: number): string => key('od', reactionId, seqPart(seq)),
  deliveryPrefix: (reactionId: string): string => scanPrefix('od', reactionId),
  /** Pending delivery queue, per reaction in commit order (value: the user id, for per-user order). */
  pending: (reactionId: string, seq: number): string => key('oq', reactionId, seqPart(seq)),
  pendingPrefix: (reactionId: string): string => scanPrefix('oq', reactionId),
  /** The last outbox sequence taken (written once per batch that took one). */
  outboxSeq: (): string => 'os',
  /** D38 global transitions log. */
  logEntry: (cursor: number): string => key('t', seqPart(cursor)),
  logPrefix: (): string => 't!',
  /** The last transitions-log cursor taken (written once per batch that took one). */
  logCursor: (): string => 'tc',
  /** D36 deadline index: the user is due for a re-evaluation at `time`. */
  deadline: (partition: number, time: number, org: string, user: string): string =>
    key('dl', seqPart(partition), timePart(time), org, keyPart(user)),
  deadlinePrefix: (partition: number): string => scanPrefix('dl', seqPart(partition)),
};
