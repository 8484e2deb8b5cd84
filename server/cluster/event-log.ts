// The cluster's event log (issue 15): one JetStream stream whose subjects are the partitions
// (`audience.events.<p>`), the partition count fixed when the cluster is created (the first node writes it to the
// `audience_cluster` KV bucket with `create`; every later node reads it). A publish carries the event id as
// `Nats-Msg-Id`, so a retried publish inside the stream's duplicate window is stored once, and is answered only after
// JetStream acknowledged it (replicated when the stream is). A partition is read in order from any stream sequence
// with an ordered consumer: the owner resumes after the last sequence it applied; a node taking a partition over
// replays it from where its own store stands. The stream is the changelog another node restores from.

import type { NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { ensureStream, lastSeqOf, readInOrder, type SubjectReader } from './nats.js';

export const EVENTS_STREAM = 'AUDIENCE_EVENTS';
export const eventSubject = (partition: number): string => `audience.events.${partition}`;
const CLUSTER_BUCKET = 'audience_cluster';
/** How long a repeated event id is recognised by the stream (D29 retries within it are stored once). */
const DUPLICATE_WINDOW_NS = 2 * 60 * 1_000_000_000;

export interface EventLogOptions {
  /** Partitions of a new cluster; an existing cluster keeps the count it was created with. */
  readonly partitions: number;
  /** JetStream replicas of the stream and buckets (1 for one nats-server, 3 for an R3 cluster). */
  readonly replicas: number;
}

export interface Published {
  readonly seq: number;
  /** The id was published before, inside the duplicate window: nothing new was stored. */
  readonly duplicate: boolean;
}

export class EventLog {
  private constructor(
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    /** The cluster's partition count (fixed at creation). */
    readonly partitions: number,
  ) {}

  /** Joins (or creates) the cluster's stream; answers the log with the cluster's partition count. */
  static async open(nc: NatsConnection, options: EventLogOptions): Promise<EventLog> {
    const jsm = await jetstreamManager(nc);
    const cluster = await new Kvm(nc).create(CLUSTER_BUCKET, { history: 1, replicas: options.replicas });
    let partitions: number;
    try {
      await cluster.create('partitions', String(options.partitions));
      partitions = options.partitions;
    } catch {
      const entry = await cluster.get('partitions');
      partitions = Number(entry?.string());
      if (!Number.isInteger(partitions) || partitions < 1) throw new Error(`the cluster's partition count is unreadable: ${entry?.string()}`);
    }
    await ensureStream(jsm, { name: EVENTS_STREAM, subjects: ['audience.events.*'], num_replicas: options.replicas, duplicate_window: DUPLICATE_WINDOW_NS });
    return new EventLog(jetstream(nc), jsm, partitions);
  }

  /** Stores one event of `partition` (or finds it stored under the same id); resolves once JetStream acknowledged. */
  async publish(partition: number, payload: Uint8Array, id: string): Promise<Published> {
    const ack = await this.js.publish(eventSubject(partition), payload, { msgID: id });
    return { seq: ack.seq, duplicate: ack.duplicate };
  }

  /**
   * Reads `partition` in order from the message after stream sequence `afterSeq`, then live; `apply` runs one message
   * at a time (the next is not read until it resolves).
   */
  read(partition: number, afterSeq: number, apply: (seq: number, payload: Uint8Array) => Promise<void> | void): Promise<SubjectReader> {
    return readInOrder(this.js, EVENTS_STREAM, eventSubject(partition), afterSeq, apply);
  }

  /** The sequence of the partition's last event (0: none): a read that waits for it sees every acknowledged event. */
  lastSeq(partition: number): Promise<number> {
    return lastSeqOf(this.jsm, EVENTS_STREAM, eventSubject(partition));
  }

  /** The stored payload at stream sequence `seq` (a duplicate publish answers the first one's). */
  async payloadAt(seq: number): Promise<Uint8Array | undefined> {
    return (await this.jsm.streams.getMessage(EVENTS_STREAM, { seq }))?.data;
  }
}
