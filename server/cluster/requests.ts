// A route call as a cluster node sends it elsewhere (issue 15): to every node as a control-plane command, or to the
// owner of a user's partition as a read. The request travels as the receiving node saw it (its transport security
// and peer included, D7), and is run there by the same route handler; the answer, or the ServiceError, comes back.

import { Context, parseJsonBody } from '../http/index.js';
import type { Handler, Reply, RequestContext } from '../http/index.js';
import { ServiceError } from '../errors.js';

export interface SentRequest {
  /** `METHOD pattern`: which handler runs it. */
  readonly route: string;
  readonly method: string;
  readonly path: string;
  readonly params: Readonly<Record<string, string>>;
  readonly query: string;
  readonly headers: Readonly<Record<string, string>>;
  /** Whether the route parsed a body (it is parsed again from the raw bytes). */
  readonly hasBody: boolean;
  readonly rawBody: Uint8Array;
  readonly requestId: string;
  readonly transportSecure: boolean;
  readonly remoteAddress: string;
}

export const routeId = (method: string, pattern: string): string => `${method} ${pattern}`;

export function toSentRequest(route: string, ctx: RequestContext): SentRequest {
  return {
    route,
    method: ctx.method,
    path: ctx.path,
    params: ctx.params,
    query: ctx.query.toString(),
    headers: ctx.headers,
    hasBody: ctx.body !== undefined,
    rawBody: ctx.rawBody,
    requestId: ctx.requestId,
    transportSecure: ctx.transportSecure,
    remoteAddress: ctx.remoteAddress,
  };
}

export function toContext(sent: SentRequest): RequestContext {
  const rawBody = Buffer.from(sent.rawBody.buffer, sent.rawBody.byteOffset, sent.rawBody.byteLength);
  return new Context(
    sent.method,
    sent.path,
    sent.params,
    sent.query,
    sent.headers,
    sent.hasBody ? parseJsonBody(rawBody) : undefined,
    rawBody,
    sent.requestId,
    sent.transportSecure,
    sent.remoteAddress,
  );
}

/** An answer as it travels back: the reply, or the error the handler threw. */
export type SentAnswer =
  | { readonly reply: Reply }
  | { readonly error: { readonly code: number; readonly message: string; readonly detail?: string; readonly status: number } }
  | { readonly unexpected: string };

export async function runSent(handlers: ReadonlyMap<string, Handler>, sent: SentRequest): Promise<Reply> {
  const handler = handlers.get(sent.route);
  if (handler === undefined) throw new Error(`no route ${sent.route} on this node`);
  return handler(toContext(sent));
}

export async function answerOf(work: () => Promise<Reply>): Promise<SentAnswer> {
  try {
    return { reply: await work() };
  } catch (error) {
    if (error instanceof ServiceError) {
      return { error: { code: error.code, message: error.message, status: error.status, ...(error.detail === undefined ? {} : { detail: error.detail }) } };
    }
    return { unexpected: error instanceof Error ? (error.stack ?? error.message) : String(error) };
  }
}

/** The reply, or the error thrown again on this side (an unexpected one as an Error: answered 500 code 5000). */
export function replyOf(answer: SentAnswer): Reply {
  if ('reply' in answer) return answer.reply;
  if ('error' in answer) {
    const { code, message, detail, status } = answer.error;
    throw new ServiceError(code as ConstructorParameters<typeof ServiceError>[0], message, detail, status);
  }
  throw new Error(`the request failed on another node: ${answer.unexpected}`);
}
