// Timestamps inside queries (D3: ISO 8601 date-times with an offset), parsed to epoch milliseconds.
//
// Accepted (decided here, the spec only says "ISO 8601 with an offset"):
// - calendar date and time, extended `2026-11-20T12:00:00Z` or basic `20261120T120000Z` format;
// - seconds are optional (`2026-11-20T12:00Z`, ISO 8601 reduced precision); a fraction of the second is optional,
//   with `.` or `,` and any number of digits, truncated to milliseconds;
// - the offset is required: `Z`, `±HH`, `±HHMM` or `±HH:MM` (`±HH:MM` only in extended format);
// - years 0000..9999, real calendar days (leap years), hours 00..23, minutes and seconds 00..59, offsets up to ±23:59.
// Rejected: no offset (a local time is ambiguous), lowercase `t`/`z`, a space instead of `T`, week or ordinal
// dates, `24:00`, leap second `:60`, surrounding whitespace, anything that is not a string.

import { expected, type Findings } from './findings.js';
import type { ValueReader } from './values.js';

const EXTENDED = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?(Z|[+-]\d{2}(?::?\d{2})?)$/;
const BASIC = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(?:(\d{2})(?:[.,](\d+))?)?(Z|[+-]\d{2}(?:\d{2})?)$/;
const FOUR_HUNDRED_YEARS_MS = 146_097 * 86_400_000; // the Gregorian calendar repeats every 400 years

/** Epoch milliseconds of an ISO 8601 date-time with an offset, or undefined when the text is not one. */
export function parseTimestamp(text: string): number | undefined {
  const match = EXTENDED.exec(text) ?? BASIC.exec(text);
  if (match === null) return undefined;
  const [, year, month, day, hour, minute, second, fraction, offset] = match;
  const y = Number(year);
  const mo = Number(month);
  const d = Number(day);
  const h = Number(hour);
  const mi = Number(minute);
  const s = second === undefined ? 0 : Number(second);
  const ms = fraction === undefined ? 0 : Number(fraction.slice(0, 3).padEnd(3, '0'));
  if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo) || h > 23 || mi > 59 || s > 59) return undefined;
  const offsetMinutes = parseOffset(offset ?? '');
  if (offsetMinutes === undefined) return undefined;
  // Date.UTC maps years 0..99 to 1900..1999: shift by 400 years and back.
  const local = y < 100 ? Date.UTC(y + 400, mo - 1, d, h, mi, s, ms) - FOUR_HUNDRED_YEARS_MS : Date.UTC(y, mo - 1, d, h, mi, s, ms);
  return local - offsetMinutes * 60_000;
}

/** Reads a timestamp value: a string that `parseTimestamp` accepts. */
export const readTimestamp: ValueReader<number> = (findings: Findings, value: unknown, path: string) => {
  if (typeof value !== 'string') {
    findings.problem(path, expected('timestamp string', value));
    return undefined;
  }
  const time = parseTimestamp(value);
  if (time === undefined) {
    findings.problem(path, `expected an ISO 8601 date-time with an offset (e.g. 2026-11-20T12:00:00Z), got ${JSON.stringify(value)}`);
  }
  return time;
};

function parseOffset(offset: string): number | undefined {
  if (offset === 'Z') return 0;
  const sign = offset.startsWith('-') ? -1 : 1;
  const digits = offset.slice(1).replace(':', '');
  const hours = Number(digits.slice(0, 2));
  const minutes = digits.length > 2 ? Number(digits.slice(2)) : 0;
  if (hours > 23 || minutes > 59) return undefined;
  return sign * (hours * 60 + minutes);
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}
