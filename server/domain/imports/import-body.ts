// Validation of an import's create body (D25): name, code, relation, kind, identifiers, and a schema for connections.

import { badBody } from '../../errors.js';
import { MAX_CODE, MAX_NAME, optionalDescription, requireObject, requireText, stringList } from './fields.js';
import type { ImportKind, PropertyType, Relation } from './types.js';
import { setOwn } from '../../own-keys.js';

export interface NewImport {
  readonly name: string;
  readonly code: string;
  readonly relation: Relation;
  readonly kind: ImportKind;
  readonly identifiers?: readonly string[];
  readonly schema?: Readonly<Record<string, PropertyType>>;
}

export interface ValidImport {
  readonly name: string;
  /** D45: null when not given. */
  readonly description: string | null;
  readonly code: string;
  readonly relation: Relation;
  readonly kind: ImportKind;
  readonly identifiers: string[];
  readonly schema?: Record<string, PropertyType>;
}

const RELATIONS: readonly string[] = ['2nd', '3rd'];
const KINDS: readonly string[] = ['segments', 'connections'];
const PROPERTY_TYPES: readonly string[] = ['string', 'number', 'boolean', 'date', 'list'];
/** Schema names are read by connections filters as paths without a prefix (E14): no dots, so no nesting. */
const PROPERTY_NAME = /^[A-Za-z0-9_]{1,128}$/;
const MAX_IDENTIFIERS = 64;
const MAX_SCHEMA_PROPERTIES = 256;

export function validateNewImport(input: unknown): ValidImport {
  const body = requireObject(input, 'body');
  const name = requireText(body.name, 'name', MAX_NAME);
  const code = requireText(body.code, 'code', MAX_CODE);
  if (typeof body.relation !== 'string' || !RELATIONS.includes(body.relation)) {
    throw badBody(`relation: expected one of ${RELATIONS.join(', ')}`);
  }
  if (typeof body.kind !== 'string' || !KINDS.includes(body.kind)) {
    throw badBody(`kind: expected one of ${KINDS.join(', ')}`);
  }
  const relation = body.relation as Relation;
  const kind = body.kind as ImportKind;
  const identifiers = body.identifiers === undefined ? [] : stringList(body.identifiers, 'identifiers', MAX_IDENTIFIERS, MAX_NAME);
  const description = body.description === undefined ? null : optionalDescription(body.description, 'description');
  if (kind === 'segments') {
    if (body.schema !== undefined) throw badBody('schema: only a connections import has a schema');
    return { name, description, code, relation, kind, identifiers };
  }
  if (body.schema === undefined) throw badBody('schema: a connections import needs a schema');
  return { name, description, code, relation, kind, identifiers, schema: validateSchema(body.schema) };
}

function validateSchema(value: unknown): Record<string, PropertyType> {
  const schema = requireObject(value, 'schema');
  const names = Object.keys(schema);
  if (names.length > MAX_SCHEMA_PROPERTIES) throw badBody(`schema: more than ${MAX_SCHEMA_PROPERTIES} properties`);
  const valid: Record<string, PropertyType> = {};
  for (const name of names) {
    if (!PROPERTY_NAME.test(name)) throw badBody(`schema.${name}: a property name is 1-128 of [A-Za-z0-9_]`);
    const type = schema[name];
    if (typeof type !== 'string' || !PROPERTY_TYPES.includes(type)) {
      throw badBody(`schema.${name}: expected one of ${PROPERTY_TYPES.join(', ')}`);
    }
    setOwn(valid, name, type as PropertyType);
  }
  return valid;
}
