// A fake CliIo for in-process CLI tests: captures stdout/stderr, serves files from a map or the disk.

import { readFile } from 'node:fs/promises';
import type { CliIo } from '../../cli/io.js';

export interface CapturedIo extends CliIo {
  readonly out: string[];
  readonly err: string[];
  stdoutText(): string;
  stderrText(): string;
}

export function captureIo(options: { env?: Record<string, string | undefined>; stdin?: string; files?: Record<string, string> } = {}): CapturedIo {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    stdout: (text) => void out.push(text),
    stderr: (text) => void err.push(text),
    readFile: async (path) => options.files?.[path] ?? readFile(path, 'utf8'),
    readStdin: async () => options.stdin ?? '',
    env: options.env ?? {},
    isTTY: false,
    stdoutText: () => out.join(''),
    stderrText: () => err.join(''),
  };
}
