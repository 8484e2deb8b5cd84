// `GET /dashboard` and its files (issue 16): the static dashboard built into dist/dashboard/ by `npm run build`. No
// key: the page asks for one and calls the public API with it. Files are read once and kept; a server whose build
// has no dashboard answers 404 code 3000 saying how to build it.

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { HttpServer, Reply } from '../http/index.js';
import { ServiceError } from '../errors.js';
import { ownValue } from '../own-keys.js';

const FILES: Readonly<Record<string, string>> = {
  'index.html': 'text/html; charset=utf-8',
  'app.js': 'text/javascript; charset=utf-8',
  'app.js.map': 'application/json',
  'app.css': 'text/css; charset=utf-8',
};

declare global {
  // The single executable (cli/package) writes the dashboard out with its other assets and says where.
  var __audienceDashboardDir: string | undefined;
}

/** dist/dashboard: beside dist/server when running the build, under the project's dist/ when running sources. */
function dashboardDir(): string | undefined {
  // The executable's bundle has no import.meta.url: its directory is given.
  if (globalThis.__audienceDashboardDir !== undefined) return globalThis.__audienceDashboardDir;
  const candidates = [fileURLToPath(new URL('../../dashboard/', import.meta.url)), fileURLToPath(new URL('../../dist/dashboard/', import.meta.url))];
  return candidates.find((dir) => existsSync(join(dir, 'index.html')));
}

export function registerDashboardRoutes(http: HttpServer): void {
  const cache = new Map<string, Reply>();
  const serve = (file: string): Reply => {
    // Own entries only: `/dashboard/constructor` names no file (it used to reach Object's constructor: a 500).
    const type = ownValue(FILES, file);
    if (type === undefined) throw new ServiceError(3000, 'The requested resource does not exist.', `no dashboard file ${file}`);
    let reply = cache.get(file);
    if (reply === undefined) {
      const dir = dashboardDir();
      if (dir === undefined) throw new ServiceError(3000, 'The dashboard is not built.', 'run npm run build (npm install does it) to build dist/dashboard');
      reply = { status: 200, text: readFileSync(join(dir, file), 'utf8'), contentType: type, headers: { 'Cache-Control': 'no-cache' } };
      cache.set(file, reply);
    }
    return reply;
  };
  http.route('GET', '/dashboard', 'plain', () => serve('index.html'), { body: 'none' });
  http.route('GET', '/dashboard/:file', 'plain', (ctx) => serve(ctx.params['file'] ?? ''), { body: 'none' });
}
