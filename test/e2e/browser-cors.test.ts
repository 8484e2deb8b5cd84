// D43 from a real browser: headless Chromium (Debian's, driven by puppeteer-core) opens a page of another origin that
// tracks an event with the public key and reads the answer (CORS lets it), the request id included (D44); a private
// route called from that page is blocked by the browser (no Allow-Origin for it by default). `.ci/run` installs
// chromium when it is missing; without it this file fails rather than skips.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'puppeteer-core';
import { launchBrowser } from '../support/browser.js';
import { startTestService, type TestService } from '../support/service.js';

let service: TestService;
let page: Server;
let pageUrl: string;
let browser: Browser;

beforeAll(async () => {
  service = await startTestService();
  page = createServer((_req, res) => res.writeHead(200, { 'Content-Type': 'text/html' }).end('<!doctype html><title>site</title><p>a site of another origin</p>'));
  await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
  pageUrl = `http://127.0.0.1:${(page.address() as AddressInfo).port}/`;
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  page?.closeAllConnections();
  await new Promise<void>((resolve) => (page === undefined ? resolve() : page.close(() => resolve())));
  await service?.close();
});

describe('CORS from a real browser (D43, D44)', () => {
  it('a page of another origin tracks an event with the public key and reads the answer; a private route is blocked', async () => {
    const tab = await browser.newPage();
    await tab.goto(pageUrl);
    const user = randomUUID();
    const tracked = await tab.evaluate(
      async (base: string, key: string, userId: string) => {
        const response = await fetch(`${base}/v2.0/events?k=${key}`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ user_id: userId, name: 'Pageview', properties: { client: { url: location.href } } }),
        });
        return { status: response.status, body: await response.json(), requestId: response.headers.get('x-request-id'), origin: location.origin };
      },
      service.url,
      service.keys.public_key,
      user,
    );
    expect(tracked.origin).not.toBe(service.url);
    expect(tracked.status).toBe(200);
    expect(tracked.body).toMatchObject({ user_id: user, name: 'Pageview' });
    expect(tracked.requestId).toMatch(/^[0-9a-f-]{36}$/);
    // The event is really stored.
    const read = await service.json<unknown[]>('GET', `/v2.0/events?user_id=${user}`, { key: service.keys.public_key });
    expect(read.body).toHaveLength(1);

    const blocked = await tab.evaluate(async (base: string, key: string) => {
      try {
        await fetch(`${base}/cohorts-api/v2/cohorts?k=${key}`);
        return 'read';
      } catch (error) {
        return (error as Error).name;
      }
    }, service.url, service.keys.private_key);
    expect(blocked).toBe('TypeError');
    await tab.close();
  });
});
