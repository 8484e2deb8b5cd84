import { describe, expect, it } from 'vitest';
import { Router } from './router.js';
import type { Handler } from './types.js';

const ok: Handler = () => ({ status: 200 });

function buildRouter(): Router {
  const router = new Router();
  router.add('GET', '/cohorts-api/v2/cohorts', 'cohorts', ok, 'none');
  router.add('POST', '/cohorts-api/v2/cohorts', 'cohorts', ok, 'optional');
  router.add('GET', '/cohorts-api/v2/cohorts/:cohortId', 'cohorts', ok, 'none');
  router.add('PATCH', '/cohorts-api/v2/cohorts/:cohortId', 'cohorts', ok, 'optional');
  router.add('GET', '/v2.0/users/:userId/aliases', 'identity', ok, 'none');
  router.add('GET', '/audience-api/v1/imports/:importId/segments/code/:segmentCode', 'taxonomy', ok, 'none');
  router.add('GET', '/audience-api/v1/imports/:importId/segments/:segmentId', 'taxonomy', ok, 'none');
  return router;
}

describe('Router', () => {
  it('matches static and parameter segments, with URL-decoded parameters', () => {
    const match = buildRouter().match('GET', '/v2.0/users/a%20b%2Fc/aliases');
    expect(match.kind).toBe('found');
    if (match.kind === 'found') {
      expect(match.route.pattern).toBe('/v2.0/users/:userId/aliases');
      expect(match.params).toEqual({ userId: 'a b/c' });
    }
  });

  it('routes a trailing slash like the path without it (D1)', () => {
    const router = buildRouter();
    for (const path of ['/cohorts-api/v2/cohorts/', '/cohorts-api/v2/cohorts']) {
      const match = router.match('GET', path);
      expect(match.kind === 'found' && match.route.pattern).toBe('/cohorts-api/v2/cohorts');
    }
    const one = router.match('PATCH', '/cohorts-api/v2/cohorts/abc/');
    expect(one.kind === 'found' && one.params).toEqual({ cohortId: 'abc' });
  });

  it('prefers a static segment over a parameter and backtracks when the static branch dead-ends', () => {
    const router = buildRouter();
    const byCode = router.match('GET', '/audience-api/v1/imports/i1/segments/code/s1');
    expect(byCode.kind === 'found' && byCode.params).toEqual({ importId: 'i1', segmentCode: 's1' });
    const byId = router.match('GET', '/audience-api/v1/imports/i1/segments/code');
    expect(byId.kind === 'found' && byId.params).toEqual({ importId: 'i1', segmentId: 'code' });
  });

  it('answers method-not-allowed with the allowed methods for a known path', () => {
    const match = buildRouter().match('DELETE', '/cohorts-api/v2/cohorts');
    expect(match).toEqual({ kind: 'method-not-allowed', area: 'cohorts', allowed: ['GET', 'POST'], cors: 'private' });
  });

  it('reports a path as cors public when any of its methods is (D43 preflight)', () => {
    const router = new Router();
    router.add('GET', '/v2.0/events', 'identity', () => ({ status: 200 }), 'none', 'public');
    router.add('PUT', '/v2.0/events', 'identity', () => ({ status: 200 }), 'none');
    expect(router.match('OPTIONS', '/v2.0/events/')).toEqual({ kind: 'method-not-allowed', area: 'identity', allowed: ['GET', 'PUT'], cors: 'public' });
  });

  it('answers not-found in the area of the first path segment, plain otherwise', () => {
    const router = buildRouter();
    expect(router.match('GET', '/audience-api/v1/nothing')).toEqual({ kind: 'not-found', area: 'taxonomy' });
    expect(router.match('GET', '/v2.0/users/u1')).toEqual({ kind: 'not-found', area: 'identity' });
    expect(router.match('GET', '/elsewhere')).toEqual({ kind: 'not-found', area: 'plain' });
    expect(router.match('GET', '/')).toEqual({ kind: 'not-found', area: 'plain' });
  });

  it('does not match empty segments or malformed escapes', () => {
    const router = buildRouter();
    expect(router.match('GET', '/cohorts-api/v2/cohorts//').kind).toBe('not-found');
    expect(router.match('GET', '/cohorts-api/v2/cohorts/%E0%A4%A').kind).toBe('not-found');
  });

  it('rejects a route registered twice and repeated parameter names', () => {
    const router = buildRouter();
    expect(() => router.add('GET', '/cohorts-api/v2/cohorts/:other', 'cohorts', ok, 'none')).toThrow();
    expect(() => router.add('GET', '/x/:a/:a', 'plain', ok, 'none')).toThrow();
    expect(() => router.add('GET', 'no-slash', 'plain', ok, 'none')).toThrow();
  });
});
