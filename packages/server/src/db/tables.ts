import type { Kysely, Transaction } from 'kysely';
import type {
  TenantTable,
  TenantHostTable,
  UserTable,
  GroupTable,
  GroupMemberTable,
  ApiKeyTable,
  PolicyTable,
  RoleTable,
  RoleUserTable,
  RoleGroupTable,
  ScimUserTable,
  ScimGroupTable,
  UserAttributeTable,
  UserAttributeValueTable,
  UserSettingsTable,
  AuditEventTable,
  IdentityProviderTable,
  IdpSignInTable,
} from './tables/account.js';
import type {
  FolderTable,
  WorkbookTable,
  ReportTable,
  DashboardTable,
  DashboardVersionTable,
  DashboardReportSnapshotTable,
  FavoriteTable,
  NotificationTable,
  NotificationRecipientTable,
  NotificationDeliveryTable,
  NotificationDeliveryRecipientTable,
  DashboardExportTable,
  DashboardCommentTable,
  WorkbookPromotionTable,
  WorkbookPromotionLinkTable,
} from './tables/content.js';
import type {
  DeploymentTable,
  DeploymentVersionTable,
  BranchTable,
  BuildTable,
  UploadTable,
  UploadFileTable,
  DevSessionTable,
  EnvVarTable,
  OidcTokenConfigTable,
  EnvironmentTokenTable,
  RuntimeTable,
  RuntimeLogTable,
  DbtSyncSettingsTable,
  DbtSyncRunTable,
  DbtSyncLogTable,
  GitHostAppTable,
  GitHostLinkTable,
  GitHostLinkStateTable,
  DeploymentUpstreamTable,
} from './tables/deployments.js';
import type {
  EmbedSessionTable,
  EmbedTenantTable,
  EmbedUserTable,
  EmbedGroupTable,
  EmbedGroupMemberTable,
  EmbedUserGroupTable,
  EmbedUserAttributeValueTable,
  EmbedShareTable,
  EmbedAttributeDefinitionTable,
  EmbedAttributeValueTable,
} from './tables/embed.js';
import type { ReportDeliveryTable, ReportDeliveryRunTable } from './tables/report-deliveries.js';
import type { AgentTable, AgentThreadTable, AgentMessageTable, AgentTaskTable, AgentTaskRunTable } from './tables/agents.js';
import type {
  JobTable,
  JobLogTable,
  SecretKeyTable,
  SigningKeyTable,
  OAuthIntegrationTable,
  UserOAuthTokenTable,
  OAuthStateTable,
  OAuthModelTable,
} from './tables/platform.js';
import type { AiSettingsTable, AiUsageTable } from './tables/ai.js';

/*
 * Table types. Column names are snake_case; the API speaks camelCase and each store converts
 * in one place. Timestamps are ISO 8601 UTC strings in both dialects so they sort and compare
 * the same way everywhere. JSON values are stored as text and parsed by the store that owns them.
 *
 * The tables are declared by area group in tables/; this file re-exports them all and holds the
 * database type that lists every table, `Db` and `Executor`.
 */

export type * from './tables/account.js';
export type * from './tables/agents.js';
export type * from './tables/report-deliveries.js';
export type * from './tables/content.js';
export type * from './tables/deployments.js';
export type * from './tables/embed.js';
export type * from './tables/platform.js';
export type * from './tables/ai.js';

export interface Database {
  ai_settings: AiSettingsTable;
  ai_usage: AiUsageTable;
  tenants: TenantTable;
  tenant_hosts: TenantHostTable;
  users: UserTable;
  groups: GroupTable;
  group_members: GroupMemberTable;
  deployments: DeploymentTable;
  api_keys: ApiKeyTable;
  policies: PolicyTable;
  roles: RoleTable;
  role_users: RoleUserTable;
  role_groups: RoleGroupTable;
  folders: FolderTable;
  workbooks: WorkbookTable;
  reports: ReportTable;
  favorites: FavoriteTable;
  scim_users: ScimUserTable;
  scim_groups: ScimGroupTable;
  user_attributes: UserAttributeTable;
  user_attribute_values: UserAttributeValueTable;
  jobs: JobTable;
  job_logs: JobLogTable;
  branches: BranchTable;
  dev_sessions: DevSessionTable;
  builds: BuildTable;
  uploads: UploadTable;
  upload_files: UploadFileTable;
  deployment_versions: DeploymentVersionTable;
  env_vars: EnvVarTable;
  secret_keys: SecretKeyTable;
  signing_keys: SigningKeyTable;
  environment_tokens: EnvironmentTokenTable;
  embed_sessions: EmbedSessionTable;
  runtimes: RuntimeTable;
  runtime_logs: RuntimeLogTable;
  dbt_sync_settings: DbtSyncSettingsTable;
  dbt_sync_runs: DbtSyncRunTable;
  dbt_sync_logs: DbtSyncLogTable;
  oidc_token_configs: OidcTokenConfigTable;
  user_settings: UserSettingsTable;
  audit_events: AuditEventTable;
  dashboards: DashboardTable;
  dashboard_versions: DashboardVersionTable;
  dashboard_report_snapshots: DashboardReportSnapshotTable;
  embed_tenants: EmbedTenantTable;
  embed_users: EmbedUserTable;
  embed_groups: EmbedGroupTable;
  embed_group_members: EmbedGroupMemberTable;
  embed_user_groups: EmbedUserGroupTable;
  embed_user_attribute_values: EmbedUserAttributeValueTable;
  embed_shares: EmbedShareTable;
  embed_attribute_definitions: EmbedAttributeDefinitionTable;
  embed_attribute_values: EmbedAttributeValueTable;
  oauth_integrations: OAuthIntegrationTable;
  user_oauth_tokens: UserOAuthTokenTable;
  oauth_states: OAuthStateTable;
  oauth_models: OAuthModelTable;
  notifications: NotificationTable;
  notification_recipients: NotificationRecipientTable;
  notification_deliveries: NotificationDeliveryTable;
  notification_delivery_recipients: NotificationDeliveryRecipientTable;
  identity_providers: IdentityProviderTable;
  idp_sign_ins: IdpSignInTable;
  dashboard_exports: DashboardExportTable;
  dashboard_comments: DashboardCommentTable;
  workbook_promotions: WorkbookPromotionTable;
  workbook_promotion_links: WorkbookPromotionLinkTable;
  git_host_apps: GitHostAppTable;
  git_host_links: GitHostLinkTable;
  git_host_link_states: GitHostLinkStateTable;
  deployment_upstreams: DeploymentUpstreamTable;
  agents: AgentTable;
  agent_threads: AgentThreadTable;
  agent_messages: AgentMessageTable;
  agent_tasks: AgentTaskTable;
  agent_task_runs: AgentTaskRunTable;
  report_deliveries: ReportDeliveryTable;
  report_delivery_runs: ReportDeliveryRunTable;
}

export type Db = Kysely<Database>;
/** What a store function runs on: the database, or a transaction opened by the service. */
export type Executor = Kysely<Database> | Transaction<Database>;
