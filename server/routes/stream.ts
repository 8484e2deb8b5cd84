// The live stream (D38): `GET /reactions-api/v1/stream` upgraded to a WebSocket, private key in `X-API-Key` or `k`,
// optional `cohorts=CODE,CODE` and `after=CURSOR`; one JSON text frame per live transition of the cohorts the key can
// see (D9), in commit order (server/reactions/stream/hub.ts).
//
// Choices where D38 is silent: refusals happen before the upgrade, as HTTP answers in the cohort envelope (401/403
// for the key, 400 1000 for a malformed `cohorts` or `after`, 404 3000 for a code the key cannot see); a cursor is
// `"{entry}.{index}"` as the messages carry it (a bare `"{entry}"` resumes after the whole entry); the client sends
// nothing (its frames are ignored); the server closes with 1001 when it stops.

import type { HttpServer } from '../http/index.js';
import type { Services } from '../services.js';
import { authenticatePrivate } from './auth.js';
import { badParameter, notFound } from '../errors.js';
import { parsePosition, type StreamSocket, type Subscription } from '../reactions/stream/hub.js';

export type StreamDeps = Pick<Services, 'tenancy' | 'cohorts' | 'stream'>;

export const STREAM_PATH = '/reactions-api/v1/stream';

export function registerStreamRoute(http: HttpServer, services: StreamDeps): void {
  const { tenancy, cohorts, stream } = services;
  http.webSocket<Subscription>(STREAM_PATH, 'cohorts', {
    accept: (ctx) => {
      const principal = authenticatePrivate(tenancy, ctx);
      const org = principal.organizationId;
      const canSee = (code: number): boolean => {
        const cohort = cohorts.getByCode(org, code);
        return cohort !== undefined && tenancy.canSeeWorkspace(principal, cohort.workspace_id);
      };
      let only: Set<number> | undefined;
      const list = ctx.query.get('cohorts');
      if (list !== null) {
        only = new Set();
        for (const part of list.split(',')) {
          if (!/^\d{1,9}$/.test(part)) throw badParameter('The query parameter cohorts must be cohort codes separated by commas.', `cohorts: "${part}" is not a code`);
          const code = Number(part);
          if (!canSee(code)) throw notFound('cohort');
          only.add(code);
        }
      }
      const afterText = ctx.query.get('after');
      const after = afterText === null ? undefined : parsePosition(afterText);
      if (afterText !== null && after === undefined) throw badParameter('The query parameter after must be a cursor from a message.', 'after: expected "{entry}.{index}"');
      return { org, canSee, cohortId: (code: number) => cohorts.getByCode(org, code)?.id, ...(only === undefined ? {} : { only }), ...(after === undefined ? {} : { after }) };
    },
    open: (socket) => {
      void stream.subscribe(socket as StreamSocket, socket.data);
    },
    drain: (socket) => stream.drained(socket as StreamSocket),
    close: (socket) => stream.unsubscribe(socket as StreamSocket),
  });
}
