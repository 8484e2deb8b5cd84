// The dashboard's static files: the four it has, and 404 code 3000 for any other name, names that a plain object
// inherits included (`/dashboard/constructor` used to answer 500).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { send, startServer, type RunningServer } from '../../test/support/http-server.js';
import { registerDashboardRoutes } from './dashboard.js';

let running: RunningServer;
beforeAll(async () => {
  running = await startServer((server) => registerDashboardRoutes(server));
});
afterAll(async () => {
  await running.server.close();
});

describe('GET /dashboard/:file', () => {
  it('serves its files (the build makes them)', async () => {
    const page = await send(running.port, '/dashboard');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect((await send(running.port, '/dashboard/app.js')).status).toBe(200);
  });

  for (const name of ['nope.js', 'constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', '..%2Fpackage.json']) {
    it(`answers 404 code 3000 for ${name}`, async () => {
      const answer = await send(running.port, `/dashboard/${name}`);
      expect(answer.status).toBe(404);
      expect((answer.json as { error: { code: number } }).error.code).toBe(3000);
    });
  }
});
