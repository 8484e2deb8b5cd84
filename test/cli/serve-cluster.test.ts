// `audience serve --cluster` (issue 15): bad cluster flags exit 2 before anything starts; AUDIENCE_CLUSTER joins a
// real nats-server, the first node prints the cluster's keys once and its name, serves, and stops on SIGTERM with 0.

import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCliProcess, startCli, tempDir } from '../support/processes.js';
import { startNatsServer, useNatsServer } from '../support/nats.js';

const nats = useNatsServer();
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('audience serve --cluster', () => {
  it('refuses malformed cluster flags with exit 2 and one clear line', async () => {
    const dir = await tempDir('audience-cluster-cli-');
    cleanups.push(dir.remove);
    const data = join(dir.path, 'data');
    const bad = await runCliProcess(['serve', '--data', data, '--cluster', 'localhost:4222']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--cluster: expected nats://host:port entries, not "localhost:4222"');
    const lonely = await runCliProcess(['serve', '--data', data, '--node-id', 'n1']);
    expect(lonely.code).toBe(2);
    expect(lonely.stderr).toContain('--node-id and --cluster-replicas need --cluster');
    const name = await runCliProcess(['serve', '--data', data, '--cluster', 'nats://127.0.0.1:4222', '--node-id', 'a b']);
    expect(name.code).toBe(2);
    expect(name.stderr).toContain('--node-id must be');
  });

  it('joins the cluster named by AUDIENCE_CLUSTER, prints the first node\'s keys, serves, and stops on SIGTERM', async () => {
    const dir = await tempDir('audience-cluster-cli-');
    cleanups.push(dir.remove);
    const running = startCli(['serve', '--data', join(dir.path, 'data'), '--port', '0', '--threads', '0', '--node-id', 'cli-node', '--cluster-lease-ms', '2000'], {
      AUDIENCE_CLUSTER: nats.server().url,
    });
    cleanups.push(async () => {
      if (running.child.exitCode === null && running.child.signalCode === null) {
        running.child.kill('SIGKILL');
        await running.exited;
      }
    });
    const url = (await running.waitFor(/listening on (http:\/\/\S+)/))[1] as string;
    expect(running.stdout()).toContain(`cluster node cli-node joined ${nats.server().url}`);
    const key = /public key:\s*([0-9a-f-]{36})/.exec(running.stdout())?.[1];
    expect(key).toBeDefined();
    const created = await fetch(`${url}/v2.0/users?k=${key}`, { method: 'POST' });
    expect(created.status).toBe(200);
    running.child.kill('SIGTERM');
    expect((await running.exited).code).toBe(0);
  }, 60_000);

  it('exits on SIGTERM when its NATS server is gone (the connection no longer holds the process open)', async () => {
    const own = await startNatsServer();
    cleanups.push(() => own.stop().catch(() => undefined));
    const dir = await tempDir('audience-cluster-cli-');
    cleanups.push(dir.remove);
    const running = startCli(['serve', '--data', join(dir.path, 'data'), '--port', '0', '--threads', '0', '--cluster', own.url, '--cluster-lease-ms', '2000']);
    cleanups.push(async () => {
      if (running.child.exitCode === null && running.child.signalCode === null) {
        running.child.kill('SIGKILL');
        await running.exited;
      }
    });
    await running.waitFor(/listening on (http:\/\/\S+)/);
    await own.stop();
    running.child.kill('SIGTERM');
    expect((await running.exited).code).toBe(0);
  }, 90_000);
});
