// A real nats-server with JetStream for the cluster tests: Debian's `nats-server` (`.ci/run` installs it when
// missing) on a random loopback port, its store in a temp directory; stopped by its PID.

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll } from 'vitest';

export const NATS_SERVER = ['/usr/sbin/nats-server', '/usr/bin/nats-server'].find((path) => existsSync(path));

export interface NatsServer {
  readonly url: string;
  readonly process: ChildProcess;
  stop(): Promise<void>;
}

export async function startNatsServer(): Promise<NatsServer> {
  if (NATS_SERVER === undefined) throw new Error('nats-server is not installed (apt-get install -y nats-server; .ci/run does it)');
  const dir = await mkdtemp(join(tmpdir(), 'audience-nats-'));
  const child = spawn(NATS_SERVER, ['-a', '127.0.0.1', '-p', '-1', '-js', '-sd', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`nats-server did not start: ${log}`)), 15_000);
    const onData = (chunk: Buffer) => {
      log += chunk.toString();
      const match = /Listening for client connections on ([\d.]+):(\d+)/.exec(log);
      if (match !== null && /Server is ready/.test(log)) {
        clearTimeout(timer);
        resolve(`nats://127.0.0.1:${match[2]}`);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`nats-server exited (${code}): ${log}`));
    });
  });
  return {
    url,
    process: child,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** One nats-server and a connection to it for a test file: started before its tests, stopped after them. */
export function useNatsServer(): { server: () => NatsServer; connection: () => NatsConnection } {
  let server: NatsServer | undefined;
  let connection: NatsConnection | undefined;
  beforeAll(async () => {
    server = await startNatsServer();
    connection = await connect({ servers: server.url });
  }, 30_000);
  afterAll(async () => {
    await connection?.close();
    await server?.stop();
  });
  const ready = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the nats-server is not started (useNatsServer runs in beforeAll)');
    return value;
  };
  return { server: () => ready(server), connection: () => ready(connection) };
}
