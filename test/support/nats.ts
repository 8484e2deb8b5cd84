// A real nats-server with JetStream for the cluster tests: Debian's `nats-server` (`.ci/run` installs it when
// missing) on a free loopback port, its store in a temp directory; stopped by its PID.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll } from 'vitest';
import { startNatsServers } from '../../bench/cluster/nats.js';

export interface NatsServer {
  readonly url: string;
  stop(): Promise<void>;
}

/** One nats-server with JetStream (the cluster scripts' own starter, bench/cluster/nats.ts), its store in a temp dir. */
export async function startNatsServer(): Promise<NatsServer> {
  const dir = await mkdtemp(join(tmpdir(), 'audience-nats-'));
  const [server] = await startNatsServers(1, dir);
  if (server === undefined) throw new Error('no nats-server started');
  return {
    url: server.url,
    stop: async () => {
      await server.stop();
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
