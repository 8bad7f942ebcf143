import type { Generated, Insertable, Selectable, Updateable } from 'kysely';

// Tables of the account: tenants, users, groups, API keys, policies, SCIM, user attributes, settings, audit events, identity provider.

export interface TenantTable {
  id: Generated<number>;
  slug: string;
  name: string;
  created_at: string;
  /** Bumped by triggers on every change to who may do what in the tenant (migration 0005; cache/tenant-cache.ts). */
  auth_version: Generated<number>;
  /** JSON array of the region names the tenant may use; null: every configured region. */
  regions: string | null;
  /** JSON object of the embed settings an admin set; null: every default (areas/account/embed-settings.ts). */
  embed_settings: string | null;
  /** JSON object of the tenant settings an admin set; null: every default (areas/account/tenant-settings.ts). */
  account_settings: string | null;
}

export interface TenantHostTable {
  host: string;
  tenant_id: number;
  created_at: string;
}

export type Role = 'ADMIN' | 'DEVELOPER' | 'EXPLORER' | 'VIEWER';

export interface UserTable {
  id: Generated<number>;
  tenant_id: number;
  email: string;
  first_name: string | null;
  role: Role;
  /** Null while active; deactivation keeps the row so history and ownership stay intact. */
  deactivated_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface GroupTable {
  id: Generated<number>;
  tenant_id: number;
  name: string;
  description: string | null;
  created_at: string;
  updated_at: string;
}

export interface GroupMemberTable {
  tenant_id: number;
  group_id: number;
  user_id: number;
  created_at: string;
}

export interface ApiKeyTable {
  id: Generated<number>;
  tenant_id: number;
  user_id: number;
  name: string;
  key_hash: string;
  key_prefix: string;
  /** JSON array of deployment ids, or null for every deployment. */
  deployment_ids: string | null;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
  created_at: string;
  /** Where the key came from: the API, ADMIN_API_KEY, a generated bootstrap key, or the operator command. */
  source: KeySource;
}

export type KeySource = 'api' | 'env' | 'bootstrap' | 'operator';

export type Access = 'VIEW' | 'EDIT' | 'MANAGE';

export type PrincipalType = 'USER' | 'GROUP';

export type ResourceType = 'DEPLOYMENT' | 'FOLDER' | 'WORKBOOK' | 'REPORT';

export interface PolicyTable {
  id: Generated<number>;
  tenant_id: number;
  principal_type: PrincipalType;
  principal_id: number;
  resource_type: ResourceType;
  resource_id: number;
  access: Access;
  created_by: number | null;
  created_at: string;
}

/** A custom role (migration 0037): named policies, held by users and groups. */
export interface RoleTable {
  id: Generated<number>;
  tenant_id: number;
  name: string;
  description: string | null;
  /** JSON: the role's policies, `{resourceType, actions, resources}[]`. */
  policies: string;
  created_by: number | null;
  created_at: string;
  updated_at: string;
}

export interface RoleUserTable {
  tenant_id: number;
  role_id: number;
  user_id: number;
  created_at: string;
}

export interface RoleGroupTable {
  tenant_id: number;
  role_id: number;
  group_id: number;
  created_at: string;
}

/** SCIM state of a user the identity provider manages; see migrations/0003_provisioning.ts. */
export interface ScimUserTable {
  user_id: number;
  tenant_id: number;
  /** JSON: the SCIM attributes the users table has no column for. */
  document: string;
  created_at: string;
}

export interface ScimGroupTable {
  group_id: number;
  tenant_id: number;
  /** JSON: the SCIM attributes the groups table has no column for (externalId). */
  document: string;
  created_at: string;
}

export type UserAttributeType = 'string' | 'number' | 'boolean' | 'string-list';

export interface UserAttributeTable {
  id: Generated<number>;
  tenant_id: number;
  name: string;
  type: UserAttributeType;
  /** JSON value of `type`, or null. */
  default_value: string | null;
  created_at: string;
  updated_at: string;
}

export interface UserAttributeValueTable {
  tenant_id: number;
  user_id: number;
  attribute_id: number;
  /** JSON value of the attribute's type. */
  value: string;
  updated_at: string;
}

export interface UserSettingsTable {
  user_id: number;
  tenant_id: number;
  default_deployment_id: number | null;
  updated_at: string;
}

/** Append-only (migration 0019): rows are inserted, never changed. */
export interface AuditEventTable {
  id: Generated<number>;
  tenant_id: number;
  occurred_at: string;
  action: string;
  actor_user_id: number | null;
  actor_email: string | null;
  credential_kind: string | null;
  credential_id: string | null;
  method: string | null;
  route: string | null;
  /** JSON object. */
  target: string;
  status: number | null;
  request_id: string | null;
  /** JSON object. */
  details: string;
}

/** The tenant's identity provider (areas/identity-provider, migration 0029); one per tenant. */
export interface IdentityProviderTable {
  id: Generated<number>;
  tenant_id: number;
  issuer: string;
  client_id: string;
  /** Sealed by secrets/. */
  client_secret: string;
  /** JSON: string[]. */
  allowed_email_domains: string;
  created_at: string;
  updated_at: string;
}

/** A sign-in sent to the identity provider and not back yet (migration 0029). */
export interface IdpSignInTable {
  id: Generated<number>;
  tenant_id: number;
  state_hash: string;
  binding_hash: string;
  interaction_uid: string;
  nonce: string;
  /** Sealed by secrets/. */
  code_verifier: string;
  created_at: string;
  expires_at: string;
}

export type TenantRow = Selectable<TenantTable>;
export type UserRow = Selectable<UserTable>;
export type GroupRow = Selectable<GroupTable>;
export type ApiKeyRow = Selectable<ApiKeyTable>;
export type PolicyRow = Selectable<PolicyTable>;
export type RoleRow = Selectable<RoleTable>;
export type UserAttributeRow = Selectable<UserAttributeTable>;
export type IdentityProviderRow = Selectable<IdentityProviderTable>;
export type IdpSignInRow = Selectable<IdpSignInTable>;
export type NewUser = Insertable<UserTable>;
export type UserUpdate = Updateable<UserTable>;
