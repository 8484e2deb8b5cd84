// The opaque pagination token of segment lists (D26): the key part of the last code on the page, base64url JSON.

import { badParameter } from '../../errors.js';

export function encodePageToken(lastCodePart: string): string {
  return Buffer.from(JSON.stringify({ after: lastCodePart }), 'utf8').toString('base64url');
}

/** 1000 for any token this service did not issue. */
export function decodePageToken(token: string): string {
  try {
    const decoded: unknown = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
    if (typeof decoded === 'object' && decoded !== null && typeof (decoded as { after?: unknown }).after === 'string') {
      return (decoded as { after: string }).after;
    }
  } catch {
    // fall through: an undecodable token is the same error as a well-formed foreign one
  }
  throw badParameter('The pagination token is invalid.', 'pagination_token: not a token this service issued');
}
