// A cluster node stops when its NATS servers are gone (issue 15): closing a node whose cluster is unreachable finishes
// (each step that needs NATS fails or times out) and releases its store. That the process then exits (the NATS
// connection closed, not left reconnecting) is test/cli/serve-cluster.test.ts's.

import { describe, expect, it } from 'vitest';
import { startClusterNode } from '../../server/cluster/node.js';
import { tempDir } from '../support/processes.js';
import { startNatsServer } from '../support/nats.js';

describe('a cluster node whose NATS server is gone', () => {
  it('still stops, and its data directory opens again', async () => {
    const nats = await startNatsServer();
    const dir = await tempDir('audience-cluster-stop-');
    try {
      const options = {
        dataDir: `${dir.path}/data`,
        host: '127.0.0.1',
        port: 0,
        threads: 0,
        log: () => undefined,
        cluster: { servers: [nats.url], nodeId: 'node-a', replicas: 1, partitions: 4, leaseTtlMs: 2_000 },
      };
      const node = await startClusterNode(options);
      expect(node.owned().length).toBeGreaterThan(0);
      await nats.stop();
      await node.close();
      // The store was closed (LevelDB's lock released): a plain open of the directory works.
      const { openLevelStore } = await import('../../server/store/level.js');
      const store = await openLevelStore(options.dataDir);
      await store.close();
    } finally {
      await nats.stop().catch(() => undefined);
      await dir.remove();
    }
  }, 120_000);
});
