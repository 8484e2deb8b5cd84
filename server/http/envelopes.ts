// Renders a ServiceError in the envelope of a route's area: cohort/segmentation/admin/plain (D10), identity
// (D10 without type/status_code; the flat 3002 body of D12) and taxonomy/imports (D13).

import { STATUS_CODES } from 'node:http';
import { CATALOGUE, type ServiceError } from '../errors.js';
import type { Area } from './types.js';

/** The RFC section that defines each status (D10), used as `error.type`. */
const STATUS_TYPE: Readonly<Record<number, string>> = {
  400: 'https://tools.ietf.org/html/rfc7231#section-6.5.1',
  401: 'https://tools.ietf.org/html/rfc7235#section-3.1',
  403: 'https://tools.ietf.org/html/rfc7231#section-6.5.3',
  404: 'https://tools.ietf.org/html/rfc7231#section-6.5.4',
  405: 'https://tools.ietf.org/html/rfc7231#section-6.5.5',
  409: 'https://tools.ietf.org/html/rfc7231#section-6.5.8',
  413: 'https://tools.ietf.org/html/rfc7231#section-6.5.11',
  431: 'https://tools.ietf.org/html/rfc6585#section-5',
  500: 'https://tools.ietf.org/html/rfc7231#section-6.6.1',
  503: 'https://tools.ietf.org/html/rfc7231#section-6.6.4',
};

/** The reason phrase of a status ("Bad Request"). */
export function reasonPhrase(status: number): string {
  return STATUS_CODES[status] ?? 'Unknown';
}

export function statusType(status: number): string {
  return STATUS_TYPE[status] ?? (status >= 500 ? STATUS_TYPE[500]! : STATUS_TYPE[400]!);
}

export function docsLink(docsUrl: string, status: number, code: number): string {
  return `${docsUrl}/errors/${status}/${code}`;
}

export interface RenderedError {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

export function renderError(area: Area, error: ServiceError, requestId: string, docsUrl: string): RenderedError {
  const { code, message, detail } = error;
  if (area === 'taxonomy') {
    const d: Record<string, unknown> = { message, code };
    if (detail !== undefined) d['cause'] = detail;
    return { status: error.status, body: { requestId, error: { c: CATALOGUE[code].taxonomyName, d } } };
  }
  if (area === 'identity' && code === 3002) {
    // D12: the flat body of the spec's example, always HTTP 400.
    return {
      status: 400,
      body: { request_id: requestId, status: reasonPhrase(400), code, message, docs: docsLink(docsUrl, 400, code) },
    };
  }
  const status = error.status;
  const inner: Record<string, unknown> =
    area === 'identity'
      ? { status: reasonPhrase(status), code, message, docs: docsLink(docsUrl, status, code) }
      : {
          type: statusType(status),
          status_code: status,
          status: reasonPhrase(status),
          code,
          message,
          docs: docsLink(docsUrl, status, code),
        };
  if (detail !== undefined) inner['cause'] = detail;
  return { status, body: { request_id: requestId, error: inner } };
}
