// Every administration command and subcommand has complete --help text with an Example section (brief of
// issue 7), and usage errors of these commands exit 2 (operations.md).

import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram, runCli } from '../../cli/main.js';
import { captureIo } from '../support/cli-io.js';

const ADMIN_COMMANDS = ['workspaces', 'keys', 'cohorts', 'imports'];

/** Every command path below the admin commands, e.g. ['imports', 'segments', 'list']. */
function commandPaths(): string[][] {
  const program = buildProgram(captureIo());
  const paths: string[][] = [];
  const walk = (command: Command, path: string[]): void => {
    paths.push(path);
    for (const sub of command.commands) walk(sub, [...path, sub.name()]);
  };
  for (const command of program.commands) {
    if (ADMIN_COMMANDS.includes(command.name())) walk(command, [command.name()]);
  }
  return paths;
}

describe('help of the administration commands', () => {
  const paths = commandPaths();

  it('covers every command the brief names', () => {
    const names = paths.map((path) => path.join(' '));
    for (const expected of [
      'workspaces create', 'workspaces list', 'keys create', 'keys list', 'keys revoke',
      'cohorts list', 'cohorts get', 'cohorts create', 'cohorts update', 'cohorts delete', 'cohorts recompute',
      'imports create', 'imports list', 'imports segments create', 'imports segments list', 'imports segments update',
      'imports segments delete', 'imports members load', 'imports rows load',
    ]) {
      expect(names).toContain(expected);
    }
  });

  for (const path of paths) {
    it(`audience ${path.join(' ')} --help exits 0 with its global options, an Example, and no key value`, async () => {
      const key = '5c8d2f4e-0b1a-4c3d-9e8f-7a6b5c4d3e2f';
      const io = captureIo({ env: { AUDIENCE_KEY: key } });
      expect(await runCli([...path, '--help'], io)).toBe(0);
      const text = io.stdoutText();
      expect(text).toContain(`Usage: audience ${path.join(' ')}`);
      expect(text).toContain('AUDIENCE_URL');
      expect(text).toContain('AUDIENCE_KEY');
      expect(text).toContain('Example:');
      expect(text).toContain(`$ audience ${path.join(' ')}`);
      expect(text).not.toContain(key);
    });
  }

  it('exits 2 on a missing argument or required option, with no request made', async () => {
    const env = { AUDIENCE_URL: 'http://127.0.0.1:9', AUDIENCE_KEY: '00000000-0000-4000-8000-000000000000' };
    for (const argv of [
      ['workspaces', 'create'],
      ['cohorts', 'get'],
      ['cohorts', 'create', '--query', 'q.json'],
      ['imports', 'segments', 'create', 'imp', '--name', 'n'],
      ['imports', 'members', 'load', 'imp', 'code'],
      ['imports', 'rows', 'load', 'imp'],
      ['cohorts', 'frobnicate'],
    ]) {
      const io = captureIo({ env });
      expect(await runCli(argv, io)).toBe(2);
      expect(io.stdoutText()).toBe('');
    }
  });
});
