// Tenancy: organizations, workspace trees, API keys, authentication and authorisation (D5–D9).
//
// Choices where the spec is silent:
// - An organization's id is its root workspace's id (o!{id} and w!{id} share it); init's keys live in that root.
// - initOrganization always creates a new organization; `audience init` refuses via isInitialised().
// - Keys compare case-insensitively (a UUID is hex): the SHA-256 of the lower-case key is stored, never the key.
//   An empty key counts as no key (2004). Revoking deletes the key's records; a revoked key is simply unknown (2000).
// - A key created without a name has `name: null`. Init's keys are named "initial private key" / "initial public key".
// - The admin API "reaches" the key's own workspace and every one below it (listWorkspaces, listKeys,
//   requireAdminOver); ancestors are 403 2001 there, siblings and other organizations 404 3000 (D9).
// - Workspace and key names are 1..256 characters (code points), like cohort names (D14).
// - Control-plane writes are serialised (one at a time) and written with sync: true.
export { Tenancy } from './tenancy.js';
export type { CreateKeyInput, CreateWorkspaceInput, InitOrganizationInput } from './tenancy.js';
export { requireIncludeChildren, requirePrivate } from './authorize.js';
export { hashKey, isUuid } from './keys.js';
export { checkName, NAME_MAX_LENGTH } from './names.js';
export type {
  AccessLevel,
  CreatedKey,
  InitializedOrganization,
  KeyInfo,
  KeyType,
  Organization,
  Principal,
  Workspace,
} from './types.js';
