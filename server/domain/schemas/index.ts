// The schemas area (D30): the pure check-and-grow of an event's properties against its name's schema, and the
// per-organization registry that caches schemas and persists their growth.

export type { EventSchema, FieldType, SchemaCheck, TypeName } from './check.js';
export { checkAgainstSchema, countPaths, typeNameOf } from './check.js';
export type { NamedProperties, SchemaLimits } from './registry.js';
export { DEFAULT_MAX_EVENT_NAMES, DEFAULT_MAX_SCHEMA_PATHS, DEFAULT_SCHEMA_CACHE_BYTES, SchemaRegistry, schemaKey } from './registry.js';
