// The schemas area (D30): the pure check-and-grow of an event's properties against its name's schema, and the
// per-organization registry that caches schemas and persists their growth.

export type { EventSchema, FieldType, SchemaCheck, TypeName } from './check.js';
export { checkAgainstSchema, typeNameOf } from './check.js';
export type { NamedProperties } from './registry.js';
export { SchemaRegistry, schemaKey } from './registry.js';
