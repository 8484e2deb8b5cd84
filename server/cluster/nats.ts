// What every part of a cluster node does with NATS (issue 15): connect (reconnecting for ever), make sure a stream
// or bucket exists, read one subject of a stream in order from a sequence, and ask a subject's last sequence.

import { connect, type NatsConnection } from '@nats-io/transport-node';
import {
  DeliverPolicy,
  jetstreamManager,
  type ConsumerMessages,
  type JetStreamClient,
  type JetStreamManager,
  type StreamConfig,
} from '@nats-io/jetstream';

/** Connects to the cluster's NATS servers; a lost connection is retried for ever (the node keeps serving reads). */
export async function connectCluster(servers: readonly string[], name: string): Promise<NatsConnection> {
  return connect({ servers: [...servers], name, maxReconnectAttempts: -1, reconnectTimeWait: 250, waitOnFirstConnect: true, timeout: 10_000 });
}

/** Creates the stream unless it exists (an existing stream keeps its configuration). */
export async function ensureStream(jsm: JetStreamManager, config: Partial<StreamConfig> & { name: string; subjects: string[] }): Promise<void> {
  try {
    await jsm.streams.info(config.name);
  } catch {
    try {
      await jsm.streams.add(config);
    } catch (error) {
      // Another node created it in between.
      await jsm.streams.info(config.name).catch(() => {
        throw error;
      });
    }
  }
}

export interface SubjectReader {
  /** Settles when reading ends: resolves after stop(), rejects with the error when `apply` failed (reading stops). */
  readonly done: Promise<void>;
  stop(): Promise<void>;
}

/**
 * Reads `subject` of `stream` in order from the message after stream sequence `afterSeq`, then live, with an ordered
 * consumer (nats-server 2.9 needs the single `filter_subject` form); `apply` runs one message at a time.
 */
export async function readInOrder(
  js: JetStreamClient,
  stream: string,
  subject: string,
  afterSeq: number,
  apply: (seq: number, payload: Uint8Array) => Promise<void> | void,
): Promise<SubjectReader> {
  const consumer = await js.consumers.get(stream, {
    filter_subjects: subject,
    ...(afterSeq > 0 ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: afterSeq + 1 } : { deliver_policy: DeliverPolicy.All }),
  });
  const messages: ConsumerMessages = await consumer.consume();
  const done = (async () => {
    try {
      for await (const message of messages) await apply(message.seq, message.data);
    } catch (error) {
      messages.stop();
      throw error;
    }
  })();
  return {
    done,
    stop: async () => {
      messages.stop();
      await done.catch(() => undefined);
    },
  };
}

/** The stream sequence of the last message on `subject` (0 when it has none). */
export async function lastSeqOf(jsm: JetStreamManager, stream: string, subject: string): Promise<number> {
  const message = await jsm.streams.getMessage(stream, { last_by_subj: subject });
  return message?.seq ?? 0;
}

export { jetstreamManager };
