// Runs the built `audience` binary as a child process for tests that need a real process (serve, signals, locks).

import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const BIN = fileURLToPath(new URL('../../dist/cli/bin.js', import.meta.url));

export async function tempDir(prefix = 'audience-test-'): Promise<{ path: string; remove: () => Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), prefix));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}

export interface RunningCli {
  readonly child: ChildProcessWithoutNullStreams;
  stdout(): string;
  stderr(): string;
  /** Resolves with the first stdout/stderr match of the pattern, or rejects when the process exits first. */
  waitFor(pattern: RegExp): Promise<RegExpMatchArray>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function startCli(args: readonly string[], env: Record<string, string> = {}): RunningCli {
  return startProgram(process.execPath, [BIN, ...args], { ...process.env, ...env });
}

/** Starts any program with exactly the environment given (the packaged executable runs with no Node around it). */
export function startProgram(command: string, args: readonly string[], env: NodeJS.ProcessEnv, cwd?: string): RunningCli {
  const child = spawn(command, args, { env, stdio: 'pipe', ...(cwd === undefined ? {} : { cwd }) });
  let out = '';
  let err = '';
  const waiters: Array<{ pattern: RegExp; resolve: (m: RegExpMatchArray) => void; reject: (e: Error) => void }> = [];
  const check = () => {
    for (const waiter of [...waiters]) {
      const match = (out + '\n' + err).match(waiter.pattern);
      if (match) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(match);
      }
    }
  };
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    check();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    err += chunk.toString();
    check();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('exit', (code, signal) => {
      for (const waiter of waiters.splice(0)) {
        waiter.reject(new Error(`process exited (${code ?? signal}) before ${waiter.pattern}; stdout: ${out} stderr: ${err}`));
      }
      resolve({ code, signal });
    });
  });
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    waitFor: (pattern) =>
      new Promise((resolve, reject) => {
        waiters.push({ pattern, resolve, reject });
        check();
        if (child.exitCode !== null) reject(new Error(`process already exited; stdout: ${out} stderr: ${err}`));
      }),
    exited,
  };
}

/** Runs the binary to completion. */
export async function runCliProcess(args: readonly string[], env: Record<string, string> = {}) {
  return runToEnd(startCli(args, env));
}

/** Waits for a started program to finish, its stdin closed. */
export async function runToEnd(running: RunningCli) {
  running.child.stdin.end();
  const { code } = await running.exited;
  return { code, stdout: running.stdout(), stderr: running.stderr() };
}
