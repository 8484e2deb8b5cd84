// The identity area (D9, D22, D28, D29): users, aliases, identify, the user of a tracked event, stateless resolution.
// Public surface only; tests may import internals.

export { Identity } from './identity.js';
export type { AliasRef, AliasView, IdentityOptions, StatelessIdent, TrackIdent, TrackResolution } from './identity.js';
export { validateAlias, validateAliasBody, validateAliases, validateIdentifyBody } from './validate.js';
export type { AliasBody, AliasInput, IdentifyBody } from './validate.js';
export { ALIAS_NAMESPACE, aliasUserId, isUuid, uuidV5 } from './uuid.js';
export { aliasKey, userAliasKey, userKey } from './keys.js';
export type { AliasPointer, UserAliasEntry, UserRecord } from './keys.js';
