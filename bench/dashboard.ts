// Dashboard benchmark (issue 16: "a page of 1,000 cohorts renders in under a second"), in process: one
// `startService`, 1,000 cohorts created through the API, then headless Chromium (Debian's, puppeteer-core) opens
// the cohorts page already signed in, `runs` times; each run measures, inside the page, the time from the start of
// navigation to the frame in which all 1,000 rows are in the table (the page's own requests included: the key's
// access probe and the list of 1,000 cohorts). Median, min and max.

import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer from 'puppeteer-core';
import { startService } from '../server/app.js';
import { initialiseDataDir } from '../server/bootstrap.js';
import { spreadOf, type Spread } from './stats.js';

export interface DashboardBenchOptions {
  readonly cohorts: number;
  readonly runs: number;
}

export interface DashboardBenchResult {
  readonly cohorts: number;
  readonly runs: number;
  /** Milliseconds from navigation start to the frame showing every row. */
  readonly renderMs: Spread;
}

const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((path) => existsSync(path));

export async function runDashboardBench(options: DashboardBenchOptions = { cohorts: 1000, runs: 5 }): Promise<DashboardBenchResult> {
  if (CHROMIUM === undefined) throw new Error('chromium is not installed (apt-get install -y chromium)');
  const dir = await mkdtemp(join(tmpdir(), 'audience-bench-dashboard-'));
  try {
    const keys = await initialiseDataDir(join(dir, 'data'), 'Bench');
    if (keys === 'already-initialised') throw new Error('a fresh directory was already initialised');
    const service = await startService({ dataDir: join(dir, 'data'), host: '127.0.0.1', port: 0, threads: 0, log: () => undefined });
    const browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
    try {
      for (let i = 0; i < options.cohorts; i++) {
        const response = await fetch(`${service.url}/cohorts-api/v2/cohorts`, {
          method: 'POST',
          headers: { 'X-API-Key': keys.private_key, 'Content-Type': 'application/json' },
          body: JSON.stringify({ name: `Cohort ${i + 1}`, tags: ['bench'], query: { event: 'Pageview', frequency: { greater_than_or_equal_to: (i % 20) + 1 } } }),
        });
        if (response.status !== 201) throw new Error(`creating cohort ${i + 1}: HTTP ${response.status}`);
      }
      const times: number[] = [];
      for (let run = 0; run < options.runs; run++) {
        const page = await browser.newPage();
        await page.setViewport({ width: 1280, height: 900 });
        await page.evaluateOnNewDocument((key: string) => sessionStorage.setItem('audience.key', key), keys.private_key);
        await page.goto(`${service.url}/dashboard#/cohorts`);
        const handle = await page.waitForFunction(
          (n: number) => (document.querySelectorAll('tr[data-cohort]').length === n ? performance.now() : false),
          { polling: 'raf', timeout: 30_000 },
          options.cohorts,
        );
        times.push((await handle.jsonValue()) as number);
        await page.close();
      }
      return { cohorts: options.cohorts, runs: options.runs, renderMs: spreadOf(times) };
    } finally {
      await browser.close();
      await service.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
