// The ids the server mints for events tracked without one (D29: a repeated `id` for the same user answers the stored
// record, whether the id was the client's or ours). A minted id carries its event's time, so a retry with it is
// found through the user's time index (`et!`) and needs no entry in the event-id index (`ei!`): one key fewer per
// tracked event, ~15 % of what LevelDB spends on an event's keys (bench/store-keys.ts, layout `no-id-index`).
//
// Shape: a UUID of version 7 (RFC 9562: 48 bits of Unix milliseconds first) whose 48-bit time is the event's
// effective time (not the clock's), whose 12 bits after the version are the mark `a7e`, and whose last 62 bits are
// random (the variant bits `10` before them). Only the lowercase form is the shape: ids are matched as written.
// A client may send an id of this shape too; the rule below keeps it findable either way.

/** Version 7 and the mark: the third group of every id this module mints. */
const MARKED_GROUP = '-7a7e-';
const MINTED = /^[0-9a-f]{8}-[0-9a-f]{4}-7a7e-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Times a 48-bit field holds (Unix ms up to the year 10889; D3 accepts years 0000-9999, so earlier ones fall back). */
const TIME_LIMIT = 2 ** 48;
/** The variant nibble `10xx` keeping the low two bits of the source's. */
const VARIANT = ['8', '9', 'a', 'b'];

/**
 * The id of an event tracked without one, at effective time `timeMs`, made from `random` (a fresh UUID: its last 62
 * bits are kept). A time the shape cannot hold (before 1970) or a `random` that is not a UUID gives `random` itself,
 * which is then indexed like a client's id. Built from slices of `random` (it runs once per tracked event).
 */
export function mintEventId(timeMs: number, random: string): string {
  if (!Number.isInteger(timeMs) || timeMs < 0 || timeMs >= TIME_LIMIT || !UUID.test(random)) return random;
  const high = Math.floor(timeMs / 0x10000).toString(16).padStart(8, '0');
  const low = (timeMs % 0x10000).toString(16).padStart(4, '0');
  const variant = VARIANT[parseInt(random.charAt(19), 16) & 0x3] as string;
  return `${high}-${low}${MARKED_GROUP}${variant}${random.slice(20, 23)}-${random.slice(24)}`.toLowerCase();
}

/** The time an id of the minted shape carries (whoever made it), or undefined for any other id. */
export function mintedTime(id: string): number | undefined {
  return MINTED.test(id) ? parseInt(id.slice(0, 8) + id.slice(9, 13), 16) : undefined;
}

/**
 * Whether an event's id needs its `ei!` entry: every id but one of the minted shape carrying the event's own time,
 * which a retry finds through the time index instead (read.ts `findByClientId`). A client's id of that shape and
 * time is found the same way; of that shape and another time, through its `ei!` entry.
 */
export function needsIdIndex(id: string, timeMs: number): boolean {
  return mintedTime(id) !== timeMs;
}
