// Headless Chromium for the browser tests and the dashboard bench: Debian's `chromium` driven by puppeteer-core
// (`.ci/run` installs it when missing; without it the caller fails rather than skips).

import { existsSync } from 'node:fs';
import puppeteer, { type Browser } from 'puppeteer-core';

export const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((path) => existsSync(path));

export async function launchBrowser(): Promise<Browser> {
  if (CHROMIUM === undefined) throw new Error('chromium is not installed (apt-get install -y chromium; .ci/run does it)');
  return puppeteer.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
}
