// The pages behind every error's `docs` link (D10): GET /errors/{status}/{code} answers a short HTML page for each
// catalogue entry under each status it is sent with; anything else is 404 code 3000.

import { CATALOGUE, notFound, type ErrorCode } from '../errors.js';
import { reasonPhrase } from './envelopes.js';
import type { Handler, Reply } from './types.js';

/**
 * Statuses a code is sent with besides its catalogue status: 413 (D2), 431 (request head too large, D44), 405 (wrong
 * method), 404 (the spec's table).
 */
const OTHER_STATUSES: Readonly<Partial<Record<ErrorCode, readonly number[]>>> = {
  1002: [413, 431],
  3000: [405],
  3002: [404],
};

export const DOCS_ROUTE = '/errors/:status/:code';

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The page for (status, code), or undefined when the pair is not one the service sends. */
export function renderDocsPage(status: number, code: number): string | undefined {
  if (!Object.hasOwn(CATALOGUE, code)) return undefined;
  const errorCode = code as ErrorCode;
  const entry = CATALOGUE[errorCode];
  if (status !== entry.status && !(OTHER_STATUSES[errorCode] ?? []).includes(status)) return undefined;
  const title = `${status} ${reasonPhrase(status)}: code ${code}`;
  return [
    '<!doctype html>',
    '<html lang="en"><head><meta charset="utf-8">',
    `<title>${escapeHtml(title)}</title></head><body>`,
    `<h1>${escapeHtml(title)}</h1>`,
    `<p>${escapeHtml(entry.summary)}</p>`,
    `<p>Taxonomy and imports routes name this error <code>${escapeHtml(entry.taxonomyName)}</code>.</p>`,
    '<p>The error body\'s <code>cause</code>, when present, says what exactly was wrong. When you contact support, ' +
      'quote the <code>request_id</code> of the response (also sent as the <code>X-Request-Id</code> header).</p>',
    '</body></html>',
    '',
  ].join('\n');
}

export const serveDocsPage: Handler = (ctx): Reply => {
  const status = ctx.params['status'] ?? '';
  const code = ctx.params['code'] ?? '';
  const page = /^\d{3}$/.test(status) && /^\d{4}$/.test(code) ? renderDocsPage(Number(status), Number(code)) : undefined;
  if (page === undefined) throw notFound('error page');
  return { status: 200, text: page, contentType: 'text/html; charset=utf-8' };
};
