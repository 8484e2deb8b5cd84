// The package's version, for `audience --version` and the OpenAPI document's info.version.

import { readFileSync } from 'node:fs';

declare const AUDIENCE_PACKAGE_VERSION: string | undefined;

/** package.json's version: two folders above dist/server/version.js, one above server/version.ts (tests run the sources). */
export function packageVersion(): string {
  // The single executable (cli/package/build.ts) has the version written in: it has no package.json beside it.
  if (typeof AUDIENCE_PACKAGE_VERSION === 'string') return AUDIENCE_PACKAGE_VERSION;
  for (const path of ['../../package.json', '../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(path, import.meta.url), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'audience' && typeof pkg.version === 'string') return pkg.version;
    } catch {
      // not there: the other layout
    }
  }
  return 'unknown';
}
