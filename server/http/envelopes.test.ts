import { describe, expect, it } from 'vitest';
import { CATALOGUE, ServiceError, badBody, bodyTooLarge, unknownKey, unknownUser } from '../errors.js';
import { renderError } from './envelopes.js';

const RID = '9b2f3c1e-8a4d-4f6b-9c2e-1d3f5a7b9c0d';
const DOCS = 'https://docs.example';

describe('renderError', () => {
  it('renders the cohort envelope with type, status_code and docs (D10)', () => {
    for (const area of ['cohorts', 'segmentation', 'admin', 'plain'] as const) {
      const { status, body } = renderError(area, badBody('name: missing'), RID, DOCS);
      expect(status).toBe(400);
      expect(body).toEqual({
        request_id: RID,
        error: {
          type: 'https://tools.ietf.org/html/rfc7231#section-6.5.1',
          status_code: 400,
          status: 'Bad Request',
          code: 1002,
          message: expect.any(String),
          docs: 'https://docs.example/errors/400/1002',
          cause: 'name: missing',
        },
      });
    }
  });

  it.each([
    [401, 'https://tools.ietf.org/html/rfc7235#section-3.1', 2000],
    [403, 'https://tools.ietf.org/html/rfc7231#section-6.5.3', 2001],
    [404, 'https://tools.ietf.org/html/rfc7231#section-6.5.4', 3000],
    [409, 'https://tools.ietf.org/html/rfc7231#section-6.5.8', 4000],
    [500, 'https://tools.ietf.org/html/rfc7231#section-6.6.1', 5000],
  ] as const)('status %i has the RFC type %s (D10)', (status, type, code) => {
    const { body } = renderError('cohorts', new ServiceError(code, 'm'), RID, DOCS);
    expect((body['error'] as Record<string, unknown>)['type']).toBe(type);
    expect((body['error'] as Record<string, unknown>)['status_code']).toBe(status);
  });

  it('renders 413 with code 1002 and its RFC type (D2)', () => {
    const { status, body } = renderError('cohorts', bodyTooLarge(10), RID, DOCS);
    expect(status).toBe(413);
    expect(body['error']).toMatchObject({
      type: 'https://tools.ietf.org/html/rfc7231#section-6.5.11',
      status: 'Payload Too Large',
      code: 1002,
      docs: 'https://docs.example/errors/413/1002',
    });
  });

  it('leaves out cause when the error has none', () => {
    const { body } = renderError('cohorts', new ServiceError(3000, 'gone'), RID, DOCS);
    expect(Object.keys(body['error'] as object).sort()).toEqual(['code', 'docs', 'message', 'status', 'status_code', 'type']);
  });

  it('renders the identity envelope without type and status_code (D10)', () => {
    const { status, body } = renderError('identity', unknownKey(), RID, DOCS);
    expect(status).toBe(401);
    expect(body).toEqual({
      request_id: RID,
      error: { status: 'Unauthorized', code: 2000, message: expect.any(String), docs: `${DOCS}/errors/401/2000`, cause: expect.any(String) },
    });
  });

  it('renders 3002 in the identity area as the flat HTTP 400 body (D12)', () => {
    const { status, body } = renderError('identity', unknownUser(), RID, DOCS);
    expect(status).toBe(400);
    expect(body).toEqual({ request_id: RID, status: 'Bad Request', code: 3002, message: expect.any(String), docs: `${DOCS}/errors/400/3002` });
  });

  it('renders the taxonomy envelope with the catalogue name in c (D13)', () => {
    for (const code of Object.keys(CATALOGUE).map(Number) as Array<keyof typeof CATALOGUE>) {
      const { status, body } = renderError('taxonomy', new ServiceError(code, 'm', 'why'), RID, DOCS);
      expect(status).toBe(CATALOGUE[code].status);
      expect(body).toEqual({ requestId: RID, error: { c: CATALOGUE[code].taxonomyName, d: { message: 'm', cause: 'why', code } } });
    }
  });
});
