// The CLI's HTTP client, output and progress without a server: every error envelope (D10, D12, D13) becomes one
// line `HTTP <status> <code>: <message>[: <cause>]`, a missing key is exit 1 naming --key/AUDIENCE_KEY.

import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { parseErrorResponse, HttpError } from '../../cli/client.js';
import { formatCell, formatTable } from '../../cli/format.js';
import { pace, renderBar, startProgress } from '../../cli/progress.js';
import { runCli } from '../../cli/main.js';
import { captureIo } from '../support/cli-io.js';

describe('parseErrorResponse: one line from any envelope', () => {
  it('reads the cohort/admin envelope with its cause (D10, D18)', () => {
    const body = {
      request_id: 'r',
      error: { type: 't', status_code: 400, status: 'Bad Request', code: 1002, message: 'The request body is not structured as expected.', docs: 'd', cause: 'query.and[0]: expected a list' },
    };
    const error = parseErrorResponse(400, 'Bad Request', JSON.stringify(body));
    expect(error).toBeInstanceOf(HttpError);
    expect(error.exitCode).toBe(1);
    expect(error.status).toBe(400);
    expect(error.code).toBe(1002);
    expect(error.detail).toBe('query.and[0]: expected a list');
    expect(error.message).toBe('HTTP 400 1002: The request body is not structured as expected: query.and[0]: expected a list');
  });

  it('reads the identity envelope, nested and flat (D10, D12)', () => {
    const nested = parseErrorResponse(401, 'Unauthorized', JSON.stringify({ request_id: 'r', error: { status: 'Unauthorized', code: 2000, message: 'm', cause: 'c' } }));
    expect([nested.status, nested.code, nested.detail]).toEqual([401, 2000, 'c']);
    const flat = parseErrorResponse(400, 'Bad Request', JSON.stringify({ request_id: 'r', status: 'Bad Request', code: 3002, message: 'm', docs: 'd' }));
    expect([flat.status, flat.code, flat.detail]).toEqual([400, 3002, undefined]);
    expect(flat.message).toMatch(/^HTTP 400 3002: m$/);
  });

  it('reads the taxonomy envelope by its error name c (D13)', () => {
    const error = parseErrorResponse(409, 'Conflict', JSON.stringify({ requestId: 'r', error: { c: 'AlreadyExists', d: { message: 'm', code: 4000, cause: 'code: sports' } } }));
    expect([error.status, error.code, error.detail]).toEqual([409, 'AlreadyExists', 'code: sports']);
    expect(error.message).toMatch(/^HTTP 409 AlreadyExists: m: code: sports$/);
  });

  it('names the request id on a 5xx, whose message asks to quote it (D4, D11 5000)', () => {
    const body = { request_id: 'a1b2', error: { type: 't', status_code: 500, status: 'Internal Server Error', code: 5000, message: 'm', docs: 'd' } };
    const error = parseErrorResponse(500, 'Internal Server Error', JSON.stringify(body));
    expect(error.requestId).toBe('a1b2');
    expect(error.message).toMatch(/^HTTP 500 5000: m \[request a1b2\]$/);
    expect(parseErrorResponse(502, 'Bad Gateway', 'oops', 'c3d4').message).toMatch(/\[request c3d4\]$/);
    expect(parseErrorResponse(404, 'Not Found', JSON.stringify({ request_id: 'x', error: { code: 3000, message: 'm' } })).message).not.toContain('request');
  });

  it('keeps a body that is not JSON to one line', () => {
    const error = parseErrorResponse(502, 'Bad Gateway', '<html>\n<body>bad gateway</body>\n</html>');
    expect(error.status).toBe(502);
    expect(error.code).toBeUndefined();
    expect(error.message.split('\n')).toHaveLength(1);
    expect(parseErrorResponse(503, 'Service Unavailable', '').message).toMatch(/^HTTP 503: /);
  });
});

describe('CLI without a usable server or key', () => {
  it('exits 1 (not 2) with one line naming --key and AUDIENCE_KEY when no key is given', async () => {
    for (const argv of [['workspaces', 'list'], ['keys', 'list'], ['cohorts', 'list'], ['imports', 'list']]) {
      const io = captureIo({ env: { AUDIENCE_URL: 'http://127.0.0.1:9' } });
      expect(await runCli(argv, io)).toBe(1);
      expect(io.stderrText()).toContain('--key');
      expect(io.stderrText()).toContain('AUDIENCE_KEY');
      expect(io.stderrText().trim().split('\n')).toHaveLength(1);
      expect(io.stdoutText()).toBe('');
    }
  });

  it('exits 1 with one line when the server cannot be reached', async () => {
    const port = await closedPort();
    const io = captureIo({ env: { AUDIENCE_URL: `http://127.0.0.1:${port}`, AUDIENCE_KEY: '00000000-0000-4000-8000-000000000000' } });
    expect(await runCli(['workspaces', 'list'], io)).toBe(1);
    expect(io.stderrText()).toMatch(/^error: cannot reach /);
    expect(io.stderrText().trim().split('\n')).toHaveLength(1);
  });

  it('exits 2 on a --url that is not an http address', async () => {
    const io = captureIo({ env: { AUDIENCE_KEY: '00000000-0000-4000-8000-000000000000' } });
    expect(await runCli(['--url', 'ftp://example.com', 'cohorts', 'list'], io)).toBe(2);
  });
});

describe('format and progress', () => {
  it('aligns table columns and shows nothing as -', () => {
    const text = formatTable([{ a: 'x', b: null }, { a: 'longer', b: ['p', 'q'] }], [
      { header: 'A', value: (row) => row.a },
      { header: 'B', value: (row) => row.b },
    ]);
    expect(text.split('\n')).toEqual(['A       B', 'x       -', 'longer  p,q', '']);
    expect(formatCell({ k: 1 })).toBe('{"k":1}');
    expect(formatCell('two\nlines')).toBe('two lines');
  });

  it('shows the rate and the time left of a load (members load, rows load)', () => {
    expect(pace(0.25, 1000, 0, 2000)).toBe('500 lines/s, ETA 6 s');
    expect(pace(0.01, 100, 0, 10_000)).toBe('10 lines/s, ETA 17 min');
    expect(pace(1, 4000, 0, 2000)).toBe('2,000 lines/s');
    expect(pace(0.5, 0, 0, 1000)).toBe('');
  });

  it('draws a bar on a TTY only and clears it at the end', () => {
    expect(renderBar('adding', 5, 10, '5 lines')).toMatch(/^adding \[#{15}\.{15}\]  50% 5 lines$/);
    const tty = { ...captureIo(), isTTY: true };
    let clock = 0;
    const progress = startProgress(tty, 10, 'adding', () => (clock += 1000));
    progress.update(5, 'half');
    progress.finish();
    progress.finish();
    expect(tty.err.join('')).toContain('50% half');
    expect(tty.err.filter((chunk) => chunk === '\r\x1b[2K')).toHaveLength(1);
    const plain = captureIo();
    const silent = startProgress(plain, 10, 'adding');
    silent.update(5, 'half');
    silent.finish();
    expect(plain.stderrText()).toBe('');
  });
});

/** A port nothing listens on: bound, read and released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}
