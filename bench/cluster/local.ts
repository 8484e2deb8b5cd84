// `npm run cluster` (issue 15): a local cluster to try on loopback, three nats-servers with JetStream (R3) and three
// audience nodes, each a separate process over its own data directory in a temp directory. It prints every node's
// address and the keys, and stops everything (by PID) and removes the directory on Ctrl-C or SIGTERM.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAudience, type Running } from '../processes.js';
import { startNatsServers } from './nats.js';

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'audience-cluster-'));
  const nats = await startNatsServers(3, dir);
  const servers = nats.map((n) => n.url).join(',');
  const nodes: Running[] = [];
  const stop = async () => {
    await Promise.all(nodes.map((node) => node.stop()));
    await Promise.all(nats.map((n) => n.stop()));
    await rm(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 1; i <= 3; i++) {
      nodes.push(await startAudience({ dataDir: join(dir, `node-${i}`), args: ['--cluster', servers, '--node-id', `node-${i}`] }));
    }
  } catch (error) {
    await stop();
    throw error;
  }
  const keys = nodes[0]?.keys;
  console.log(`NATS servers (JetStream, R3): ${servers}`);
  for (const [i, node] of nodes.entries()) console.log(`node-${i + 1}: ${node.url} (pid ${node.pid})`);
  if (keys !== undefined) {
    console.log(`private key: ${keys.privateKey}\npublic key:  ${keys.publicKey}`);
    console.log(`Try: curl -X POST '${nodes[1]?.url}/v2.0/events?k=${keys.publicKey}' -H 'Content-Type: application/json' -d '{"user_id":"6f9619ff-8b86-4d11-b42d-00c04fc964ff","name":"Pageview"}'`);
    console.log(`then: curl '${nodes[2]?.url}/v2.0/events?user_id=6f9619ff-8b86-4d11-b42d-00c04fc964ff&k=${keys.privateKey}'`);
  }
  console.log(`data in ${dir}; Ctrl-C stops every process and removes it`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  console.log('stopping');
  await stop();
}

await main();
