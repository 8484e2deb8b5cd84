// Reading the arguments of the administration commands: comma lists, numbers, and JSON files (or - for stdin).
// Bad usage is exit 2; an unreadable or unparsable file is exit 1 (operations.md).

import { CliError, type CliIo } from '../io.js';

/** `a,b, c` → ['a', 'b', 'c']; an empty string is the empty list (it clears tags or categories). */
export function parseList(text: string): string[] {
  return text
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

/** A finite number >= 0 (a segment's cpm, D26). */
export function parseNonNegative(text: string, flag: string): number {
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value < 0) throw new CliError(`${flag} must be a number >= 0, not "${text}"`, 2);
  return value;
}

/** Reads FILE (or stdin for `-`) and parses it as JSON; `what` names it in the one-line error. */
export async function readJsonArgument(io: CliIo, file: string, what: string): Promise<unknown> {
  let text: string;
  try {
    text = file === '-' ? await io.readStdin() : await io.readFile(file);
  } catch (error) {
    throw new CliError(`${what} ${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new CliError(`${what} ${file}: not valid JSON (${error instanceof Error ? error.message : String(error)})`);
  }
}

/** Path segment of a URL, encoded. */
export function segment(value: string): string {
  return encodeURIComponent(value);
}
