// `during` for the reference evaluator (spec "during"; E4, E7, E9, E11, E14): which items of a chronologically
// ordered population fall within the period. Callers apply their `where` / qualification afterwards.

import { parseInstant, singleEntry } from './comparisons.js';

const UNIT_MS: Record<string, number> = {
  seconds: 1000,
  minutes: 60_000,
  hours: 3_600_000,
  days: 86_400_000,
  weeks: 7 * 86_400_000,
  months: 30 * 86_400_000,
};

/** How an item of a population relates to time and to the current runs. */
export interface ItemPlacement {
  readonly time: number;
  readonly inSession: boolean;
  readonly inView: boolean;
}

/**
 * The items of `population` (oldest first) within `during` (undefined = all). `first N` / `last N` pick the first /
 * last N of the population whatever the caller's filter (E4), so filter after selecting.
 */
export function selectDuring<T>(population: readonly T[], during: unknown, now: number, place: (item: T) => ItemPlacement): T[] {
  if (during === undefined) return [...population];
  if (during === 'this_session') return population.filter((item) => place(item).inSession);
  if (during === 'current_view') return population.filter((item) => place(item).inView);
  const [kind, operand] = singleEntry(during);
  switch (kind) {
    case 'the_last': {
      const { value, unit } = operand as { value: number; unit: string };
      const length = value * (UNIT_MS[unit] ?? Number.NaN);
      return population.filter((item) => place(item).time > now - length && place(item).time <= now);
    }
    case 'in_interval': {
      const { start, end } = operand as { start: string; end: string };
      const from = instant(start);
      const to = instant(end);
      return population.filter((item) => place(item).time >= from && place(item).time <= to);
    }
    case 'before':
      return population.filter((item) => place(item).time < instant(operand));
    case 'after':
      return population.filter((item) => place(item).time > instant(operand));
    case 'first':
      return population.slice(0, operand as number);
    case 'last':
      return population.slice(Math.max(0, population.length - (operand as number)));
    default:
      throw new Error(`reference: unknown during ${kind}`);
  }
}

function instant(text: unknown): number {
  const t = parseInstant(text);
  if (t === undefined) throw new Error(`reference: bad timestamp in during ${JSON.stringify(text)}`);
  return t;
}
