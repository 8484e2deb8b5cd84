// What the owners' and the main thread's readers of stored events cost, in one process, each way in turn: (1) the
// backfill bench's histories (bench/backfill.ts `userEvents`, stored as the pipeline stores them) read into engine
// events with every property and with only those the bench's new cohort reads (`Plan.eventPropertyKeys`, as an
// owner's catch-up does: server/domain/events/engine-reader.ts); (2) blocks of 32 such records read with msgpackr and
// with the store's own block reader (server/domain/events/blocks.ts `readBlock`, as a history read does).
// Run: node dist/bench/decode.js [--rounds 4]. Prints seconds per million events for each way and round, and the
// mean bytes of a stored record (as stored, and whole as before server/domain/events/record.ts `RecordValue`).

import { pathToFileURL } from 'node:url';
import { compilePlan, validateQuery } from '../engine/index.js';
import { toRecordValue, toStoredEvent, unpackEngineEvents } from '../server/domain/events/index.js';
import { blockOfEncoded, readBlock, type EventBlock } from '../server/domain/events/blocks.js';
import { concatValues, decodeValue, encodeValue } from '../server/store/values.js';
import { createRng } from '../test/differential/random.js';
import { DEFAULT_BACKFILL_BENCH, userEvents } from './backfill.js';

export interface DecodeFigures {
  /** Seconds per million events, one per round. */
  readonly allProperties: readonly number[];
  readonly planKeys: readonly number[];
  readonly blocksByMsgpackr: readonly number[];
  readonly blocksByReader: readonly number[];
  /** Mean bytes of one stored record: as the store writes it (record.ts `RecordValue`), and whole as before it. */
  readonly recordBytes: { readonly stored: number; readonly whole: number };
}

const USERS = 100;
const EVENTS = 200;
const REPEATS = 50; // 100 users × 200 events × 50 = a million events a way and round

export function runDecodeBench(rounds: number): DecodeFigures {
  const next = createRng(DEFAULT_BACKFILL_BENCH.seed).next;
  const histories: Uint8Array[] = [];
  const blocks: Uint8Array[] = [];
  let wholeBytes = 0;
  for (let u = 0; u < USERS; u++) {
    // A user id as the server's are (a UUID): stored records no longer carry it, whole ones did.
    const user = `b0000000-0000-4000-8000-${String(u).padStart(12, '0')}`;
    const whole = userEvents(next, u, EVENTS).map((event, i) => toStoredEvent(user, event, i + 1));
    for (const record of whole) wholeBytes += encodeValue(record).byteLength;
    const records = whole.map((record) => encodeValue(toRecordValue(record)));
    histories.push(concatValues(records));
    for (let at = 0; at < records.length; at += 32) {
      const part = records.slice(at, at + 32);
      blocks.push(encodeValue(blockOfEncoded(part.map((_, i) => at + i + 1), part)));
    }
  }
  const validated = validateQuery(DEFAULT_BACKFILL_BENCH.query);
  if (!validated.ok) throw new Error('invalid bench query');
  const keys = compilePlan([{ code: 1, query: validated.query }], 1).eventPropertyKeys;
  const perMillion = (events: number, work: () => void): number => {
    const start = performance.now();
    work();
    return Math.round(((performance.now() - start) / 1000 / events) * 1e6 * 1000) / 1000;
  };
  const readAll = (with_: ReadonlySet<string> | undefined) => () => {
    for (let r = 0; r < REPEATS; r++) for (const bytes of histories) unpackEngineEvents({ bytes, count: EVENTS }, with_);
  };
  const readBlocks = (read: (bytes: Uint8Array) => EventBlock) => () => {
    for (let r = 0; r < REPEATS; r++) for (const bytes of blocks) read(bytes);
  };
  const total = USERS * EVENTS * REPEATS;
  const storedBytes = histories.reduce((sum, bytes) => sum + bytes.byteLength, 0);
  const recordBytes = { stored: Math.round(storedBytes / (USERS * EVENTS)), whole: Math.round(wholeBytes / (USERS * EVENTS)) };
  const figures = { allProperties: [] as number[], planKeys: [] as number[], blocksByMsgpackr: [] as number[], blocksByReader: [] as number[], recordBytes };
  for (let round = 0; round < rounds; round++) {
    const first = round % 2 === 0;
    if (first) figures.allProperties.push(perMillion(total, readAll(undefined)));
    figures.planKeys.push(perMillion(total, readAll(keys)));
    if (!first) figures.allProperties.push(perMillion(total, readAll(undefined)));
    if (first) figures.blocksByMsgpackr.push(perMillion(total, readBlocks((bytes) => decodeValue<EventBlock>(bytes))));
    figures.blocksByReader.push(perMillion(total, readBlocks(readBlock)));
    if (!first) figures.blocksByMsgpackr.push(perMillion(total, readBlocks((bytes) => decodeValue<EventBlock>(bytes))));
  }
  return figures;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const at = process.argv.indexOf('--rounds');
  const rounds = at < 0 ? 4 : Number(process.argv[at + 1]);
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error('--rounds takes a positive integer');
  process.stdout.write(`${JSON.stringify(runDecodeBench(rounds), null, 2)}\n`);
}
