// Streams an NDJSON file of any size (readline over a read stream) into batches bounded by lines and bytes, sends
// each batch before reading on, and names the 1-based line number of a malformed line or of an item the server refused.

import { open, type FileHandle } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { CliError } from '../../io.js';
import { HttpError } from '../../client.js';

/** Thrown by an item reader for a line that parses as JSON but is not what the load expects. */
export class LineProblem extends Error {}

export interface NdjsonLoadOptions<T> {
  readonly file: string;
  /** Items per request at most (the server takes 10 000, D27; README of server/domain/imports). */
  readonly maxLines: number;
  /** Serialised items per request at most, to stay under the server's body limit (D2, 1 MiB by default). */
  readonly maxBytes: number;
  /** The request item for one parsed line; throws LineProblem for a line of the wrong shape. */
  readonly toItem: (value: unknown, line: number, text: string) => T;
  /** Sends one batch; the server's path `<field>[i]` in an error cause is mapped back to `lines[i]`. */
  readonly send: (items: T[]) => Promise<void>;
  /** Called after each batch and at the end: bytes of the file read so far, of `totalBytes`, data lines so far. */
  readonly onProgress?: (bytesRead: number, totalBytes: number, lines: number) => void;
}

export interface NdjsonLoadSummary {
  /** Data lines read and sent (blank lines are skipped). */
  readonly lines: number;
  readonly requests: number;
}

export async function loadNdjsonInBatches<T>(options: NdjsonLoadOptions<T>): Promise<NdjsonLoadSummary> {
  const { file } = options;
  let handle: FileHandle;
  try {
    handle = await open(file, 'r');
  } catch (error) {
    throw new CliError(`${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const totalBytes = (await handle.stat()).size;
  const stream = handle.createReadStream({ encoding: 'utf8' });
  const reader = createInterface({ input: stream, crlfDelay: Infinity });

  let items: T[] = [];
  let lines: number[] = [];
  let bytes = 0;
  let sentLines = 0;
  let requests = 0;
  let lineNumber = 0;

  const flush = async (): Promise<void> => {
    if (items.length === 0) return;
    const batch = items;
    const batchLines = lines;
    items = [];
    lines = [];
    bytes = 0;
    try {
      await options.send(batch);
    } catch (error) {
      throw locateServerError(error, file, batchLines, sentLines);
    }
    requests += 1;
    sentLines += batch.length;
    options.onProgress?.(stream.bytesRead, totalBytes, sentLines);
  };

  try {
    for await (const text of reader) {
      lineNumber += 1;
      if (text.trim() === '') continue;
      const item = readLine(options, text, lineNumber, file, sentLines);
      const size = Buffer.byteLength(JSON.stringify(item)) + 1;
      if (items.length > 0 && (items.length >= options.maxLines || bytes + size > options.maxBytes)) await flush();
      items.push(item);
      lines.push(lineNumber);
      bytes += size;
    }
    await flush();
  } catch (error) {
    if (error instanceof CliError) throw error;
    throw new CliError(`${file}: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    reader.close();
    stream.destroy();
    await handle.close().catch(() => undefined);
  }
  options.onProgress?.(totalBytes, totalBytes, sentLines);
  return { lines: sentLines, requests };
}

function readLine<T>(options: NdjsonLoadOptions<T>, text: string, line: number, file: string, sentLines: number): T {
  const fail = (problem: string): never => {
    const loaded = sentLines === 0 ? 'nothing was loaded' : `${sentLines} earlier lines were loaded; re-running after the fix is safe`;
    throw new CliError(`${file} line ${line}: ${problem} (${loaded})`);
  };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return fail('not valid JSON');
  }
  try {
    return options.toItem(value, line, text);
  } catch (error) {
    if (error instanceof LineProblem) return fail(error.message);
    throw error;
  }
}

const ITEM_PATH = /^[a-z_]+\[(\d+)\]/;

/** An HttpError whose cause starts with `add[17]` / `rows[3]` gets the file line of that item appended. */
function locateServerError(error: unknown, file: string, batchLines: readonly number[], sentLines: number): unknown {
  if (!(error instanceof HttpError)) return error;
  const index = error.detail === undefined ? undefined : ITEM_PATH.exec(error.detail)?.[1];
  const line = index === undefined ? undefined : batchLines[Number(index)];
  const where = line === undefined ? `${file} lines ${batchLines[0]}-${batchLines[batchLines.length - 1]}` : `${file} line ${line}`;
  const loaded = sentLines === 0 ? 'nothing was loaded' : `${sentLines} earlier lines were loaded`;
  return error.withDetail(error.detail === undefined ? `${where}; ${loaded}` : `${error.detail} (${where}; ${loaded})`);
}
