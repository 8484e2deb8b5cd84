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

/**
 * Resolves once JetStream answers on this connection (a cluster's servers elect a meta leader after they start, and a
 * restarted server catches up before it serves JetStream again); rejects after `timeoutMs`.
 */
export async function waitForJetStream(nc: NatsConnection, timeoutMs = 60_000): Promise<JetStreamManager> {
  return retrying(
    'waiting for JetStream',
    async () => {
      const jsm = await jetstreamManager(nc, { timeout: 2_000 });
      await jsm.getAccountInfo();
      return jsm;
    },
    timeoutMs,
  );
}

/**
 * Runs a JetStream setup step again until it succeeds (a cluster electing leaders answers some requests with
 * timeouts or "not enabled" for a few seconds); rejects with the last error after `timeoutMs`.
 */
export async function retrying<T>(what: string, work: () => Promise<T>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await work();
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`${what} failed for ${timeoutMs} ms: ${String(error)}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
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
  let stopped = false;
  const done = (async () => {
    try {
      for await (const message of messages) await apply(message.seq, message.data);
    } catch (error) {
      messages.stop();
      throw error;
    }
    // The messages can end without stop() (the consumer gone with a restarted server): the caller reads again.
    if (!stopped) throw new Error(`the read of ${subject} ended`);
  })();
  return {
    done,
    stop: async () => {
      stopped = true;
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
