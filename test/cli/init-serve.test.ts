// `audience init` and `audience serve` as real processes over temp data directories (operations.md, issue 2):
// keys printed once and never stored in clear, re-init refused without change, health, clean stop, one owner per DIR.

import { readdirSync } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { createServer } from 'node:net';
import { getPriority } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCliProcess, startCli, tempDir, type RunningCli } from '../support/processes.js';
import { serveUrl } from '../../cli/commands/init.js';
import { waitUntil } from '../support/wait.js';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function newDataDir(): Promise<string> {
  const dir = await tempDir();
  cleanups.push(dir.remove);
  return join(dir.path, 'data');
}

function serve(args: string[]): RunningCli {
  const running = startCli(['serve', ...args]);
  cleanups.push(async () => {
    if (running.child.exitCode === null && running.child.signalCode === null) {
      running.child.kill('SIGKILL');
      await running.exited;
    }
  });
  return running;
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true });
  const files: string[] = [];
  for (const entry of entries) {
    const path = join(dir, entry);
    if ((await stat(path)).isFile()) files.push(path);
  }
  return files;
}

describe('audience init', () => {
  it('creates an organization and prints exactly one JSON object with its ids and keys', async () => {
    const data = await newDataDir();
    const result = await runCliProcess(['init', '--data', data, '--org-name', 'Acme', '--json']);
    expect(result.code).toBe(0);
    const printed = JSON.parse(result.stdout) as Record<string, string>;
    expect(Object.keys(printed).sort()).toEqual(['organization_id', 'private_key', 'public_key', 'workspace_id']);
    for (const value of Object.values(printed)) expect(value).toMatch(UUID_V4);
    expect(printed['private_key']).not.toBe(printed['public_key']);
  });

  it('never writes a key in clear into the data directory (D5)', async () => {
    const data = await newDataDir();
    const printed = JSON.parse((await runCliProcess(['init', '--data', data, '--json'])).stdout) as Record<string, string>;
    const files = await filesUnder(data);
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      const bytes = await readFile(file);
      for (const secret of [printed['private_key'], printed['public_key']]) {
        expect(bytes.includes(Buffer.from(secret as string)), `${file} holds a key in clear`).toBe(false);
        expect(bytes.includes(Buffer.from((secret as string).replace(/-/g, ''), 'hex')), `${file} holds raw key bytes`).toBe(false);
      }
    }
  });

  it('refuses an initialised directory with exit 1 and keeps the first keys working', async () => {
    const data = await newDataDir();
    const first = JSON.parse((await runCliProcess(['init', '--data', data, '--json'])).stdout) as Record<string, string>;
    const again = await runCliProcess(['init', '--data', data, '--json']);
    expect(again.code).toBe(1);
    expect(again.stdout).toBe('');
    expect(again.stderr).toMatch(/already initialised/);
    expect(again.stderr.trim().split('\n')).toHaveLength(1);

    // The first organization is still the only one, and its key still authenticates.
    const server = serve(['--data', data, '--port', '0']);
    const [, url] = (await server.waitFor(/listening on (http:\/\/\S+)/)) as unknown as [string, string];
    const response = await fetch(`${url}/admin/v1/workspaces`, { headers: { 'X-API-Key': first['private_key'] as string } });
    expect(response.status).toBe(200);
    const workspaces = (await response.json()) as Array<{ id: string }>;
    expect(workspaces.map((w) => w.id)).toEqual([first['workspace_id']]);
  });
});

describe('audience serve', () => {
  it('initialises an empty directory, prints the keys once, serves /healthz and stops cleanly on SIGTERM', async () => {
    const data = await newDataDir();
    const server = serve(['--data', data, '--port', '0']);
    const [, url] = (await server.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+)/)) as unknown as [string, string];
    expect(server.stdout()).toMatch(/private key/);
    expect(server.stdout()).toMatch(/public key/);
    // The example call names the address it serves on (the port, 0 here, is picked when it listens).
    expect(server.stdout()).toMatch(/Try: curl -X POST 'http:\/\/127\.0\.0\.1:PORT\/v2\.0\/users\?k=[0-9a-f-]{36}' \(PORT: the one "listening on" names\)/);

    const health = await fetch(`${url}/healthz`);
    expect(health.status).toBe(200);
    expect(health.headers.get('content-type')).toMatch(/application\/json/);
    expect(await health.json()).toEqual({ status: 'ok' });

    server.child.kill('SIGTERM');
    expect(await server.exited).toEqual({ code: 0, signal: null });
  });

  it('does not print keys again when the directory is already initialised', async () => {
    const data = await newDataDir();
    expect((await runCliProcess(['init', '--data', data])).code).toBe(0);
    const server = serve(['--data', data, '--port', '0']);
    await server.waitFor(/listening on/);
    expect(server.stdout()).not.toMatch(/private key/);
    server.child.kill('SIGINT');
    expect((await server.exited).code).toBe(0);
  });

  it('writes its tables Snappy-compressed with --store-compression, as they are without; both read back the same', async () => {
    const user = '0d8f3c52-7a41-4e0b-9b6c-2f5e8a1d4c37';
    const text = 'abc'.repeat(2000);
    /** The bytes of the data directory's tables after 60 tracked events and a restart (which writes the log out as a table). */
    const tableBytes = async (flags: string[]): Promise<number> => {
      const data = await newDataDir();
      const keys = JSON.parse((await runCliProcess(['init', '--data', data, '--json'])).stdout) as { public_key: string };
      for (const round of [0, 1]) {
        const server = serve(['--data', data, '--port', '0', ...flags]);
        const [, url] = (await server.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+)/)) as unknown as [string, string];
        if (round === 0) {
          for (let i = 0; i < 60; i++) {
            const response = await fetch(`${url}/v2.0/events?k=${keys.public_key}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ user_id: user, name: 'Pageview', properties: { text, i } }) });
            expect(response.status).toBe(200);
          }
        } else {
          const read = await fetch(`${url}/v2.0/events?user_id=${user}&limit=100`, { headers: { 'X-API-Key': keys.public_key } });
          const events = (await read.json()) as Array<{ properties: { text: string; i: number } }>;
          expect(events.map((event) => event.properties.i).sort((a, b) => a - b)).toEqual(Array.from({ length: 60 }, (_, i) => i));
          expect(events.every((event) => event.properties.text === text)).toBe(true);
        }
        server.child.kill('SIGTERM');
        expect((await server.exited).code).toBe(0);
      }
      let bytes = 0;
      for (const file of await filesUnder(data)) if (file.endsWith('.ldb')) bytes += (await stat(file)).size;
      return bytes;
    };
    const plain = await tableBytes([]);
    const compressed = await tableBytes(['--store-compression']);
    expect(plain).toBeGreaterThan(60 * 6000);
    expect(compressed).toBeLessThan(plain / 4);
  });

  it('refuses a second process on the same data directory with one clear line', async () => {
    const data = await newDataDir();
    const first = serve(['--data', data, '--port', '0']);
    await first.waitFor(/listening on/);
    const second = await runCliProcess(['serve', '--data', data, '--port', '0']);
    expect(second.code).toBe(1);
    expect(second.stderr).toMatch(/data directory is in use/);
    expect(second.stderr).not.toMatch(/\n\s+at /); // no stack trace
  });

  it('runs every thread but its main one --helper-nice lower, and refuses a value outside 0-19 with exit 2', async () => {
    const data = await newDataDir();
    const server = serve(['--data', data, '--port', '0', '--threads', '1', '--helper-nice', '7']);
    await server.waitFor(/listening on/);
    const pid = server.child.pid as number;
    const base = getPriority(pid);
    const others = (): number[] => readdirSync(`/proc/${pid}/task`).map(Number).filter((tid) => tid !== pid);
    // Threads started after the announcement are lowered at the next sweep (every second).
    await waitUntil(() => others().every((tid) => getPriority(tid) === Math.min(19, base + 7)), 'the helper threads lowered');
    // The owner, libuv's pool (the store's reads and writes) and V8's helpers at least.
    expect(others().length).toBeGreaterThan(4);
    expect(getPriority(pid)).toBe(base);
    server.child.kill('SIGTERM');
    expect(await server.exited).toEqual({ code: 0, signal: null });

    const refused = await runCliProcess(['serve', '--data', await newDataDir(), '--port', '0', '--helper-nice', '20']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/--helper-nice must be an integer from 0 to 19, not "20"/);
  });

  it('hands the C allocator\'s free memory back every --malloc-trim-every seconds, and refuses a bad value with exit 2', async () => {
    const server = serve(['--data', await newDataDir(), '--port', '0', '--malloc-trim-every', '1', '--log-level', 'debug']);
    // A look a second, a pass at each while idle, logged at debug with the RSS around it (nothing to trim with off
    // Linux, said once at info).
    const line = process.platform === 'linux' ? /"level":"debug".*malloc_trim: \d+\.\d ms, RSS \d+ -> \d+ MiB/ : /nothing to trim with/;
    await server.waitFor(line);
    server.child.kill('SIGTERM');
    expect(await server.exited).toEqual({ code: 0, signal: null });

    const refused = await runCliProcess(['serve', '--data', await newDataDir(), '--port', '0', '--malloc-trim-every', '-1']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/--malloc-trim-every must be an integer from 0 to 86400, not "-1"/);
  });

  it('looks to compact its heaps every --compact-heap-every seconds, the owner threads\' too, and refuses a bad value with exit 2', async () => {
    const data = await newDataDir();
    const keys = JSON.parse((await runCliProcess(['init', '--data', data, '--json'])).stdout) as { public_key: string };
    // A look a second; once the process is idle a pass looks at the main thread's heap and asks the owner's (logged
    // at debug; a heap this small has nothing worth compacting). The owner keeps serving after it.
    const server = serve(['--data', data, '--port', '0', '--threads', '1', '--compact-heap-every', '1', '--log-level', 'debug']);
    const [, url] = (await server.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+)/)) as unknown as [string, string];
    await server.waitFor(/"level":"debug".*heap compaction: none of 2 heaps had a quarter of its old space free/);
    const user = '5b0c2f7e-3d9a-4c1b-8e6f-7a2d4b9c1e05';
    const sent = await fetch(`${url}/v2.0/events?k=${keys.public_key}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ user_id: user, name: 'Pageview' }) });
    expect(sent.status).toBe(200);
    const read = await fetch(`${url}/v2.0/events?user_id=${user}&limit=10`, { headers: { 'X-API-Key': keys.public_key } });
    expect(await read.json()).toHaveLength(1);
    server.child.kill('SIGTERM');
    expect(await server.exited).toEqual({ code: 0, signal: null });

    const refused = await runCliProcess(['serve', '--data', await newDataDir(), '--port', '0', '--compact-heap-every', 'often']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/--compact-heap-every must be an integer from 0 to 86400, not "often"/);
  });

  it('refuses a malformed --cors-origins entry with exit 2 before touching the data directory (D43)', async () => {
    const data = await newDataDir();
    const result = await runCliProcess(['serve', '--data', data, '--port', '0', '--cors-origins', 'https://ok.example,https://bad.example/app']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--cors-origins: "https:\/\/bad.example\/app" is not an origin/);
    expect(result.stderr).not.toMatch(/\n\s+at /);
    await expect(stat(data)).rejects.toThrow();
  });

  it('reports a port that is already in use clearly', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => blocker.close(resolve)));
    const port = (blocker.address() as { port: number }).port;
    const data = await newDataDir();
    const result = await runCliProcess(['serve', '--data', data, '--port', String(port)]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/already in use/);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });
});

describe('the example address printed with the keys', () => {
  it('is the one serve answers on: host, port, https with TLS, IPv6 hosts in brackets, PORT until it listens on port 0', () => {
    expect(serveUrl('127.0.0.1', 9000, false)).toBe('http://127.0.0.1:9000');
    expect(serveUrl('0.0.0.0', 8443, true)).toBe('https://0.0.0.0:8443');
    expect(serveUrl('::1', 8080, false)).toBe('http://[::1]:8080');
    expect(serveUrl('localhost', 0, false)).toBe('http://localhost:PORT');
  });
});
