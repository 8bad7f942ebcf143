import type { Generated, Selectable } from 'kysely';

// Tables of embedding: embed sessions, embed tenants and their users, groups, attribute values and shares.

/** A signed embedding session (reference 4.15-4.17, migration 0018); the session id is stored only as its SHA-256. */
export interface EmbedSessionTable {
  id: Generated<number>;
  tenant_id: number;
  deployment_id: number;
  session_hash: string;
  created_by_user_id: number | null;
  /** JSON: the claims the token carries. */
  claims: string;
  created_at: string;
  /** Exchangeable until then. */
  expires_at: string;
  exchanged_at: string | null;
  /** The token's `jti`, once exchanged. */
  jti: string | null;
  token_expires_at: string | null;
  revoked_at: string | null;
}

/** An embed tenant of an account (reference 4.0); `name` is canonical: lowercase, the 4.0 pattern. */
export interface EmbedTenantTable {
  id: Generated<number>;
  tenant_id: number;
  name: string;
  display_name: string | null;
  created_at: string;
}

/** A user of an embed tenant: never an account user, never signs in to the API. */
export interface EmbedUserTable {
  id: Generated<number>;
  tenant_id: number;
  embed_tenant_id: number;
  external_id: string | null;
  username: string;
  email: string;
  display_name: string | null;
  picture: string | null;
  created_at: string;
  updated_at: string;
  last_login: string | null;
}

/** `tenant-group`: made by an admin (4.7); `tenant`: the implicit `system:tenant:{name}`; `all`: all embed users. */
export type EmbedGroupKind = 'tenant-group' | 'tenant' | 'all';

export interface EmbedGroupTable {
  id: Generated<number>;
  tenant_id: number;
  /** Null only for the account's all-embed-users group. */
  embed_tenant_id: number | null;
  kind: EmbedGroupKind;
  name: string;
  description: string | null;
  created_at: string;
  updated_at: string;
}

export interface EmbedGroupMemberTable {
  id: Generated<number>;
  tenant_id: number;
  embed_group_id: number;
  embed_user_id: number;
  created_at: string;
}

export interface EmbedUserGroupTable {
  tenant_id: number;
  embed_user_id: number;
  group_id: number;
  created_at: string;
}

export interface EmbedUserAttributeValueTable {
  tenant_id: number;
  embed_user_id: number;
  attribute_id: number;
  /** JSON. */
  value: string;
  updated_at: string;
}

/** A read-only share of one workbook or one folder (exactly one is set) with a system embed group. */
export interface EmbedShareTable {
  id: Generated<number>;
  tenant_id: number;
  deployment_id: number;
  embed_group_id: number;
  workbook_id: number | null;
  folder_id: number | null;
  created_at: string;
}

export type EmbedSessionRow = Selectable<EmbedSessionTable>;
export type EmbedTenantRow = Selectable<EmbedTenantTable>;
export type EmbedUserRow = Selectable<EmbedUserTable>;
export type EmbedGroupRow = Selectable<EmbedGroupTable>;

/** An attribute of an embed tenant's own catalog, written by creator-mode sessions (reference 4.15, migration 0038). */
export interface EmbedAttributeDefinitionTable {
  id: Generated<number>;
  tenant_id: number;
  embed_tenant_id: number;
  name: string;
  type: 'string' | 'number' | 'boolean' | 'string_array' | 'number_array';
  display_name: string | null;
  /** JSON or null. */
  default_value: string | null;
  description: string | null;
  created_at: string;
  updated_at: string;
}

/** An embed user's value of an attribute of their tenant's catalog. */
export interface EmbedAttributeValueTable {
  tenant_id: number;
  embed_user_id: number;
  definition_id: number;
  /** JSON. */
  value: string;
  updated_at: string;
}

export type EmbedAttributeDefinitionRow = Selectable<EmbedAttributeDefinitionTable>;
