// The records of the control plane's tenancy (organizations, workspaces, API keys) and the authenticated Principal.
// Field names are the wire names of the admin API (operations.md), so records serialise as they are.

export type KeyType = 'public' | 'private';
/** D8: `workspace` (default) reaches the key's own workspace; `descendants` also the workspaces below it. */
export type AccessLevel = 'workspace' | 'descendants';

/** An organization is the root workspace of a tree (D9); its id is the root workspace's id. */
export interface Organization {
  readonly id: string;
  readonly name: string;
  readonly created_at: string;
}

export interface Workspace {
  readonly id: string;
  readonly name: string;
  /** null for the root workspace (the organization itself). */
  readonly parent_id: string | null;
  readonly organization_id: string;
  readonly created_at: string;
}

/** A key as listed: never the key itself (D5). */
export interface KeyInfo {
  readonly id: string;
  readonly type: KeyType;
  readonly name: string | null;
  readonly workspace_id: string;
  readonly access: AccessLevel;
  readonly created_at: string;
}

/** A key as created: the only time the key value is shown. */
export interface CreatedKey {
  readonly id: string;
  readonly key: string;
  readonly type: KeyType;
  readonly name: string | null;
  readonly workspace_id: string;
  readonly access: AccessLevel;
  readonly created_at: string;
}

/** Who is calling: resolved from the API key by Tenancy.authenticate. */
export interface Principal {
  readonly keyId: string;
  readonly type: KeyType;
  readonly access: AccessLevel;
  readonly workspaceId: string;
  readonly organizationId: string;
}

export interface InitializedOrganization {
  readonly organization_id: string;
  readonly workspace_id: string;
  readonly private_key: string;
  readonly public_key: string;
}
