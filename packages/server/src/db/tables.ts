import type { Generated, Insertable, Kysely, Selectable, Transaction, Updateable } from 'kysely';

/*
 * Table types. Column names are snake_case; the API speaks camelCase and each store converts
 * in one place. Timestamps are ISO 8601 UTC strings in both dialects so they sort and compare
 * the same way everywhere. JSON values are stored as text and parsed by the store that owns them.
 */

export interface TenantTable {
  id: Generated<number>;
  slug: string;
  name: string;
  created_at: string;
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

export interface DeploymentTable {
  id: Generated<number>;
  tenant_id: number;
  name: string;
  /** JSON object, merged by PUT. */
  settings: string;
  created_by: number | null;
  created_at: string;
  updated_at: string;
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

export interface Database {
  tenants: TenantTable;
  tenant_hosts: TenantHostTable;
  users: UserTable;
  groups: GroupTable;
  group_members: GroupMemberTable;
  deployments: DeploymentTable;
  api_keys: ApiKeyTable;
  policies: PolicyTable;
}

export type Db = Kysely<Database>;
/** What a store function runs on: the database, or a transaction opened by the service. */
export type Executor = Kysely<Database> | Transaction<Database>;

export type TenantRow = Selectable<TenantTable>;
export type UserRow = Selectable<UserTable>;
export type GroupRow = Selectable<GroupTable>;
export type DeploymentRow = Selectable<DeploymentTable>;
export type ApiKeyRow = Selectable<ApiKeyTable>;
export type PolicyRow = Selectable<PolicyTable>;
export type NewUser = Insertable<UserTable>;
export type UserUpdate = Updateable<UserTable>;
