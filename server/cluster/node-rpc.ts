// Asking one named node (issue 15): what only that node's store holds, a reaction's deliveries in its outbox
// (node-tags.ts). Each node answers route requests on the core NATS subject `audience.node.<hex of its id>`, after
// applying every control-plane command published before (a reaction made elsewhere is known). A node that does not
// answer within ASK_MS (stopped, or dead while its heartbeat has not expired yet) makes the request 503.

import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { plainCodec } from '../msgpack-keys.js';
import { ServiceError } from '../errors.js';
import type { Handler } from '../http/index.js';
import { answerOf, runSent, type SentAnswer, type SentRequest } from './requests.js';

const packr = plainCodec();
const nodeSubject = (node: string): string => `audience.node.${Buffer.from(node).toString('hex')}`;

const ASK_MS = 5_000;

export class NodeRpc {
  private subscription: Subscription | undefined;

  constructor(
    private readonly nc: NatsConnection,
    private readonly handlers: ReadonlyMap<string, Handler>,
    private readonly syncControl: () => Promise<void>,
  ) {}

  /** Starts answering as `node`. */
  serve(node: string): void {
    this.subscription ??= this.nc.subscribe(nodeSubject(node), {
      callback: (error, message) => {
        if (error !== null) return;
        const sent = packr.unpack(message.data) as SentRequest;
        void answerOf(async () => {
          await this.syncControl();
          return runSent(this.handlers, sent);
        }).then((answer) => {
          try {
            message.respond(packr.pack(answer));
          } catch {
            // The asker went away (its own timeout); nothing to answer.
          }
        });
      },
    });
  }

  /** Runs `sent` on `node`; 503 when it does not answer. */
  async ask(node: string, sent: SentRequest): Promise<SentAnswer> {
    try {
      return packr.unpack((await this.nc.request(nodeSubject(node), packr.pack(sent), { timeout: ASK_MS })).data) as SentAnswer;
    } catch (error) {
      throw new ServiceError(5000, `Cluster node ${node} holds part of the answer and did not answer; retry shortly.`, String(error), 503);
    }
  }

  stop(): void {
    this.subscription?.unsubscribe();
    this.subscription = undefined;
  }
}
