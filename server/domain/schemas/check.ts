// Event schemas (D30): the type of each property path, inferred from the first event of a name and grown by later
// ones. A pure check: the next schema (sharing unchanged parts), or the first mismatch with its path and types.

import { ownValue, setOwn } from '../../own-keys.js';

/** The type of one property: scalars, an object (its own properties) or a list of one type (`items` unknown while
 * only empty lists were seen, refined by the first element). */
export type FieldType =
  | { readonly type: 'string' }
  | { readonly type: 'number' }
  | { readonly type: 'boolean' }
  | { readonly type: 'object'; readonly properties: Readonly<Record<string, FieldType>> }
  | { readonly type: 'list'; readonly items?: FieldType };

export type TypeName = FieldType['type'];

/** The schema of an event name: the types of its top-level properties (`$`-prefixed structures included). */
export interface EventSchema {
  readonly properties: Readonly<Record<string, FieldType>>;
}

export type SchemaCheck =
  | { readonly ok: true; readonly schema: EventSchema; readonly changed: boolean }
  | { readonly ok: false; readonly path: string; readonly expected: TypeName; readonly actual: TypeName };

interface Mismatch {
  readonly path: string;
  readonly expected: TypeName;
  readonly actual: TypeName;
}

const isMismatch = (value: FieldType | Mismatch | undefined): value is Mismatch =>
  value !== undefined && 'path' in value;

/**
 * Checks `properties` against `schema` (undefined: the name's first event, which defines it). `null` conforms to any
 * type and adds nothing; unknown properties grow the schema; a value of another type is a mismatch at the first
 * such path, e.g. `properties.cart.items[2].price` (D30). The input schema is never modified.
 */
export function checkAgainstSchema(
  schema: EventSchema | undefined,
  properties: Readonly<Record<string, unknown>>,
): SchemaCheck {
  const existing: FieldType | undefined =
    schema === undefined ? undefined : { type: 'object', properties: schema.properties };
  // Checked without building paths (an accepted event allocates none); a mismatch is found again with its path.
  let next = checkValue(existing, properties, undefined);
  if (isMismatch(next)) next = checkValue(existing, properties, 'properties');
  if (isMismatch(next)) return { ok: false, ...next };
  const nextProperties = next !== undefined && next.type === 'object' ? next.properties : {};
  const changed = schema === undefined || nextProperties !== schema.properties;
  return { ok: true, schema: changed ? { properties: nextProperties } : (schema as EventSchema), changed };
}

/** The type name of a JSON value; null has none. */
export function typeNameOf(value: unknown): TypeName | undefined {
  if (value === null || value === undefined) return undefined;
  if (Array.isArray(value)) return 'list';
  switch (typeof value) {
    case 'string':
      return 'string';
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'object':
      return 'object';
    default:
      return undefined;
  }
}

/**
 * The (possibly grown) type of `value` given what is known so far; the same object when nothing changed. `path`
 * names `value` in a mismatch; undefined: not built (a mismatch then has an empty path).
 */
function checkValue(existing: FieldType | undefined, value: unknown, path: string | undefined): FieldType | Mismatch | undefined {
  const actual = typeNameOf(value);
  if (actual === undefined) return existing;
  if (existing !== undefined && existing.type !== actual) return { path: path ?? '', expected: existing.type, actual };
  switch (actual) {
    case 'string':
    case 'number':
    case 'boolean':
      return existing ?? { type: actual };
    case 'list':
      return checkList(existing as Extract<FieldType, { type: 'list' }> | undefined, value as unknown[], path);
    case 'object':
      return checkObject(
        existing as Extract<FieldType, { type: 'object' }> | undefined,
        value as Record<string, unknown>,
        path,
      );
  }
}

function checkList(
  existing: Extract<FieldType, { type: 'list' }> | undefined,
  list: readonly unknown[],
  path: string | undefined,
): FieldType | Mismatch {
  let items = existing?.items;
  for (let index = 0; index < list.length; index++) {
    const next = checkValue(items, list[index], path === undefined ? undefined : `${path}[${index}]`);
    if (isMismatch(next)) return next;
    items = next;
  }
  if (existing !== undefined && items === existing.items) return existing;
  return items === undefined ? { type: 'list' } : { type: 'list', items };
}

function checkObject(
  existing: Extract<FieldType, { type: 'object' }> | undefined,
  object: Readonly<Record<string, unknown>>,
  path: string | undefined,
): FieldType | Mismatch {
  const known = existing?.properties ?? {};
  let grown: Record<string, FieldType> | undefined;
  // for-in over own keys: Object.entries would allocate a pair per property of every event.
  for (const name in object) {
    if (!Object.hasOwn(object, name)) continue;
    const value = object[name];
    // An own field only: `constructor` or `toString` are property names here, not inherited members.
    const before = ownValue(grown ?? known, name);
    const next = checkValue(before, value, path === undefined ? undefined : `${path}.${name}`);
    if (isMismatch(next)) return next;
    if (next === before || next === undefined) continue;
    grown ??= { ...known };
    // A property named `__proto__` must become an own field, not the prototype.
    setOwn(grown, name, next);
  }
  if (existing !== undefined && grown === undefined) return existing;
  return { type: 'object', properties: grown ?? known };
}

/**
 * The property paths of a schema's properties (D40): every named property at any depth is one path (`a`, `a.b`);
 * a list adds the paths of its item type (`l[].x`), not one of its own. Counting stops once past `stopAbove`.
 */
export function countPaths(properties: Readonly<Record<string, FieldType>>, stopAbove = Infinity): number {
  let count = 0;
  const pending: FieldType[] = [];
  const visit = (props: Readonly<Record<string, FieldType>>): void => {
    for (const name in props) {
      if (!Object.hasOwn(props, name)) continue;
      count += 1;
      pending.push(props[name] as FieldType);
    }
  };
  visit(properties);
  while (pending.length > 0 && count <= stopAbove) {
    let field = pending.pop() as FieldType;
    while (field.type === 'list' && field.items !== undefined) field = field.items;
    if (field.type === 'object') visit(field.properties);
  }
  return count;
}
