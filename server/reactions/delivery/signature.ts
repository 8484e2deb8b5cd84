// D37 webhook signatures: `X-Audience-Signature: t={unix seconds},v1={hex HMAC-SHA256(secret, "{t}.{raw body}")}`.
// A receiver recomputes the HMAC over the raw body it got and compares in constant time (README "Reactions").

import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { DeliveryBody } from '../../domain/reactions/contract.js';

export function signDelivery(secret: string, unixSeconds: number, rawBody: string): string {
  const mac = createHmac('sha256', secret).update(`${unixSeconds}.${rawBody}`).digest('hex');
  return `t=${unixSeconds},v1=${mac}`;
}

/** Whether `header` signs `rawBody` with `secret`, made within `toleranceSeconds` of `nowSeconds` (replays refused). */
export function verifySignature(secret: string, header: string, rawBody: string, nowSeconds: number, toleranceSeconds = 300): boolean {
  const match = /^t=(\d{1,12}),v1=([0-9a-f]{64})$/.exec(header);
  if (match === null) return false;
  const t = Number(match[1]);
  if (Math.abs(nowSeconds - t) > toleranceSeconds) return false;
  const expected = Buffer.from(signDelivery(secret, t, rawBody).slice(-64), 'hex');
  return timingSafeEqual(expected, Buffer.from(match[2] as string, 'hex'));
}

/**
 * `X-Audience-Transition`: what the delivery is about (reaction, trigger, cohort, user, time, event), not where or when
 * it was queued. The same transition delivered again by another cluster node after a failover (issue 15: a new
 * delivery, another `id`) carries the same value, so a receiver dedupes on it across nodes as on `id` within one.
 */
export function transitionKey(body: DeliveryBody): string {
  const content = JSON.stringify([body.reaction_id, body.trigger, body.cohort.code, body.user_id, body.time, body.event_id]);
  return createHash('sha256').update(content).digest('base64url');
}
