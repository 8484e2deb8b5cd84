// The control plane of a cluster (issue 15): one JetStream stream of commands (a replicated request, an identity
// resolution, a schema's growth, the first organization) that EVERY node applies in stream order to its own store,
// so every node holds the same organizations, keys, workspaces, cohorts, reactions, imports, schemas and aliases.
//
// - A command carries its time and a random seed; applied in a command scope (scope.ts) the handler takes its clock,
//   ids and secret bytes from them, so every node writes the same values.
// - Each command is applied whole (command-store.ts: its writes and `m!control-seq` in one batch): a node killed
//   in the middle resumes after the last command it stored.
// - `submit` publishes a command and resolves with what applying it answered on THIS node, once it is applied here:
//   a node answers a write after its own store holds it (read-your-writes on that node). `sync` waits until this node
//   applied every command published before the call: what another node answered is then readable here too.
// - Identity writes go through the same single stream, so two identifies on different nodes are applied in one order
//   everywhere: resolution is deterministic (the alias-binding race of the design has no second writer).

import { randomBytes, randomUUID } from 'node:crypto';
import type { NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { plainCodec } from '../msgpack-keys.js';
import type { CommandStore } from './command-store.js';
import { inCommandScope } from './scope.js';
import { ensureStream, readInOrder, retrying, type SubjectReader } from './nats.js';

export const CONTROL_STREAM = 'AUDIENCE_CONTROL';
const CONTROL_SUBJECT = 'audience.control';
const STALL_MS = 3000;

const packr = plainCodec();

/** One replicated command as published. */
export interface Command {
  /** The submitter's id for it (its answer is handed back under this id). */
  readonly id: string;
  readonly kind: string;
  /** Epoch ms at submission: the clock of its application on every node. */
  readonly at: number;
  /** 16 random bytes: the ids and secrets of its application on every node. */
  readonly seed: Uint8Array;
  readonly body: unknown;
}

/** Applies one command on this node and answers what its submitter gets (a thrown error is answered as thrown). */
export type CommandHandler = (command: Command) => Promise<unknown>;

interface Waiter {
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/** The control stream failed on this node (its store refused a command's writes): it stops applying commands. */
export class ControlUnavailableError extends Error {}

export class ControlLog {
  private applied = 0;
  private reader: SubjectReader | undefined;
  private readonly answers = new Map<string, Waiter>();
  private readonly seqWaiters: Array<{ seq: number; resolve: () => void; reject: (error: unknown) => void }> = [];
  private failure: Error | undefined;
  private lastProgressAt = Date.now();
  private watchdog: NodeJS.Timeout | undefined;
  private restarting = false;

  private constructor(
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
  ) {}

  static async open(nc: NatsConnection, options: { readonly replicas: number }): Promise<ControlLog> {
    const jsm = await jetstreamManager(nc);
    // Kept whole: a node with an empty store replays every command since the cluster began.
    await ensureStream(jsm, { name: CONTROL_STREAM, subjects: [CONTROL_SUBJECT], num_replicas: options.replicas });
    return new ControlLog(jetstream(nc), jsm);
  }

  /** The last command sequence applied on this node. */
  appliedSeq(): number {
    return this.applied;
  }

  /** Starts applying commands after the store's last one; resolves once it applied every command published before. */
  async start(store: CommandStore, handle: CommandHandler, log: (line: string) => void): Promise<void> {
    this.applied = await store.appliedSeq();
    const apply = async (seq: number, payload: Uint8Array): Promise<void> => {
      this.lastProgressAt = Date.now();
      if (seq <= this.applied) return; // read again after a restarted read
      const command = packr.unpack(payload) as Command;
      let outcome: { ok: true; value: unknown } | { ok: false; error: unknown };
      store.begin();
      try {
        outcome = { ok: true, value: await inCommandScope(seq, command.at, command.seed, () => handle(command)) };
      } catch (error) {
        outcome = { ok: false, error };
      }
      try {
        await store.commit(seq);
      } catch (error) {
        this.fail(new ControlUnavailableError(`this node's store refused control command ${seq}; it applies no more commands: ${String(error)}`));
        log(this.failure?.message ?? String(error));
        throw error;
      }
      this.applied = seq;
      const waiter = this.answers.get(command.id);
      if (waiter !== undefined) {
        this.answers.delete(command.id);
        if (outcome.ok) waiter.resolve(outcome.value);
        else waiter.reject(outcome.error);
      }
      this.release();
    };
    await this.read(apply, log);
    // An ordered consumer can go quiet without ending when its NATS server restarts: while someone waits for a
    // command and nothing arrived for STALL_MS, the read is started again.
    this.watchdog = setInterval(() => {
      const waiting = this.answers.size > 0 || this.seqWaiters.length > 0;
      if (!waiting || this.restarting || this.failure !== undefined || Date.now() - this.lastProgressAt < STALL_MS) return;
      this.restarting = true;
      log(`cluster: the control log's read stalled at ${this.applied}; reading again`);
      void (async () => {
        await this.reader?.stop();
        this.lastProgressAt = Date.now();
        if (this.failure === undefined) await this.read(apply, log);
      })()
        .catch((error: unknown) => log(`cluster: reading the control log again failed: ${String(error)}`))
        .finally(() => (this.restarting = false));
    }, 1000);
    this.watchdog.unref();
    await retrying('catching up with the control log', () => this.sync());
  }

  /** Reads from the last applied command; a read that ends (a restarted NATS server) is started again. */
  private async read(apply: (seq: number, payload: Uint8Array) => Promise<void>, log: (line: string) => void): Promise<void> {
    const reader = await retrying('reading the control log', () => readInOrder(this.js, CONTROL_STREAM, CONTROL_SUBJECT, this.applied, apply));
    this.reader = reader;
    reader.done.catch((error: unknown) => {
      if (this.failure !== undefined) return;
      log(`cluster: the control log's read ended (${String(error)}); reading again from ${this.applied}`);
      setTimeout(() => void this.read(apply, log).catch((again: unknown) => this.fail(again instanceof Error ? again : new Error(String(again)))), 250).unref();
    });
  }

  /** Publishes a command and resolves with its answer once this node applied it. */
  async submit(kind: string, body: unknown): Promise<unknown> {
    if (this.failure !== undefined) throw this.failure;
    const command: Command = { id: randomUUID(), kind, at: Date.now(), seed: randomBytes(16), body };
    const answer = new Promise<unknown>((resolve, reject) => this.answers.set(command.id, { resolve, reject }));
    try {
      await this.js.publish(CONTROL_SUBJECT, packr.pack(command));
    } catch (error) {
      this.answers.delete(command.id);
      throw error;
    }
    return answer;
  }

  /** Resolves once this node applied every command published before the call. */
  async sync(): Promise<void> {
    if (this.failure !== undefined) throw this.failure;
    const info = await this.jsm.streams.info(CONTROL_STREAM);
    await this.waitApplied(info.state.last_seq);
  }

  private waitApplied(seq: number): Promise<void> {
    if (this.applied >= seq) return Promise.resolve();
    return new Promise((resolve, reject) => this.seqWaiters.push({ seq, resolve, reject }));
  }

  private release(): void {
    for (let i = this.seqWaiters.length - 1; i >= 0; i--) {
      const waiter = this.seqWaiters[i] as (typeof this.seqWaiters)[number];
      if (waiter.seq <= this.applied) {
        this.seqWaiters.splice(i, 1);
        waiter.resolve();
      }
    }
  }

  private fail(error: Error): void {
    this.failure ??= error;
    for (const waiter of this.answers.values()) waiter.reject(this.failure);
    this.answers.clear();
    for (const waiter of this.seqWaiters.splice(0)) waiter.reject(this.failure);
  }

  async stop(): Promise<void> {
    this.failure ??= new ControlUnavailableError('this node is stopping');
    if (this.watchdog !== undefined) clearInterval(this.watchdog);
    await this.reader?.stop();
    this.fail(new ControlUnavailableError('this node is stopping'));
  }
}
