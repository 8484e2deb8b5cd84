// Asking the owner of a partition (issue 15): while a node owns a partition it answers requests on the core NATS
// subject `audience.partition.<p>`, after applying every event of the partition published before the request (a
// read sees every acknowledged event) and every control-plane command (a cohort made elsewhere is known). A request finding no owner (a failover in progress: no responders, or a node
// that just lost it) is asked again until ASK_MS has passed; then it is 503, to be retried by the client.

import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { plainCodec } from '../msgpack-keys.js';
import { ServiceError } from '../errors.js';
import type { Handler } from '../http/index.js';
import type { IngestPipeline } from '../ingest/types.js';
import type { PartitionOwners } from './owners.js';
import { answerOf, runSent, type SentAnswer, type SentRequest } from './requests.js';

const packr = plainCodec();
const partitionSubject = (partition: number): string => `audience.partition.${partition}`;

/** How long a request looks for an owner before it is answered 503. */
const ASK_MS = 20_000;
const RETRY_MS = 100;

export type OwnerRequest =
  | { readonly kind: 'route'; readonly sent: SentRequest }
  | { readonly kind: 'memberships'; readonly org: string; readonly user: string };

type OwnerAnswer = { readonly notOwner: true } | { readonly memberships: readonly number[] } | { readonly answer: SentAnswer };

export class OwnerRpc {
  private readonly subscriptions = new Map<number, Subscription>();

  constructor(
    private readonly nc: NatsConnection,
    private readonly handlers: ReadonlyMap<string, Handler>,
    private readonly owners: PartitionOwners,
    private readonly local: IngestPipeline,
    /** Brings this node's control plane to where the asking node's stood (a cohort or user made elsewhere just now). */
    private readonly syncControl: () => Promise<void>,
  ) {}

  /** Starts answering for `partition` (call once this node owns it). */
  serve(partition: number): void {
    if (this.subscriptions.has(partition)) return;
    const subscription = this.nc.subscribe(partitionSubject(partition), {
      callback: (error, message) => {
        if (error !== null) return;
        void this.answer(partition, packr.unpack(message.data) as OwnerRequest).then((answer) => {
          try {
            message.respond(packr.pack(answer));
          } catch {
            // The asker went away (its own timeout); nothing to answer.
          }
        });
      },
    });
    this.subscriptions.set(partition, subscription);
  }

  unserve(partition: number): void {
    this.subscriptions.get(partition)?.unsubscribe();
    this.subscriptions.delete(partition);
  }

  private async answer(partition: number, request: OwnerRequest): Promise<OwnerAnswer> {
    if (!(await this.owners.caughtUp(partition).catch(() => false))) return { notOwner: true };
    if (request.kind === 'memberships') return { memberships: await this.local.membershipsOf(request.org, request.user) };
    return {
      answer: await answerOf(async () => {
        await this.syncControl();
        return runSent(this.handlers, request.sent);
      }),
    };
  }

  /** Asks the owner of `partition`, waiting out a failover (up to ASK_MS). */
  async ask(partition: number, request: OwnerRequest): Promise<SentAnswer | readonly number[]> {
    const deadline = Date.now() + ASK_MS;
    const payload = packr.pack(request);
    for (;;) {
      const left = deadline - Date.now();
      if (left <= 0) break;
      try {
        const reply = packr.unpack((await this.nc.request(partitionSubject(partition), payload, { timeout: Math.min(left, 10_000) })).data) as OwnerAnswer;
        if ('memberships' in reply) return reply.memberships;
        if ('answer' in reply) return reply.answer;
      } catch {
        // No responders (nobody owns it yet) or a timeout: ask again.
      }
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    }
    throw new ServiceError(5000, 'The owner of this user is being replaced; retry shortly.', `partition ${partition} had no owner for ${ASK_MS / 1000} s`, 503);
  }

  stop(): void {
    for (const partition of [...this.subscriptions.keys()]) this.unserve(partition);
  }
}
