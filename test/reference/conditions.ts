// `where` objects and their conditions for the reference evaluator, interpreted from the raw JSON (spec "where";
// D34; E15–E18). Every absence condition is computed as the negation of its positive twin, as E15 implies.

import { compareNumber, parseInstant, singleEntry } from './comparisons.js';

/** Reads a dot-separated path through nested plain objects (E15); anything else on the way is "missing". */
export function readPath(root: unknown, path: string): unknown {
  let current: unknown = root;
  for (const segment of path.split('.')) {
    if (typeof current !== 'object' || current === null || Array.isArray(current)) return undefined;
    if (!Object.prototype.hasOwnProperty.call(current, segment)) return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return current;
}

/**
 * Whether a `where` (predicate or one-level compound, E18) holds on `root`. For a top-level where, `root` is
 * `{properties: event.properties}` so that `properties.a.b` reads literally; inside list summaries and filters it
 * is the item or the row's properties.
 */
export function holdsWhere(where: unknown, root: unknown): boolean {
  const w = where as Record<string, unknown>;
  if (Array.isArray(w['and'])) return (w['and'] as unknown[]).every((item) => holdsWhere(item, root));
  if (Array.isArray(w['or'])) return (w['or'] as unknown[]).some((item) => holdsWhere(item, root));
  return holdsCondition(w['condition'], readPath(root, w['property'] as string));
}

const isFiniteNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const asList = (v: unknown): unknown[] => (Array.isArray(v) ? v : [v]);

/** Whether a condition holds on a value (undefined = missing). */
export function holdsCondition(condition: unknown, value: unknown): boolean {
  if (typeof condition === 'string') return holdsBareCondition(condition, value);
  const c = condition as Record<string, unknown>;
  if ('function' in c) return holdsListSummary(c, value);
  const [key, operand] = singleEntry(c);
  if (key === 'boolean_equal_to') return typeof value === 'boolean' && value === (operand === true || operand === 'true');
  if (key.startsWith('float_')) return isFiniteNumber(value) ? compareNumber(key.slice(6), operand, value, Number) : isAbsenceKey(key);
  if (key.startsWith('date_')) {
    const instant = parseInstant(value);
    return instant === undefined ? isAbsenceKey(key) : compareNumber(key.slice(5), operand, instant, toInstant);
  }
  if (key.startsWith('list_')) return holdsListCondition(key, operand, value);
  if (key === 'contains') return holdsStringContains(operand, value);
  if (key === 'does_not_contain') return !holdsStringContains(operand, value);
  const isStringOperand = asList(operand).every((v) => typeof v === 'string');
  if ((key === 'equal_to' || key === 'not_equal_to') && isStringOperand) {
    const equal = typeof value === 'string' && asList(operand).includes(value);
    return key === 'equal_to' ? equal : !equal;
  }
  // an integer condition: a finite number compared numerically (E16)
  return isFiniteNumber(value) ? compareNumber(key, operand, value, Number) : isAbsenceKey(key);
}

function isAbsenceKey(key: string): boolean {
  return key === 'not_equal_to' || key === 'float_not_equal_to' || key === 'date_not_equal_to';
}

function toInstant(v: unknown): number {
  const t = parseInstant(v);
  if (t === undefined) throw new Error(`reference: bad timestamp in query ${JSON.stringify(v)}`);
  return t;
}

function holdsBareCondition(condition: string, value: unknown): boolean {
  switch (condition) {
    case 'is_not_empty':
      return typeof value === 'string' && value !== '';
    case 'is_empty':
      return !(typeof value === 'string' && value !== '');
    case 'list_is_not_empty':
      return Array.isArray(value) && value.length > 0;
    case 'list_is_empty':
      return !(Array.isArray(value) && value.length > 0);
    default:
      throw new Error(`reference: unknown bare condition ${condition}`);
  }
}

function holdsStringContains(operand: unknown, value: unknown): boolean {
  return typeof value === 'string' && asList(operand).some((needle) => value.includes(needle as string));
}

function holdsListCondition(key: string, operand: unknown, value: unknown): boolean {
  const negated = key.startsWith('list_does_not_contain');
  const positive = negated ? key.replace('list_does_not_contain', 'list_contains') : key;
  let found: boolean;
  if (!Array.isArray(value)) found = false;
  else if (positive === 'list_contains') found = value.some((item) => typeof item === 'string' && asList(operand).includes(item));
  else if (positive === 'list_contains_integer' || positive === 'list_contains_float')
    found = value.some((item) => isFiniteNumber(item) && item === operand);
  else if (positive === 'list_contains_date') {
    const wanted = toInstant(operand);
    found = value.some((item) => parseInstant(item) === wanted);
  } else throw new Error(`reference: unknown list condition ${key}`);
  return negated ? !found : found;
}

/** List summary (E17): filter the object items by the nested where, then apply the function. */
function holdsListSummary(summary: Record<string, unknown>, value: unknown): boolean {
  if (!Array.isArray(value)) return false;
  const where = summary['where'];
  const items = value.filter(
    (item) => typeof item === 'object' && item !== null && !Array.isArray(item) && (where === undefined || holdsWhere(where, item)),
  );
  const property = summary['property'] as string;
  const condition = summary['condition'];
  const fn = summary['function'] as string;
  if (fn === 'any') return items.some((item) => holdsCondition(condition, readPath(item, property)));
  if (fn === 'all') return items.length > 0 && items.every((item) => holdsCondition(condition, readPath(item, property)));
  if (fn === 'count') return holdsCondition(condition, items.length);
  const numbers = items.map((item) => readPath(item, property)).filter(isFiniteNumber);
  if (numbers.length === 0) return false;
  let aggregate: number;
  switch (fn) {
    case 'sum':
      aggregate = numbers.reduce((a, b) => a + b, 0);
      break;
    case 'product':
      aggregate = numbers.reduce((a, b) => a * b, 1);
      break;
    case 'max':
      aggregate = Math.max(...numbers);
      break;
    case 'min':
      aggregate = Math.min(...numbers);
      break;
    case 'mean':
      aggregate = numbers.reduce((a, b) => a + b, 0) / numbers.length;
      break;
    default:
      throw new Error(`reference: unknown list summary function ${fn}`);
  }
  return holdsCondition(condition, aggregate);
}
