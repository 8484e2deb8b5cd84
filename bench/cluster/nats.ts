// Local nats-server processes for the cluster scripts (issue 15): one, or a JetStream cluster of three on loopback,
// each with its own store directory, on free ports. A server can be killed (-9) and started again on the same ports
// and store (it rejoins the cluster); every process is stopped by its PID.

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { waitForJetStream } from '../../server/cluster/nats.js';

const NATS_SERVER = ['/usr/sbin/nats-server', '/usr/bin/nats-server'].find((path) => existsSync(path));

/** A free loopback port (bound, then released for the server to take). */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export interface NatsProcess {
  readonly name: string;
  readonly url: string;
  /** The running process's PID (undefined while it is down). */
  pid(): number | undefined;
  /** kill -9, resolves once it is gone. */
  kill(): Promise<void>;
  /** Starts it again (same ports, same store), resolves once it is ready. */
  start(): Promise<void>;
  /** SIGTERM, resolves once it is gone. */
  stop(): Promise<void>;
  /** The tail of what the running process printed. */
  output(): string;
}

interface Spec {
  readonly name: string;
  readonly port: number;
  readonly routePort: number;
  readonly config: string;
}

/** Starts `count` nats-servers with JetStream in `dir`: one alone, or a cluster `audience` of `count`. */
export async function startNatsServers(count: number, dir: string): Promise<NatsProcess[]> {
  if (NATS_SERVER === undefined) throw new Error('nats-server is not installed (apt-get install -y nats-server)');
  const specs: Spec[] = [];
  for (let i = 1; i <= count; i++) specs.push({ name: `nats-${i}`, port: await freePort(), routePort: await freePort(), config: join(dir, `nats-${i}.conf`) });
  for (const spec of specs) {
    const store = join(dir, spec.name);
    await mkdir(store, { recursive: true });
    const routes = specs.filter((other) => other !== spec).map((other) => `"nats-route://127.0.0.1:${other.routePort}"`);
    const cluster = count === 1 ? '' : `cluster { name: audience, listen: "127.0.0.1:${spec.routePort}", routes: [${routes.join(', ')}] }\n`;
    await writeFile(spec.config, `server_name: ${spec.name}\nlisten: "127.0.0.1:${spec.port}"\nmax_payload: 8MB\njetstream { store_dir: "${store}" }\n${cluster}`);
  }
  const processes = specs.map((spec) => natsProcess(spec));
  await Promise.all(processes.map((p) => p.start()));
  // Ready means JetStream answers (a cluster elects its meta leader after the servers start).
  const nc = await connect({ servers: processes.map((p) => p.url) });
  try {
    await waitForJetStream(nc);
  } finally {
    await nc.close();
  }
  return processes;
}

function natsProcess(spec: Spec): NatsProcess {
  let child: ChildProcess | undefined;
  let log = '';
  const gone = (current: ChildProcess) => current.exitCode !== null || current.signalCode !== null;
  const ended = (current: ChildProcess): Promise<void> => (gone(current) ? Promise.resolve() : new Promise((resolve) => current.once('exit', () => resolve())));
  return {
    name: spec.name,
    url: `nats://127.0.0.1:${spec.port}`,
    output: () => log,
    pid: () => (child !== undefined && !gone(child) ? child.pid : undefined),
    async start() {
      const started = spawn(NATS_SERVER as string, ['-c', spec.config], { stdio: ['ignore', 'pipe', 'pipe'] });
      child = started;
      log = '';
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${spec.name} did not start: ${log.slice(-2000)}`)), 30_000);
        const onData = (chunk: Buffer) => {
          log = (log + chunk.toString()).slice(-20_000);
          if (/Server is ready/.test(log)) {
            clearTimeout(timer);
            resolve();
          }
        };
        started.stdout?.on('data', onData);
        started.stderr?.on('data', onData);
        started.once('exit', (code) => {
          clearTimeout(timer);
          reject(new Error(`${spec.name} exited (${code}): ${log.slice(-2000)}`));
        });
      });
      started.removeAllListeners('exit');
    },
    async kill() {
      if (child === undefined || gone(child)) return;
      const current = child;
      current.kill('SIGKILL');
      await ended(current);
    },
    async stop() {
      if (child === undefined || gone(child)) return;
      const current = child;
      current.kill('SIGTERM');
      await ended(current);
    },
  };
}
