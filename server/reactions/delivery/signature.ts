// D37 webhook signatures: `X-Audience-Signature: t={unix seconds},v1={hex HMAC-SHA256(secret, "{t}.{raw body}")}`.
// A receiver recomputes the HMAC over the raw body it got and compares in constant time (README "Reactions").

import { createHmac, timingSafeEqual } from 'node:crypto';

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
