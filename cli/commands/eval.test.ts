// Tests of `audience eval` through registerEvalCommand with a fake io: JSON and text output, stdin, and the
// errors (invalid query with its JSON path, D18; bad NDJSON line; both inputs on stdin).

import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { CliError, type CliIo } from '../io.js';
import { registerEvalCommand } from './eval.js';
import { captureIo, type CapturedIo } from '../../test/support/cli-io.js';

/** The shared fake io: files from the map (a path outside it is read from disk, so a missing one fails). */
const fakeIo = (files: Record<string, string>, stdin = ''): CapturedIo => captureIo({ files, stdin });

async function runEval(args: string[], io: CliIo): Promise<void> {
  const program = new Command('audience').exitOverride().configureOutput({ writeOut: io.stdout, writeErr: io.stderr });
  registerEvalCommand(program, io);
  await program.parseAsync(['eval', ...args], { from: 'user' });
}

async function failure(args: string[], io: CliIo): Promise<CliError> {
  const error = await runEval(args, io).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CliError);
  return error as CliError;
}

const ndjson = (events: object[]): string => events.map((e) => JSON.stringify(e)).join('\n') + '\n';
const pageviews = (count: number): object[] =>
  Array.from({ length: count }, (_, i) => ({ name: 'Pageview', time: `2026-01-01T00:0${i}:00Z`, properties: { i } }));
const FIVE_VIEWS = JSON.stringify({ event: 'Pageview', frequency: { greater_than_or_equal_to: 5 } });

describe('audience eval', () => {
  it('prints one JSON line per transition and the final membership (five page views: in at the fifth)', async () => {
    const io = fakeIo({ 'q.json': FIVE_VIEWS, 'e.ndjson': ndjson(pageviews(5)) });
    await runEval(['--query', 'q.json', '--events', 'e.ndjson', '--json'], io);
    const lines = io.out.join('').trim().split('\n').map((line) => JSON.parse(line) as unknown);
    expect(lines).toEqual([{ transition: 'entered', time: '2026-01-01T00:04:00.000Z', event: 4 }, { member: true }]);
  });

  it('honours --json when the program declares it globally too (operations.md global options)', async () => {
    for (const args of [['--json', 'eval'], ['eval', '--json']]) {
      const io = fakeIo({ 'q.json': FIVE_VIEWS, 'e.ndjson': ndjson(pageviews(5)) });
      const program = new Command('audience').exitOverride().option('--json');
      registerEvalCommand(program, io);
      await program.parseAsync([...args, '--query', 'q.json', '--events', 'e.ndjson'], { from: 'user' });
      expect(JSON.parse(io.out.join('').trim().split('\n').at(-1) ?? '')).toEqual({ member: true });
    }
  });

  it('reports an exit caused by an unrelated event when a window passes (E5), in text form', async () => {
    const query = JSON.stringify({ event: 'Click', during: { the_last: { value: 1, unit: 'minutes' } } });
    const events = ndjson([
      { name: 'Click', time: '2026-01-01T00:00:00Z' },
      { name: 'Pageview', time: '2026-01-01T00:00:59.999+00:00' },
      { name: 'Pageview', time: '2026-01-01T01:01:00+01:00' },
    ]);
    const io = fakeIo({ 'q.json': query, 'e.ndjson': events });
    await runEval(['--query', 'q.json', '--events', 'e.ndjson'], io);
    expect(io.out.join('').trim().split('\n')).toEqual([
      'entered at 2026-01-01T00:00:00.000Z (event 0: Click)',
      'exited at 2026-01-01T00:01:00.000Z (event 2: Pageview)',
      'member: no',
    ]);
  });

  it('reads the events from stdin with "-", and blank lines are skipped', async () => {
    const io = fakeIo({ 'q.json': FIVE_VIEWS }, '\n' + ndjson(pageviews(4)) + '\n');
    await runEval(['--query', 'q.json', '--events', '-', '--json'], io);
    expect(io.out.join('').trim().split('\n').map((line) => JSON.parse(line) as unknown)).toEqual([{ member: false }]);
  });

  it('an invalid query exits 1 naming the JSON path of the first problem (D18)', async () => {
    const io = fakeIo({ 'q.json': JSON.stringify({ and: [{ event: 'Pageview', frequency: { more_than: 1 } }] }), 'e.ndjson': '' });
    const error = await failure(['--query', 'q.json', '--events', 'e.ndjson'], io);
    expect(error.exitCode).toBe(1);
    expect(error.message.startsWith('query.and[0]')).toBe(true);
  });

  it('a query that is not JSON, or names another cohort, exits 1', async () => {
    const notJson = fakeIo({ 'q.json': '{', 'e.ndjson': '' });
    expect((await failure(['--query', 'q.json', '--events', 'e.ndjson'], notJson)).exitCode).toBe(1);
    const other = fakeIo({ 'q.json': JSON.stringify({ has_entered: { segment: 7 } }), 'e.ndjson': '' });
    expect((await failure(['--query', 'q.json', '--events', 'e.ndjson'], other)).exitCode).toBe(1);
  });

  it('a bad events line exits 1 naming its line number', async () => {
    for (const bad of ['{"name": "Click"}', '{"name": "Click", "time": "yesterday"}', '[1]', 'nope', '{"name": "", "time": "2026-01-01T00:00:00Z"}']) {
      const io = fakeIo({ 'q.json': FIVE_VIEWS, 'e.ndjson': `${JSON.stringify({ name: 'Pageview', time: '2026-01-01T00:00:00Z' })}\n${bad}\n` });
      const error = await failure(['--query', 'q.json', '--events', 'e.ndjson'], io);
      expect(error.exitCode).toBe(1);
      expect(error.message).toContain('line 2');
    }
  });

  it('a missing file exits 1; both inputs on stdin is a usage error (exit 2)', async () => {
    expect((await failure(['--query', 'nope.json', '--events', 'e.ndjson'], fakeIo({ 'e.ndjson': '' }))).exitCode).toBe(1);
    expect((await failure(['--query', '-', '--events', '-'], fakeIo({}))).exitCode).toBe(2);
  });
});
