// Output of the administration commands: aligned tables and label/value lines for people, one JSON document for
// `--json` (operations.md: "--json (machine output)").

import type { Command } from 'commander';
import type { CliIo } from './io.js';

export interface Column<T> {
  readonly header: string;
  readonly value: (row: T) => unknown;
}

/** Help text of every administration command: the global options it reads (operations.md), shown without values. */
export const CONNECTION_HELP = '\nGlobal options: --url URL (env AUDIENCE_URL), --key KEY (env AUDIENCE_KEY), --json\n';

/** Whether the global `--json` (or a subcommand's own) was given. */
export function wantsJson(command: Command): boolean {
  return Boolean(command.optsWithGlobals<{ json?: boolean }>().json);
}

/** Exactly one JSON document on stdout. */
export function printJson(io: CliIo, value: unknown): void {
  io.stdout(JSON.stringify(value ?? null) + '\n');
}

/** Prints `value` as JSON under --json, else the human form. */
export function printResult(io: CliIo, command: Command, value: unknown, human: () => string): void {
  if (wantsJson(command)) printJson(io, value);
  else io.stdout(human());
}

/** Columns padded to their widest cell; the last column is not padded. An empty list says so in a line. */
export function formatTable<T>(rows: readonly T[], columns: readonly Column<T>[], empty = '(none)'): string {
  if (rows.length === 0) return empty + '\n';
  const cells = [columns.map((column) => column.header), ...rows.map((row) => columns.map((column) => formatCell(column.value(row))))];
  const widths = columns.map((_, index) => Math.max(...cells.map((line) => (line[index] ?? '').length)));
  return cells
    .map((line) =>
      line
        .map((cell, index) => (index === line.length - 1 ? cell : cell.padEnd(widths[index] ?? 0)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n') + '\n';
}

/** `label  value` lines with the labels aligned; undefined values are left out. */
export function formatFields(fields: ReadonlyArray<readonly [string, unknown]>): string {
  const shown = fields.filter(([, value]) => value !== undefined);
  const width = Math.max(0, ...shown.map(([label]) => label.length));
  return shown.map(([label, value]) => `${label.padEnd(width)}  ${formatCell(value)}`.trimEnd()).join('\n') + '\n';
}

/** One table cell: '-' for nothing, lists comma-joined, objects as compact JSON, never a line break. */
export function formatCell(value: unknown): string {
  if (value === undefined || value === null || value === '') return '-';
  if (Array.isArray(value)) return value.length === 0 ? '-' : value.map((item) => formatCell(item)).join(',');
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value).replace(/[\r\n]+/g, ' ');
}
