// Number comparisons and ISO 8601 instants for the reference evaluator, read straight from the raw query JSON
// (spec "Number comparison"; E16). Deliberately naive and independent of engine/.

/** Epoch ms of an ISO 8601 date-time with an offset (extended or basic format), or undefined (E16, D3). */
export function parseInstant(text: unknown): number | undefined {
  if (typeof text !== 'string') return undefined;
  const m =
    /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?(Z|[+-]\d{2}(?::?\d{2})?)$/.exec(text) ??
    /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(?:(\d{2})(?:[.,](\d+))?)?(Z|[+-]\d{2}(?:\d{2})?)$/.exec(text);
  if (m === null) return undefined;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  const hour = Number(m[4]);
  const minute = Number(m[5]);
  const second = m[6] === undefined ? 0 : Number(m[6]);
  const millis = m[7] === undefined ? 0 : Number(m[7].slice(0, 3).padEnd(3, '0'));
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const monthDays = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
  if (month < 1 || month > 12 || day < 1 || day > (monthDays[month - 1] ?? 0)) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  const zone = m[8] ?? 'Z';
  let offsetMinutes = 0;
  if (zone !== 'Z') {
    const digits = zone.slice(1).replace(':', '');
    const oh = Number(digits.slice(0, 2));
    const om = digits.length > 2 ? Number(digits.slice(2)) : 0;
    if (oh > 23 || om > 59) return undefined;
    offsetMinutes = (zone.startsWith('-') ? -1 : 1) * (oh * 60 + om);
  }
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, millis);
  return date.getTime() - offsetMinutes * 60_000;
}

/** The keys of a number comparison, without any `float_` / `date_` prefix. */
export const COMPARISON_KEYS = [
  'equal_to',
  'not_equal_to',
  'between',
  'greater_than',
  'less_than',
  'greater_than_or_equal_to',
  'less_than_or_equal_to',
] as const;

/**
 * Whether `x` satisfies the comparison `{op: operand}`. `toNumber` turns a query operand (a number, or a
 * timestamp string for date comparisons) into a number.
 */
export function compareNumber(op: string, operand: unknown, x: number, toNumber: (v: unknown) => number): boolean {
  const list = (v: unknown): number[] => (Array.isArray(v) ? v.map(toNumber) : [toNumber(v)]);
  switch (op) {
    case 'equal_to':
      return list(operand).some((v) => x === v);
    case 'not_equal_to':
      return list(operand).every((v) => x !== v);
    case 'between': {
      const range = operand as { start: unknown; end: unknown };
      return x >= toNumber(range.start) && x <= toNumber(range.end);
    }
    case 'greater_than':
      return x > toNumber(operand);
    case 'less_than':
      return x < toNumber(operand);
    case 'greater_than_or_equal_to':
      return x >= toNumber(operand);
    case 'less_than_or_equal_to':
      return x <= toNumber(operand);
    default:
      throw new Error(`reference: unknown comparison ${op}`);
  }
}

/** Evaluates a plain number comparison object (frequency, seconds, times, ...) against a value. */
export function holdsComparison(comparison: unknown, x: number): boolean {
  const [op, operand] = singleEntry(comparison);
  return compareNumber(op.replace(/^float_/, ''), operand, x, Number);
}

/** The one `[key, value]` of an exactly-one-key object. */
export function singleEntry(value: unknown): [string, unknown] {
  const entries = Object.entries(value as Record<string, unknown>);
  const first = entries[0];
  if (entries.length !== 1 || first === undefined) throw new Error(`reference: expected one key in ${JSON.stringify(value)}`);
  return first;
}
