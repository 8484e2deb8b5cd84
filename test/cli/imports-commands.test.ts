// `audience imports` against the real service in-process (D25–D27): imports, segments (paged list), and NDJSON
// member and row loads streamed in batches: counts, idempotent re-runs, and the line number of a bad line.

import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../cli/main.js';
import { captureIo } from '../support/cli-io.js';
import { startTestService, type TestService } from '../support/service.js';

interface Ran {
  code: number;
  out: string;
  err: string;
}

interface ImportWire {
  id: string;
  code: string;
  relation: string;
  kind: string;
  identifiers: string[];
}

interface SegmentWire {
  id: string;
  code: string;
  name: string;
  cpm: number | null;
  categories: string[];
  description: string | null;
}

describe('audience imports', () => {
  let service: TestService;
  let dir: string;
  let segmentsImport: ImportWire;

  const run = async (argv: string[], key: string | null = service.keys.private_key): Promise<Ran> => {
    const io = captureIo({ env: { AUDIENCE_URL: service.url, AUDIENCE_KEY: key ?? undefined } });
    const code = await runCli(argv, io);
    return { code, out: io.stdoutText(), err: io.stderrText() };
  };
  const json = async <T>(argv: string[]): Promise<T> => {
    const ran = await run([...argv, '--json']);
    expect(ran.err).toBe('');
    expect(ran.code).toBe(0);
    return JSON.parse(ran.out) as T;
  };
  const expectOneLineError = (ran: Ran, pattern: RegExp): void => {
    expect(ran.code).toBe(1);
    expect(ran.err).toMatch(pattern);
    expect(ran.err.trim().split('\n')).toHaveLength(1);
    expect(ran.out).toBe('');
  };

  beforeAll(async () => {
    service = await startTestService();
    dir = await mkdtemp(join(tmpdir(), 'audience-cli-imports-'));
    segmentsImport = await json<ImportWire>([
      'imports', 'create', '--name', 'Acme DMP', '--code', 'acme', '--relation', '3rd', '--kind', 'segments', '--identifiers', 'email,crm',
    ]);
    await json(['imports', 'segments', 'create', segmentsImport.id, '--name', 'Sports', '--code', 'sports']);
  });
  afterAll(async () => {
    await service.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('creates imports (D25) and lists them as JSON and as a table', async () => {
    expect([segmentsImport.code, segmentsImport.relation, segmentsImport.kind]).toEqual(['acme', '3rd', 'segments']);
    expect(segmentsImport.identifiers).toEqual(['email', 'crm']);
    const list = await json<ImportWire[]>(['imports', 'list']);
    expect(list.map((i) => i.id)).toContain(segmentsImport.id);
    const table = await run(['imports', 'list']);
    expect(table.out.split('\n')[0]).toMatch(/^ID\s+CODE\s+RELATION\s+KIND\s+IDENTIFIERS\s+NAME$/);
    expect(table.out).toMatch(new RegExp(`^${segmentsImport.id}\\s+acme\\s+3rd\\s+segments\\s+email,crm\\s+Acme DMP$`, 'm'));
  });

  it('answers a repeated import code with 409 AlreadyExists in one line (D13)', async () => {
    expectOneLineError(
      await run(['imports', 'create', '--name', 'Again', '--code', 'acme', '--relation', '3rd', '--kind', 'segments']),
      /^error: HTTP 409 AlreadyExists: /,
    );
  });

  it('exits 2 on a bad --relation or --kind, before any request', async () => {
    expect((await run(['imports', 'create', '--name', 'N', '--code', 'c', '--relation', '1st', '--kind', 'segments'])).code).toBe(2);
    expect((await run(['imports', 'create', '--name', 'N', '--code', 'c', '--relation', '2nd', '--kind', 'other'])).code).toBe(2);
  });

  it('refuses a public key with 403 InsufficientAPIKey and an unknown import with 404 DoesNotExist (D13)', async () => {
    expectOneLineError(await run(['imports', 'list'], service.keys.public_key), /^error: HTTP 403 InsufficientAPIKey: /);
    expectOneLineError(await run(['imports', 'segments', 'list', randomUUID()]), /^error: HTTP 404 DoesNotExist: /);
  });

  it('creates, updates and deletes a segment (D26)', async () => {
    const created = await json<SegmentWire>([
      'imports', 'segments', 'create', segmentsImport.id, '--name', 'Golf', '--code', 'golf', '--cpm', '1.5', '--categories', 'sports,leisure', '--description', 'golfers',
    ]);
    expect([created.code, created.cpm, created.description]).toEqual(['golf', 1.5, 'golfers']);
    expect(created.categories).toEqual(['sports', 'leisure']);
    expectOneLineError(await run(['imports', 'segments', 'create', segmentsImport.id, '--name', 'Golf', '--code', 'golf']), /^error: HTTP 409 AlreadyExists: /);

    const updated = await json<SegmentWire>(['imports', 'segments', 'update', segmentsImport.id, 'golf', '--cpm', '2', '--categories', '']);
    expect([updated.id, updated.cpm, updated.name]).toEqual([created.id, 2, 'Golf']);
    expect(updated.categories).toEqual([]);
    expect((await run(['imports', 'segments', 'update', segmentsImport.id, 'golf'])).code).toBe(2);
    expect((await run(['imports', 'segments', 'update', segmentsImport.id, 'golf', '--cpm', '-1'])).code).toBe(2);

    const deleted = await run(['imports', 'segments', 'delete', segmentsImport.id, created.id]);
    expect(deleted.code).toBe(0);
    expect(deleted.out).toMatch(new RegExp(`^deleted segment\\s+${created.id}$`, 'm'));
    expectOneLineError(await run(['imports', 'segments', 'delete', segmentsImport.id, created.id]), /^error: HTTP 404 DoesNotExist: /);
    expectOneLineError(await run(['imports', 'segments', 'update', segmentsImport.id, 'golf', '--name', 'G']), /^error: HTTP 404 DoesNotExist: /);
  });

  it('lists every segment of an import, following the pages (D26)', async () => {
    const paged = await json<ImportWire>(['imports', 'create', '--name', 'Paged', '--code', 'paged', '--relation', '2nd', '--kind', 'segments']);
    const operations = Array.from({ length: 250 }, (_, i) => ({ operation: 'Create', name: `Segment ${i}`, code: `s${String(i).padStart(3, '0')}` }));
    const batch = await service.json('PATCH', `/audience-api/v1/imports/${paged.id}/segments`, { body: { operations } });
    expect(batch.status).toBe(200);
    const list = await json<SegmentWire[]>(['imports', 'segments', 'list', paged.id]);
    expect(list.map((s) => s.code)).toEqual(operations.map((o) => o.code));
    const table = await run(['imports', 'segments', 'list', paged.id]);
    expect(table.out.trimEnd().split('\n')).toHaveLength(251);
  });

  it('loads 100,000 members from NDJSON in batches, and a re-run adds nothing (D27, resume-safe)', async () => {
    const file = join(dir, 'members.ndjson');
    const users = Array.from({ length: 100_000 }, () => randomUUID());
    await writeLines(file, users.map((id, i) => (i % 10 === 0 ? JSON.stringify({ alias: { tag: 'email', id: `${id}@example.com` } }) : JSON.stringify({ user_id: id }))));

    const first = await json<{ added: number; removed: number; lines: number; requests: number }>(['imports', 'members', 'load', segmentsImport.id, 'sports', file]);
    expect(first).toEqual({ added: 100_000, removed: 0, lines: 100_000, requests: 20 });

    const again = await run(['imports', 'members', 'load', segmentsImport.id, 'sports', file]);
    expect(again.code).toBe(0);
    expect(again.out).toBe('added 0, removed 0, lines 100000\n');

    const removeFile = join(dir, 'remove.ndjson');
    await writeLines(removeFile, users.filter((_, i) => i % 10 !== 0).slice(0, 10).map((id) => JSON.stringify({ user_id: id })));
    const removed = await json<{ added: number; removed: number; lines: number }>(['imports', 'members', 'load', segmentsImport.id, 'sports', removeFile, '--remove']);
    expect([removed.added, removed.removed, removed.lines]).toEqual([0, 10, 10]);
  }, 180_000);

  it('draws a progress bar on stderr when stdout is a terminal, and keeps stdout to the result', async () => {
    const file = join(dir, 'tty.ndjson');
    await writeLines(file, Array.from({ length: 30 }, () => JSON.stringify({ user_id: randomUUID() })));
    const io = { ...captureIo({ env: { AUDIENCE_URL: service.url, AUDIENCE_KEY: service.keys.private_key } }), isTTY: true };
    expect(await runCli(['imports', 'members', 'load', segmentsImport.id, 'sports', file, '--batch', '10'], io)).toBe(0);
    expect(io.stderrText()).toMatch(/adding \[#+\.*\] +\d+% /);
    expect(io.stdoutText()).toBe('added 30, removed 0, lines 30\n');
  });

  it('names the line of a malformed line, and of a line the server refuses, exit 1', async () => {
    const malformed = join(dir, 'malformed.ndjson');
    await writeLines(malformed, [JSON.stringify({ user_id: randomUUID() }), '', '{"user_id": ', JSON.stringify({ user_id: randomUUID() })]);
    expectOneLineError(await run(['imports', 'members', 'load', segmentsImport.id, 'sports', malformed]), /line 3: /);

    const wrongShape = join(dir, 'wrong-shape.ndjson');
    await writeLines(wrongShape, [JSON.stringify({ user_id: randomUUID() }), JSON.stringify({ email: 'x@example.com' })]);
    expectOneLineError(await run(['imports', 'members', 'load', segmentsImport.id, 'sports', wrongShape]), /line 2: /);

    const refused = join(dir, 'refused.ndjson');
    const lines = Array.from({ length: 7 }, () => JSON.stringify({ user_id: randomUUID() }));
    lines.splice(4, 0, JSON.stringify({ alias: { tag: 'phone', id: '555' } }));
    await writeLines(refused, lines);
    expectOneLineError(await run(['imports', 'members', 'load', segmentsImport.id, 'sports', refused, '--batch', '3']), /^error: HTTP 400 InvalidRequestBody: .*line 5\b/);

    expectOneLineError(await run(['imports', 'members', 'load', segmentsImport.id, 'sports', join(dir, 'missing.ndjson')]), /missing\.ndjson/);
    const good = join(dir, 'good.ndjson');
    await writeLines(good, [JSON.stringify({ user_id: randomUUID() })]);
    expectOneLineError(await run(['imports', 'members', 'load', segmentsImport.id, 'no-such-code', good]), /^error: HTTP 404 DoesNotExist: /);
    expect((await run(['imports', 'members', 'load', segmentsImport.id, 'sports', refused, '--batch', '0'])).code).toBe(2);
  });

  it('loads rows of a connections import from NDJSON; a re-run replaces them (D27)', async () => {
    const schemaFile = join(dir, 'schema.json');
    await writeFile(schemaFile, JSON.stringify({ amount: 'number', product: 'string' }));
    const crm = await json<ImportWire & { schema: Record<string, string> }>([
      'imports', 'create', '--name', 'CRM', '--code', 'crm', '--relation', '2nd', '--kind', 'connections', '--schema', schemaFile,
    ]);
    expect(crm.schema).toEqual({ amount: 'number', product: 'string' });
    const rowsFile = join(dir, 'rows.ndjson');
    const user = randomUUID();
    await writeLines(rowsFile, [
      JSON.stringify({ user_id: user, time: '2026-01-01T00:00:00Z', properties: { amount: 10, product: 'shoe' } }),
      JSON.stringify({ user_id: user, time: '2026-01-02T00:00:00Z', properties: { amount: 20, product: 'hat' } }),
      JSON.stringify({ user_id: randomUUID(), time: '2026-01-02T00:00:00Z', properties: { amount: 5 }, id: 'order-1' }),
    ]);
    expect(await json(['imports', 'rows', 'load', crm.id, rowsFile])).toEqual({ loaded: 3, lines: 3, requests: 1 });
    const again = await run(['imports', 'rows', 'load', crm.id, rowsFile]);
    expect(again.out).toBe('loaded 3, lines 3\n');

    const badRow = join(dir, 'bad-row.ndjson');
    await writeLines(badRow, [JSON.stringify({ user_id: user, properties: { amount: 'ten' } })]);
    expectOneLineError(await run(['imports', 'rows', 'load', crm.id, badRow]), /^error: HTTP 400 InvalidRequestBody: .*line 1\b/);
    expectOneLineError(await run(['imports', 'rows', 'load', crm.id, badRow], service.keys.public_key), /^error: HTTP 403 InsufficientAPIKey: /);
  });
});

/** Writes lines through a stream (a 100,000-line file without one giant string). */
async function writeLines(file: string, lines: readonly string[]): Promise<void> {
  const out = createWriteStream(file);
  for (const line of lines) {
    if (!out.write(line + '\n')) await new Promise<void>((resolve) => out.once('drain', resolve));
  }
  await new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(error) : resolve())));
}
