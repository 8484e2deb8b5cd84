// `audience cohorts` against the real service in-process (D14–D20): create from a file or stdin, list, get,
// update, delete, recompute; a bad query shows the server's path-and-reason cause on one line (D18).

import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../cli/main.js';
import { describeCohort, describeCohortList, usersLabel } from '../../cli/commands/cohorts.js';
import { captureIo } from '../support/cli-io.js';
import { startTestService, type TestService } from '../support/service.js';

interface Ran {
  code: number;
  out: string;
  err: string;
}

interface Cohort {
  id: string;
  code: number;
  name: string;
  description?: string;
  tags: string[];
  state: string;
  segment_type: string;
  workspace_id: string;
  query?: unknown;
}

const FIVE_PAGEVIEWS = { event: 'Pageview', frequency: { greater_than_or_equal_to: 5 } };

describe('audience cohorts', () => {
  let service: TestService;
  let dir: string;
  let queryFile: string;

  const run = async (argv: string[], options: { key?: string | null; stdin?: string } = {}): Promise<Ran> => {
    const key = options.key === undefined ? service.keys.private_key : options.key;
    const io = captureIo({ env: { AUDIENCE_URL: service.url, AUDIENCE_KEY: key ?? undefined }, stdin: options.stdin });
    const code = await runCli(argv, io);
    return { code, out: io.stdoutText(), err: io.stderrText() };
  };
  const json = async <T>(argv: string[], options: { key?: string | null; stdin?: string } = {}): Promise<T> => {
    const ran = await run([...argv, '--json'], options);
    expect(ran.err).toBe('');
    expect(ran.code).toBe(0);
    return JSON.parse(ran.out) as T;
  };
  const expectOneLineError = (ran: Ran, pattern: RegExp): void => {
    expect(ran.code).toBe(1);
    expect(ran.err).toMatch(pattern);
    expect(ran.err.trim().split('\n')).toHaveLength(1);
    expect(ran.err).not.toMatch(/\n\s+at /);
    expect(ran.out).toBe('');
  };
  const create = (name: string, extra: string[] = []): Promise<Cohort> => json<Cohort>(['cohorts', 'create', '--name', name, '--query', queryFile, ...extra]);

  beforeAll(async () => {
    service = await startTestService();
    dir = await mkdtemp(join(tmpdir(), 'audience-cli-cohorts-'));
    queryFile = join(dir, 'five-pageviews.json');
    await writeFile(queryFile, JSON.stringify(FIVE_PAGEVIEWS));
  });
  afterAll(async () => {
    await service.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('creates a cohort from a query file with description and tags (D14)', async () => {
    const cohort = await create('Fans', ['--description', 'five or more', '--tags', 'web, engaged']);
    expect(cohort.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(Number.isInteger(cohort.code)).toBe(true);
    expect([cohort.name, cohort.description, cohort.state, cohort.segment_type]).toEqual(['Fans', 'five or more', 'Enabled', 'real_time']);
    expect(cohort.tags).toEqual(['web', 'engaged']);
    expect(cohort.query).toEqual(FIVE_PAGEVIEWS);
  });

  it('creates a cohort from stdin with --query -, and an offline one (D20)', async () => {
    const fromStdin = await json<Cohort>(['cohorts', 'create', '--name', 'Stdin', '--query', '-'], { stdin: JSON.stringify(FIVE_PAGEVIEWS) });
    expect(fromStdin.query).toEqual(FIVE_PAGEVIEWS);
    const offline = await create('Nightly', ['--offline', '--workspace', service.keys.workspace_id]);
    expect(offline.segment_type).toBe('offline');
    expect(offline.workspace_id).toBe(service.keys.workspace_id);
    const human = await run(['cohorts', 'create', '--name', 'Human', '--query', queryFile]);
    expect(human.code).toBe(0);
    expect(human.out).toMatch(/^created cohort [0-9a-f-]{36} \(code \d+\)$/m);
  });

  it('lists cohorts as a table and as JSON without queries', async () => {
    const cohort = await create('Listed');
    const list = await json<Cohort[]>(['cohorts', 'list']);
    const found = list.find((c) => c.id === cohort.id);
    expect(found?.name).toBe('Listed');
    expect(found && 'query' in found).toBe(false);
    const table = await run(['cohorts', 'list']);
    expect(table.out.split('\n')[0]).toMatch(/^ID\s+CODE\s+STATE\s+TYPE\s+SIZE\s+BACKFILL\s+WORKSPACE\s+TAGS\s+NAME$/);
    expect(table.out).toMatch(new RegExp(`^${cohort.id}\\s+${cohort.code}\\s+Enabled\\s+real_time\\b.*Listed$`, 'm'));
  });

  it('passes --include-child-workspaces: allowed for a descendants key, 403 2001 for a workspace key (D8)', async () => {
    expect(Array.isArray(await json<Cohort[]>(['cohorts', 'list', '--include-child-workspaces']))).toBe(true);
    const narrow = await service.json<{ key: string }>('POST', '/admin/v1/keys', {
      body: { workspace_id: service.keys.workspace_id, type: 'private', access: 'workspace' },
    });
    expect(narrow.status).toBe(201);
    expect((await run(['cohorts', 'list'], { key: narrow.body.key })).code).toBe(0);
    expectOneLineError(await run(['cohorts', 'list', '--include-child-workspaces'], { key: narrow.body.key }), /^error: HTTP 403 2001: /);
  });

  it('gets one cohort with its query (D15), as JSON and for people', async () => {
    const cohort = await create('Got');
    const got = await json<Cohort>(['cohorts', 'get', cohort.id]);
    expect([got.id, got.code]).toEqual([cohort.id, cohort.code]);
    expect(got.query).toEqual(FIVE_PAGEVIEWS);
    const human = await run(['cohorts', 'get', cohort.id]);
    expect(human.out).toMatch(/^name\s+Got$/m);
    expect(human.out).toContain('"greater_than_or_equal_to": 5');
  });

  it('answers 404 3000 for a cohort that does not exist (D9)', async () => {
    expectOneLineError(await run(['cohorts', 'get', randomUUID()]), /^error: HTTP 404 3000: /);
    expectOneLineError(await run(['cohorts', 'delete', randomUUID()]), /^error: HTTP 404 3000: /);
  });

  it('updates name, description (--no-description deletes it), tags, query and state (D16)', async () => {
    const cohort = await create('Before', ['--description', 'old', '--tags', 'a']);
    const renamed = await json<Cohort>(['cohorts', 'update', cohort.id, '--name', 'After', '--no-description', '--tags', '', '--disable']);
    expect([renamed.name, renamed.description, renamed.state]).toEqual(['After', undefined, 'Disabled']);
    expect(renamed.tags).toEqual([]);
    const seven = { event: 'Pageview', frequency: { greater_than_or_equal_to: 7 } };
    const requeried = await json<Cohort>(['cohorts', 'update', cohort.id, '--query', '-', '--enable', '--description', 'new'], { stdin: JSON.stringify(seven) });
    expect([requeried.state, requeried.description]).toEqual(['Enabled', 'new']);
    expect(requeried.query).toEqual(seven);
    expect(requeried.name).toBe('After');
  });

  it('exits 2 on an update with nothing to change or with --enable and --disable together', async () => {
    const cohort = await create('Unchanged');
    expect((await run(['cohorts', 'update', cohort.id])).code).toBe(2);
    expect((await run(['cohorts', 'update', cohort.id, '--enable', '--disable'])).code).toBe(2);
    expect((await run(['cohorts', 'create', '--name', 'NoQuery'])).code).toBe(2);
  });

  it("shows a bad query as the server's 400 1002 with its path-and-reason cause, one line, no stack (D18)", async () => {
    const bad = join(dir, 'bad.json');
    await writeFile(bad, JSON.stringify({ and: [{ event: 'Pageview', frequency: { greater_than_or_equal_to: 'five' } }] }));
    const ran = await run(['cohorts', 'create', '--name', 'Bad', '--query', bad]);
    expectOneLineError(ran, /^error: HTTP 400 1002: .+: query\.and\[0\]\S*: /);
    const cohort = await create('Target');
    expectOneLineError(await run(['cohorts', 'update', cohort.id, '--query', bad]), /^error: HTTP 400 1002: .+: query\.and\[0\]/);
  });

  it('exits 1 naming the file when the query file is missing or is not JSON', async () => {
    const notJson = join(dir, 'not.json');
    await writeFile(notJson, '{ event: ');
    expectOneLineError(await run(['cohorts', 'create', '--name', 'X', '--query', notJson]), /not valid JSON/);
    expectOneLineError(await run(['cohorts', 'create', '--name', 'X', '--query', join(dir, 'missing.json')]), /missing\.json/);
  });

  it('deletes a cohort; one that another names is 409 4000 (D18)', async () => {
    const target = await create('Referenced');
    const referencing = join(dir, 'referencing.json');
    await writeFile(referencing, JSON.stringify({ has_entered: { segment: target.code } }));
    const user = await json<Cohort>(['cohorts', 'create', '--name', 'Referencing', '--query', referencing]);
    expectOneLineError(await run(['cohorts', 'delete', target.id]), /^error: HTTP 409 4000: /);
    const deleted = await json<{ id: string; deleted: boolean }>(['cohorts', 'delete', user.id]);
    expect(deleted).toEqual({ id: user.id, deleted: true });
    const human = await run(['cohorts', 'delete', target.id]);
    expect(human.code).toBe(0);
    expect(human.out).toBe(`deleted cohort ${target.id}\n`);
    expectOneLineError(await run(['cohorts', 'get', target.id]), /^error: HTTP 404 3000: /);
  });

  it('recomputes a cohort over history and follows it to the end; --no-wait returns at once; errors are one line (D20)', async () => {
    const cohort = await create('Offline', ['--offline']);
    const started = await json<Cohort & { backfill?: { state: string } }>(['cohorts', 'recompute', cohort.id, '--no-wait']);
    expect(started.id).toBe(cohort.id);
    expect(['running', 'done']).toContain(started.backfill?.state);
    const finished = await json<Cohort & { backfill?: unknown; live_audience_size?: number }>(['cohorts', 'recompute', cohort.id]);
    expect(finished.id).toBe(cohort.id);
    expect(finished.backfill).toBeUndefined();
    expect(finished.live_audience_size).toBe(0);
    const human = await run(['cohorts', 'recompute', cohort.id]);
    expect(human.code).toBe(0);
    expect(human.out).toMatch(new RegExp(`^recompute of cohort ${cohort.id} \\(code ${cohort.code}\\) done: 0 users`));
    expectOneLineError(await run(['cohorts', 'recompute', randomUUID()]), /^error: HTTP 404 3000: /);
    await json(['cohorts', 'update', cohort.id, '--disable']);
    expectOneLineError(await run(['cohorts', 'recompute', cohort.id]), /^error: HTTP 409 4000: /);
  });

  it('waits for an offline computation over real history and prints the exact size (D20)', async () => {
    const buyers = Array.from({ length: 40 }, () => randomUUID());
    for (const [index, user] of buyers.entries()) {
      const name = index % 4 === 0 ? 'Browse' : 'Buy';
      const tracked = await service.json('POST', '/v2.0/events', { key: service.keys.public_key, body: { name, user_id: user, properties: {} } });
      expect(tracked.status).toBe(200);
    }
    const cohort = await json<Cohort>(['cohorts', 'create', '--name', 'Offline buyers', '--query', '-', '--offline'], {
      stdin: JSON.stringify({ event: 'Buy' }),
    });
    const finished = await json<Cohort & { backfill?: unknown; live_audience_size?: number }>(['cohorts', 'recompute', cohort.id]);
    expect(finished.backfill).toBeUndefined();
    expect(finished.live_audience_size).toBe(30);
  });

  it('refuses a public key with 403 2001 (D6) and no key with exit 1', async () => {
    expectOneLineError(await run(['cohorts', 'list'], { key: service.keys.public_key }), /^error: HTTP 403 2001: /);
    expectOneLineError(await run(['cohorts', 'create', '--name', 'P', '--query', queryFile], { key: service.keys.public_key }), /^error: HTTP 403 2001: /);
    expectOneLineError(await run(['cohorts', 'get', randomUUID()], { key: null }), /--key.*AUDIENCE_KEY/);
  });
});

describe('recompute progress labels', () => {
  it('never shows "0 of 0": before the users are counted it says so', () => {
    expect(usersLabel(0, 0)).toBe('counting users');
    expect(usersLabel(3, 10)).toBe('3 of 10 users');
  });

  it('cohorts get shows a running backfill beside the size (D19), and nothing once done', () => {
    const cohort = { id: 'c1', code: 1, name: 'n', tags: [], state: 'Enabled', workspace_id: 'w', segment_type: 'real_time', live_audience_size: 4, created_at: 't', last_updated_at: 't', query: {} };
    expect(describeCohort({ ...cohort, backfill: { state: 'running', users_done: 3, users_total: 10 } } as never)).toMatch(/backfill\s+running, 3 of 10 users/);
    expect(describeCohort(cohort as never)).not.toMatch(/backfill/);
  });

  it('cohorts list shows each running backfill in its BACKFILL column, "-" when there is none', () => {
    const cohort = { id: 'c1', code: 1, name: 'n', tags: [], state: 'Enabled', workspace_id: 'w', segment_type: 'real_time', live_audience_size: 4, created_at: 't', last_updated_at: 't' };
    const table = describeCohortList([{ ...cohort, backfill: { state: 'running', users_done: 3, users_total: 10 } }, { ...cohort, id: 'c2', code: 2 }] as never).split('\n');
    expect(table[0]).toMatch(/SIZE\s+BACKFILL\s+WORKSPACE/);
    expect(table[1]).toMatch(/^c1\s.*\s4\s+running, 3 of 10 users\s+w\s/);
    expect(table[2]).toMatch(/^c2\s.*\s4\s+-\s+w\s/);
  });
});
