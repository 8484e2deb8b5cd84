// Adds package-lock.json entries for optional platform packages that this workplace's registry mirror cannot
// resolve (other platforms' msgpackr-extract and rollup binaries), which `npm install` then leaves out and `npm ci`
// rejects as "Missing ... from lock file". On linux-x64 they are skipped by os/cpu/libc and never fetched.
// Run after any `npm install` that rewrites the lock: `node .ci/complete-lock.mjs`.

import { readFileSync, writeFileSync } from 'node:fs';

const path = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(path, 'utf8'));
const packages = lock.packages;
const added = [];

for (const parent of Object.values(packages)) {
  for (const [dep, version] of Object.entries(parent.optionalDependencies ?? {})) {
    const key = `node_modules/${dep}`;
    if (key in packages || !/^@(msgpackr-extract|rollup)\//.test(dep)) continue;
    const [os, cpu, ...rest] = dep.split('/')[1].replace(/^(msgpackr-extract|rollup)-/, '').split('-');
    const variant = rest.join('-');
    const libc = variant.includes('musl') ? 'musl' : variant.includes('gnu') && os === 'linux' ? 'glibc' : undefined;
    const entry = { version, cpu: [cpu], license: 'MIT', optional: true, os: [os] };
    if (libc) entry.libc = [libc];
    if (parent.dev) entry.dev = true;
    packages[key] = entry;
    added.push(dep);
  }
}

const sorted = Object.fromEntries(Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : a > b ? 1 : 0)));
lock.packages = sorted;
writeFileSync(path, JSON.stringify(lock, null, 2) + '\n');
console.log(`${added.length} lock entries added`);
