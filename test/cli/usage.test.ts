// Usage errors exit 2 with help; --help exits 0 (operations.md: exit codes). Driven in-process through runCli.

import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../cli/main.js';
import { captureIo } from '../support/cli-io.js';

describe('CLI usage errors', () => {
  const cases: Array<[string, string[]]> = [
    ['an unknown command', ['frobnicate']],
    ['an unknown option', ['init', '--data', '/tmp/x', '--no-such-option']],
    ['init without --data', ['init']],
    ['serve without --data', ['serve']],
    ['serve with a port that is not a number', ['serve', '--data', '/tmp/never-created', '--port', 'eighty']],
    ['serve with a port out of range', ['serve', '--data', '/tmp/never-created', '--port', '70000']],
    ['serve with --tls-cert but no --tls-key', ['serve', '--data', '/tmp/never-created', '--tls-cert', 'c.pem']],
  ];
  for (const [what, argv] of cases) {
    it(`exits 2 on ${what}`, async () => {
      const io = captureIo();
      expect(await runCli(argv, io)).toBe(2);
      expect(io.stderrText()).toMatch(/error|unknown|required|must|go together/i);
      expect(io.stdoutText()).toBe('');
    });
  }

  const limits: Array<[string, string]> = [
    ['--state-cache-bytes', '-5'],
    ['--context-cache-bytes', '-1'],
    ['--schema-cache-bytes', 'lots'],
    ['--offline-every', 'hourly'],
    ['--stream-retention', '1'],
    ['--fold-every', '-1'],
  ];
  for (const [flag, value] of limits) {
    it(`exits 2 on serve ${flag} ${value} before creating the data directory`, async () => {
      const data = join(tmpdir(), `audience-never-${randomUUID()}`);
      const io = captureIo();
      expect(await runCli(['serve', '--data', data, flag, value], io)).toBe(2);
      expect(io.stderrText()).toContain(flag);
      expect(io.stdoutText()).toBe('');
      expect(existsSync(data)).toBe(false);
    });
  }

  it('exits 0 on --help and shows every top-level command with an example', async () => {
    const io = captureIo();
    expect(await runCli(['--help'], io)).toBe(0);
    expect(io.stdoutText()).toContain('init');
    expect(io.stdoutText()).toContain('serve');
    expect(io.stdoutText()).toContain('Example');
  });

  it('never prints the API key from the environment in help', async () => {
    const secret = '0b9d6f3e-1a2b-4c3d-8e4f-5a6b7c8d9e0f';
    const io = captureIo({ env: { AUDIENCE_KEY: secret } });
    expect(await runCli(['--help'], io)).toBe(0);
    expect(await runCli(['cohorts', 'list', '--help'], io)).toBe(0);
    expect(io.stdoutText() + io.stderrText()).not.toContain(secret);
  });

  it('exits 0 on a subcommand --help', async () => {
    const io = captureIo();
    expect(await runCli(['serve', '--help'], io)).toBe(0);
    expect(io.stdoutText()).toContain('--data');
  });
});
