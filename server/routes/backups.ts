// `POST /admin/v1/backups` (operations.md, second round: a backup consistent while serving): the server copies its
// whole store through one snapshot iterator into `<data>/backups/<time>.audience-backup` and answers where
// (`audience backup --out FILE` then copies it). Whole-store data belongs to every organization, so only the root
// workspace's admin key of a store holding ONE organization may ask; anything else is 403 with the offline way.

import { join } from 'node:path';
import { mkdir } from 'node:fs/promises';
import type { HttpServer } from '../http/index.js';
import type { Services } from '../services.js';
import { authenticatePrivate } from './auth.js';
import { forbidden } from '../errors.js';
import { writeBackup } from '../backup.js';

export function registerBackupRoute(http: HttpServer, services: Pick<Services, 'tenancy' | 'store' | 'clock'>, dataDir: string): void {
  const { tenancy, store, clock } = services;
  http.route(
    'POST',
    '/admin/v1/backups',
    'admin',
    async (ctx) => {
      const principal = authenticatePrivate(tenancy, ctx);
      tenancy.requireAdmin(principal);
      if (tenancy.getWorkspace(principal.workspaceId)?.parent_id !== null || tenancy.organizationCount() !== 1) {
        throw forbidden('A backup holds the whole store: only the root workspace admin of a single-organization store may take one over the API; otherwise stop the server and run `audience backup --data DIR --out FILE`.');
      }
      const started = clock.now().toISOString();
      const dir = join(dataDir, 'backups');
      await mkdir(dir, { recursive: true });
      const summary = await writeBackup(store, join(dir, `${started.replace(/[:.]/g, '-')}.audience-backup`));
      return { status: 201, body: { file: summary.file, keys: summary.keys, bytes: summary.bytes, started_at: started } };
    },
    { body: 'none' },
  );
}
