import { describe, expect, it } from 'vitest';
import { parseTimestamp } from './timestamps.js';

describe('timestamps in queries (D3: ISO 8601 with an offset)', () => {
  it('reads extended format with Z or a numeric offset', () => {
    expect(parseTimestamp('2026-11-20T12:00:00Z')).toBe(Date.UTC(2026, 10, 20, 12));
    expect(parseTimestamp('2026-11-20T12:00:00.123+02:00')).toBe(Date.UTC(2026, 10, 20, 10, 0, 0, 123));
    expect(parseTimestamp('2026-11-20T12:00:00-05:30')).toBe(Date.UTC(2026, 10, 20, 17, 30));
    expect(parseTimestamp('2026-11-20T12:00:00+0200')).toBe(Date.UTC(2026, 10, 20, 10));
    expect(parseTimestamp('2026-11-20T12:00:00+02')).toBe(Date.UTC(2026, 10, 20, 10));
    expect(parseTimestamp('2026-11-20T12:00:00-00:00')).toBe(Date.UTC(2026, 10, 20, 12));
  });

  it('seconds are optional (reduced precision)', () => {
    expect(parseTimestamp('2026-11-20T12:00Z')).toBe(Date.UTC(2026, 10, 20, 12));
    expect(parseTimestamp('2026-11-20T12:34+01:00')).toBe(Date.UTC(2026, 10, 20, 11, 34));
  });

  it('fractions use . or , with any digits, truncated to milliseconds', () => {
    expect(parseTimestamp('2026-11-20T12:00:00.5Z')).toBe(Date.UTC(2026, 10, 20, 12, 0, 0, 500));
    expect(parseTimestamp('2026-11-20T12:00:00,25Z')).toBe(Date.UTC(2026, 10, 20, 12, 0, 0, 250));
    expect(parseTimestamp('2026-11-20T12:00:00.123999999Z')).toBe(Date.UTC(2026, 10, 20, 12, 0, 0, 123));
  });

  it('reads basic format', () => {
    expect(parseTimestamp('20261120T120000Z')).toBe(Date.UTC(2026, 10, 20, 12));
    expect(parseTimestamp('20261120T1200+0100')).toBe(Date.UTC(2026, 10, 20, 11));
    expect(parseTimestamp('20261120T120000.5-01')).toBe(Date.UTC(2026, 10, 20, 13, 0, 0, 500));
  });

  it('handles leap years and years below 100', () => {
    expect(parseTimestamp('2024-02-29T00:00:00Z')).toBe(Date.UTC(2024, 1, 29));
    expect(parseTimestamp('2000-02-29T00:00:00Z')).toBe(Date.UTC(2000, 1, 29));
    expect(parseTimestamp('0050-06-01T00:00:00Z')).toBe(new Date('0050-06-01T00:00:00Z').getTime());
    expect(parseTimestamp('0000-01-01T00:00:00Z')).toBe(new Date('0000-01-01T00:00:00Z').getTime());
  });

  it('agrees with Date.parse on the forms both accept', () => {
    for (const text of ['1970-01-01T00:00:00Z', '1999-12-31T23:59:59.999+14:00', '2038-01-19T03:14:07-12:00', '2026-03-01T00:00:00.001Z']) {
      expect(parseTimestamp(text)).toBe(Date.parse(text));
    }
  });

  it('rejects a missing offset, other date forms and impossible values', () => {
    const invalid = [
      '2026-11-20T12:00:00', // no offset
      '2026-11-20', // date only
      '2026-11-20 12:00:00Z', // space
      '2026-11-20t12:00:00z', // lowercase
      '2026-11-20T12Z', // hour only
      '2026-W47-5T12:00:00Z', // week date
      '2026-324T12:00:00Z', // ordinal date
      '2026-13-01T00:00:00Z',
      '2026-00-01T00:00:00Z',
      '2026-02-29T00:00:00Z', // not a leap year
      '1900-02-29T00:00:00Z',
      '2026-04-31T00:00:00Z',
      '2026-11-20T24:00:00Z',
      '2026-11-20T12:60:00Z',
      '2026-11-20T12:00:60Z',
      '2026-11-20T12:00:00+24:00',
      '2026-11-20T12:00:00+02:60',
      '2026-11-20T12:00:00.Z',
      '2026-11-20T12:00:00+2',
      '20261120T12:00:00Z', // mixed basic and extended
      '20261120T120000+02:00',
      ' 2026-11-20T12:00:00Z',
      '2026-11-20T12:00:00Z ',
      '+012026-11-20T12:00:00Z',
      'now',
      '',
      '1700000000000',
    ];
    for (const text of invalid) expect(parseTimestamp(text), text).toBeUndefined();
  });
});
