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

export interface DeploymentTable {
  id: Generated<number>;
  tenant_id: number;
  name: string;
  /** JSON object, merged by PUT. */
  settings: string;
  created_by: number | null;
  created_at: string;
  updated_at: string;
  /** The branch production is built from (reference 1.0 `deployBranchName`). */
  deploy_branch_name: Generated<string>;
  /** 0/1: the deploy branch takes no direct writes, only merges (when allowed). */
  deploy_branch_read_only: Generated<number>;
  /** 0/1: merge-to-default is allowed. */
  deploy_branch_merge_allowed: Generated<number>;
  /** The directory of the repository that holds the project ('' for its root). */
  deploy_project_root: Generated<string>;
  deploy_mode: Generated<DeployMode>;
  creation_method: CreationMethod | null;
  /** The setup wizard's step (reference 1.0 CreationStep). */
  creation_step: Generated<CreationStep>;
  cloud_provider: Generated<CloudProvider>;
  is_managed: Generated<number>;
  region: Generated<string>;
  target_platform: Generated<string>;
  template: Generated<Template>;
  release_channel: Generated<ReleaseChannel>;
  /** Null: the channel's newest version. */
  release_channel_version: string | null;
  release_channel_version_hold: Generated<number>;
  custom_domain: string | null;
  /** JSON: templateVariables, defaultLaunchpadViewGroup, launchpadTabs, cspsConfig. */
  options: Generated<string>;
}

export type CreationStep = 'project' | 'upload' | 'schema' | 'git-host' | 'ssh' | 'databases' | 'ready' | 'demo';
export type CloudProvider = 'platform' | 'aws' | 'gcp';
export type Template = 'single' | 'simpleCluster' | 'multiCluster';
export type ReleaseChannel = 'latest' | 'release';

export interface DeploymentVersionTable {
  tenant_id: number;
  version: string;
  release_channel: ReleaseChannel;
  last_used_at: string;
}

export type DeployMode = 'git' | 'cli';
export type CreationMethod = 'upload' | 'platform' | 'git-host' | 'ssh';

export interface BranchTable {
  id: Generated<number>;
  tenant_id: number;
  deployment_id: number;
  name: string;
  parent_name: string | null;
  /** The API key whose personal dev-mode branch this is; null for shared branches. */
  owner_key_id: number | null;
  staging_enabled: Generated<number>;
  created_at: string;
}

export type BuildStatus = 'queued' | 'building' | 'success' | 'failed';
export type BuildMode = 'production' | 'dev_mode';

export interface BuildTable {
  id: Generated<number>;
  tenant_id: number;
  deployment_id: number;
  branch_name: string;
  mode: BuildMode;
  commit_sha: string;
  /** The git tree id of the built files: equal trees, equal models. */
  files_hash: string | null;
  status: BuildStatus;
  error_text: string | null;
  cubes_count: number | null;
  /** JSON: the compiled cubes and views; null until a build succeeds. */
  artifact: string | null;
  job_id: number | null;
  cause: string;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  updated_at: string;
}

export interface UploadTable {
  id: string;
  tenant_id: number;
  deployment_id: number;
  key_id: number;
  branch_name: string;
  root: string;
  created_at: string;
  expires_at: string;
  finished_at: string | null;
  last_hash: string | null;
}

export interface UploadFileTable {
  upload_id: string;
  path: string;
  blob_sha: string;
  content: Buffer;
}

export interface DevSessionTable {
  deployment_id: number;
  key_id: number;
  tenant_id: number;
  branch_name: string;
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

export type ItemType = 'FOLDER' | 'WORKBOOK' | 'REPORT';

export interface FolderTable {
  id: Generated<number>;
  tenant_id: number;
  deployment_id: number;
  /** The containing folder; null at the workspace root. The only record of the tree's shape. */
  parent_id: number | null;
  name: string;
  created_by: number | null;
  created_at: string;
  updated_at: string;
}

export interface WorkbookTable {
  id: Generated<number>;
  tenant_id: number;
  deployment_id: number;
  folder_id: number | null;
  name: string;
  slug: string;
  /** JSON object. */
  meta: string;
  /** JSON object. */
  calculated_fields: string;
  /** JSON DashboardConfig or null. */
  dashboard_draft: string | null;
  dashboard_published: string | null;
  /** JSON Dashboard or null. */
  published_dashboard: string | null;
  created_by: number | null;
  created_at: string;
  updated_at: string;
}

export interface ReportTable {
  id: Generated<number>;
  tenant_id: number;
  deployment_id: number;
  folder_id: number | null;
  name: string;
  public_id: string;
  kind: string | null;
  title: string | null;
  description: string | null;
  sql_query: string | null;
  python_code: string | null;
  /** JSON values (spec may be a string or an object), or null. */
  spec: string | null;
  meta: string | null;
  preferences: string | null;
  period_comparisons: string | null;
  fill_missing_rows: string | null;
  /** JSON: the report's placements in external spreadsheets (reference 3.0), or null for none. */
  placements: string | null;
  last_viewed_at: string | null;
  created_by: number | null;
  created_at: string;
  updated_at: string;
}

/** A workbook's published dashboard: what stays across its versions (migration 0016). */
export interface DashboardTable {
  id: Generated<number>;
  tenant_id: number;
  deployment_id: number;
  workbook_id: number;
  public_id: string;
  /** 0 or 1: signed embedding allowed (reference 3.6). */
  allow_embed: number;
  created_by: number | null;
  created_at: string;
  updated_at: string;
}

export type DashboardVersionStatus = 'draft' | 'published' | 'archived';

/** One publication of a dashboard. */
export interface DashboardVersionTable {
  id: Generated<number>;
  tenant_id: number;
  dashboard_id: number;
  version_number: number;
  status: DashboardVersionStatus;
  title: string | null;
  description: string | null;
  /** JSON DashboardConfig. */
  config: string;
  created_by: number | null;
  created_at: string;
}

/** A report as a dashboard version froze it. */
export interface DashboardReportSnapshotTable {
  id: Generated<number>;
  tenant_id: number;
  version_id: number;
  position: number;
  report_id: number;
  /** JSON: the ReportSnapshot fields other than id, reportId and versionNumber. */
  content: string;
}

export interface FavoriteTable {
  tenant_id: number;
  user_id: number;
  item_type: ItemType;
  item_id: number;
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

export type JobState = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';

/** A background job of the jobs service (src/jobs/); see migrations/0009_jobs.ts. */
export interface JobTable {
  id: Generated<number>;
  tenant_id: number;
  kind: string;
  /** JSON value given at enqueue. */
  payload: string;
  state: JobState;
  /** Attempts started so far, the current one included. */
  attempts: Generated<number>;
  max_attempts: number;
  /** JSON value the job returned, once succeeded. */
  result: string | null;
  error: string | null;
  created_at: string;
  /** When the latest attempt started. */
  started_at: string | null;
  finished_at: string | null;
  /** Written by the running process every few seconds; null unless running. */
  heartbeat_at: string | null;
  /** 0 or 1 (SQLite binds no booleans). */
  cancel_requested: Generated<number>;
  /** The worker that runs (or last ran) the job. */
  owner: string | null;
}

export interface JobLogTable {
  job_id: number;
  /** 1, 2, ... per job, across its attempts. */
  seq: number;
  at: string;
  line: string;
}

/** A deployment's environment variable; `value` is sealed by secrets/ (context `env-var:<deploymentId>:<name>`). */
export interface EnvVarTable {
  id: Generated<number>;
  tenant_id: number;
  deployment_id: number;
  name: string;
  value: string;
  created_at: string;
  updated_at: string;
}

/** A workload-identity token config (reference 5.14-5.18). */
export interface OidcTokenConfigTable {
  id: Generated<number>;
  tenant_id: number;
  audience_type: string;
  audience: string;
  name: string;
  sub_format: string | null;
  custom_claims: string | null;
  target_env_var: string | null;
  is_enabled: number;
  created_at: string;
  updated_at: string;
}

/** secrets/: a key that may have sealed values, and a check value sealed under it. */
export interface SecretKeyTable {
  id: string;
  check_value: string;
  created_at: string;
}

/** signing/: a tenant's key pair; `private_key` is sealed by secrets/ (context `signing-key:<tenantId>:<kid>`). */
export interface SigningKeyTable {
  id: Generated<number>;
  kid: string;
  tenant_id: number;
  algorithm: string;
  /** JSON: the public JWK. */
  public_jwk: string;
  private_key: string;
  created_at: string;
  activated_at: string;
  /** When another key took over signing; null for the key that signs. */
  retired_at: string | null;
  /** After this a retired key verifies nothing and leaves the key set; null while it signs. */
  expires_at: string | null;
  /** The keyring it belongs to (`default`, `embed`): one signing key per tenant and purpose (migration 0018). */
  purpose: Generated<string>;
}

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

/** An environment token (reference 1.18-1.20); `token` is sealed by secrets/ (context `environment-token:<deploymentId>:<jti>`). */
export interface EnvironmentTokenTable {
  id: Generated<number>;
  tenant_id: number;
  deployment_id: number;
  environment_id: string;
  jti: string;
  created_by_user_id: number;
  token: string;
  /** JSON object: the security context signed. */
  security_context: string;
  /** JSON array: the scopes signed. */
  scopes: string;
  created_at: string;
  expires_at: string;
}

export type PodStatus = 'Pending' | 'Running' | 'CrashLoopBackOff' | 'Terminated';
export type RuntimeEnvironmentType = 'production' | 'staging' | 'dev';

/** One environment's runtime: its current pod (migration 0015). */
export interface RuntimeTable {
  id: Generated<number>;
  tenant_id: number;
  deployment_id: number;
  environment_id: string;
  type: RuntimeEnvironmentType;
  branch_name: string;
  pod: string;
  status: PodStatus;
  ready: Generated<number>;
  restart_count: Generated<number>;
  build_id: number | null;
  version: string | null;
  /** The server process that runs it while `lease_expires_at` is ahead. */
  owner: string | null;
  lease_expires_at: string | null;
  /** `http://host:port` of the pod while it runs. */
  address: string | null;
  /** secrets/: what the proxy must present to the pod. */
  secret: string | null;
  last_used_at: string | null;
  last_error: string | null;
  started_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface RuntimeLogTable {
  id: Generated<number>;
  tenant_id: number;
  deployment_id: number;
  environment_type: RuntimeEnvironmentType;
  pod: string;
  container: string;
  at: string;
  message: string;
}

/** A deployment's transformation-project settings (areas/dbt-sync/); see migrations/0021_dbt_sync.ts. */
export interface DbtSyncSettingsTable {
  id: Generated<number>;
  tenant_id: number;
  deployment_id: number;
  /** `deployment`: the deployment's own repository; `url`: another, at `repository_url`. */
  repository: string;
  repository_url: string | null;
  /** The access token for `repository_url`, sealed by secrets/ (dbt-sync/settings.store.ts); never answered. */
  repository_token: string | null;
  ref: string | null;
  manifest_path: string;
  output_path: string;
  /** JSON `{paths, tags, names}`. */
  selector: string;
  created_at: string;
  updated_at: string;
}

export type DbtSyncStatus = 'RUNNING' | 'COMPLETED' | 'FAILED' | 'CANCELLED' | 'UNKNOWN';

/** One sync run (reference 7.0 DbtSyncRun); its job is `job_id` in `jobs`. */
export interface DbtSyncRunTable {
  id: Generated<number>;
  /** The reference's `syncJobId`. */
  public_id: string;
  tenant_id: number;
  deployment_id: number;
  job_id: number | null;
  status: DbtSyncStatus;
  /** The poll's stage (reference 7.3). */
  stage: string;
  percent: Generated<number>;
  message: string | null;
  trigger: string;
  source: string;
  output: string;
  branch_name: string;
  git_ref: string | null;
  user_id: number | null;
  /** JSON: the settings the run was started with. */
  options: string;
  manifest: string | null;
  started_at: string;
  completed_at: string | null;
  duration_ms: number | null;
  error_message: string | null;
  failed_phase: string | null;
  last_stage: string | null;
  phases: string | null;
  stats: string | null;
  trigger_context: string | null;
  commit_sha: string | null;
  generated_files: string | null;
  files: string | null;
  files_expire_at: string | null;
  updated_at: string;
}

export interface DbtSyncLogTable {
  id: Generated<number>;
  run_id: number;
  seq: number;
  at: string;
  level: string;
  stream: string;
  message: string;
  phase: string | null;
  duration_ms: number | null;
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

/** A third-party OAuth app (reference 5.5-5.9); `client_secret` is sealed by secrets/ (context `oauth-integration:<id>:client-secret`). */
export interface OAuthIntegrationTable {
  id: Generated<number>;
  tenant_id: number;
  name: string;
  type: string;
  auth_url: string;
  token_url: string;
  client_id: string;
  client_secret: string;
  redirect_uri: string;
  /** JSON string[] or null. */
  scopes: string | null;
  /** JSON object or null. */
  config: string | null;
  created_at: string;
  updated_at: string;
}

/** A user's token for an integration (reference 5.10-5.13); both tokens sealed (context `user-oauth-token:<integrationId>:<userId>:access|refresh`). */
export interface UserOAuthTokenTable {
  id: Generated<number>;
  tenant_id: number;
  user_id: number;
  integration_id: number;
  status: string;
  access_token: string;
  refresh_token: string | null;
  token_type: string | null;
  scope: string | null;
  access_token_expires_at: string | null;
  refresh_token_expires_at: string | null;
  /** JSON: the last failure, or null. */
  last_error: string | null;
  /** The background refresh that holds this token (a random id), and until when; null: none. */
  refresh_claim: string | null;
  refresh_claimed_until: string | null;
  /** When a refresh that failed for a passing reason is tried again in the background; null: not retried. */
  refresh_retry_at: string | null;
  created_at: string;
  updated_at: string;
}

/** An authorization request in flight: single use, short-lived; `code_verifier` sealed (context `oauth-state:<stateHash>`). */
export interface OAuthStateTable {
  id: Generated<number>;
  tenant_id: number;
  user_id: number;
  integration_id: number;
  state_hash: string;
  code_verifier: string;
  created_at: string;
  expires_at: string;
}

/** The tenant's git-host app (areas/git-host, migration 0031); one per tenant. */
export interface GitHostAppTable {
  id: Generated<number>;
  tenant_id: number;
  api_base_url: string;
  web_base_url: string;
  app_id: string;
  app_slug: string;
  client_id: string;
  /** Sealed by secrets/. */
  client_secret: string;
  /** Sealed by secrets/. */
  private_key: string;
  created_at: string;
  updated_at: string;
}

/** A user's linked git-host account (migration 0031). */
export interface GitHostLinkTable {
  id: Generated<number>;
  tenant_id: number;
  user_id: number;
  login: string;
  /** Sealed by secrets/. */
  access_token: string;
  /** Sealed by secrets/; null when the host's tokens do not expire (migration 0032). */
  refresh_token: string | null;
  /** When the access token expires; null: it does not. */
  expires_at: string | null;
  created_at: string;
  updated_at: string;
}

/** A link authorization sent to the git host and not back yet (migration 0031). */
export interface GitHostLinkStateTable {
  id: Generated<number>;
  tenant_id: number;
  user_id: number;
  state_hash: string;
  created_at: string;
  expires_at: string;
}

export type GitHostAppRow = Selectable<GitHostAppTable>;
export type GitHostLinkRow = Selectable<GitHostLinkTable>;
export type GitHostLinkStateRow = Selectable<GitHostLinkStateTable>;

/** The git-host repository a deployment is connected to (areas/git-host, migration 0032). */
export interface DeploymentUpstreamTable {
  id: Generated<number>;
  tenant_id: number;
  deployment_id: number;
  installation_id: number;
  owner: string;
  repo: string;
  clone_url: string;
  connected_by: number | null;
  created_at: string;
  updated_at: string;
}
export type DeploymentUpstreamRow = Selectable<DeploymentUpstreamTable>;

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

/** One stored model of the authorization server (areas/oauth, migration 0022). */
export interface OAuthModelTable {
  id: Generated<number>;
  tenant_id: number;
  /** The `oidc-provider` model name: AccessToken, RefreshToken, Grant, DeviceCode, Client, ... */
  model: string;
  /** SHA-256 (base64url) of the model's id; for tokens the id is the token. */
  key_hash: string;
  grant_hash: string | null;
  user_code_hash: string | null;
  uid: string | null;
  /** JSON: the model's payload without the token. */
  payload: string;
  /** secrets/: a client's secret. */
  secret: string | null;
  created_at: string;
  expires_at: string | null;
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
  git_host_apps: GitHostAppTable;
  git_host_links: GitHostLinkTable;
  git_host_link_states: GitHostLinkStateTable;
  deployment_upstreams: DeploymentUpstreamTable;
}

/** A scheduled delivery of one published dashboard (migration 0027); booleans are 0 or 1. */
export interface NotificationTable {
  id: Generated<number>;
  tenant_id: number;
  deployment_id: number;
  dashboard_id: number;
  schedule_type: string;
  minute: number | null;
  hour: number | null;
  day_of_week: number | null;
  day_of_month: number | null;
  cron_expression: string;
  timezone: string;
  is_enabled: number;
  notification_enabled: number;
  notification_format: string;
  notification_ai_summary: number;
  /** JSON arrays, or null. */
  filters: string | null;
  time_grains: string | null;
  member_switchers: string | null;
  /** The next occurrence (UTC ISO), null when the schedule never runs again. */
  next_run_at: string | null;
  created_by: number | null;
  created_at: string;
  updated_at: string;
}

export interface NotificationRecipientTable {
  id: Generated<number>;
  tenant_id: number;
  notification_id: number;
  type: string;
  /** `user:<id>`, `embed-user:<id>` or `slack:<channel>`: unique per notification. */
  recipient_key: string;
  user_id: number | null;
  embed_user_id: number | null;
  channel_id: string | null;
  channel_name: string | null;
  /** JSON object, or null. */
  security_context: string | null;
  created_at: string;
  updated_at: string;
}

/** One claimed occurrence of a notification's schedule: unique per (notification, scheduled_for). */
export interface NotificationDeliveryTable {
  id: Generated<number>;
  tenant_id: number;
  notification_id: number;
  scheduled_for: string;
  claimed_at: string;
  /** The process (jobs owner name) that claimed it. */
  claimed_by: string;
  job_id: number | null;
  status: string;
  /** 1 when mails go out (`notificationEnabled`), 0 when it is rendered into the history only. */
  send: number;
  format: string;
  message: string | null;
  finished_at: string | null;
}

export interface NotificationDeliveryRecipientTable {
  id: Generated<number>;
  tenant_id: number;
  delivery_id: number;
  type: string;
  user_id: number | null;
  embed_user_id: number | null;
  email: string | null;
  status: string;
  attempts: Generated<number>;
  last_error: string | null;
  updated_at: string;
  /** JSON: the rows the recipient's last render showed, per widget (bounded), for the next delivery's summary; null when not kept. */
  render_data: string | null;
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

export type Db = Kysely<Database>;
/** What a store function runs on: the database, or a transaction opened by the service. */
export type Executor = Kysely<Database> | Transaction<Database>;

export type TenantRow = Selectable<TenantTable>;
export type DbtSyncSettingsRow = Selectable<DbtSyncSettingsTable>;
export type DbtSyncRunRow = Selectable<DbtSyncRunTable>;
export type DbtSyncLogRow = Selectable<DbtSyncLogTable>;
export type NotificationRow = Selectable<NotificationTable>;
export type NotificationRecipientRow = Selectable<NotificationRecipientTable>;
export type NotificationDeliveryRow = Selectable<NotificationDeliveryTable>;
export type NotificationDeliveryRecipientRow = Selectable<NotificationDeliveryRecipientTable>;
export type UserRow = Selectable<UserTable>;
export type GroupRow = Selectable<GroupTable>;
export type DeploymentRow = Selectable<DeploymentTable>;
export type BranchRow = Selectable<BranchTable>;
export type DevSessionRow = Selectable<DevSessionTable>;
export type BuildRow = Selectable<BuildTable>;
export type UploadRow = Selectable<UploadTable>;
export type ApiKeyRow = Selectable<ApiKeyTable>;
export type PolicyRow = Selectable<PolicyTable>;
export type FolderRow = Selectable<FolderTable>;
export type WorkbookRow = Selectable<WorkbookTable>;
export type ReportRow = Selectable<ReportTable>;
export type DashboardRow = Selectable<DashboardTable>;
export type DashboardVersionRow = Selectable<DashboardVersionTable>;
export type DashboardReportSnapshotRow = Selectable<DashboardReportSnapshotTable>;
export type UserAttributeRow = Selectable<UserAttributeTable>;
export type JobRow = Selectable<JobTable>;
export type EnvVarRow = Selectable<EnvVarTable>;
export type SigningKeyRow = Selectable<SigningKeyTable>;
export type EnvironmentTokenRow = Selectable<EnvironmentTokenTable>;
export type EmbedSessionRow = Selectable<EmbedSessionTable>;
export type RuntimeRow = Selectable<RuntimeTable>;
export type RuntimeLogRow = Selectable<RuntimeLogTable>;
export type OidcTokenConfigRow = Selectable<OidcTokenConfigTable>;
export type EmbedTenantRow = Selectable<EmbedTenantTable>;
export type EmbedUserRow = Selectable<EmbedUserTable>;
export type EmbedGroupRow = Selectable<EmbedGroupTable>;
export type OAuthIntegrationRow = Selectable<OAuthIntegrationTable>;
export type UserOAuthTokenRow = Selectable<UserOAuthTokenTable>;
export type OAuthStateRow = Selectable<OAuthStateTable>;
export type OAuthModelRow = Selectable<OAuthModelTable>;
export type IdentityProviderRow = Selectable<IdentityProviderTable>;
export type IdpSignInRow = Selectable<IdpSignInTable>;
export type NewUser = Insertable<UserTable>;
export type UserUpdate = Updateable<UserTable>;

/** A dashboard export (reference 8.A; migration 0028): its render job, then its file until it expires. */
export interface DashboardExportTable {
  id: Generated<number>;
  public_id: string;
  tenant_id: number;
  deployment_id: number;
  dashboard_id: number;
  submitted_by: number;
  identity: string;
  job_id: number | null;
  format: 'png' | 'pdf';
  status: 'pending' | 'processing' | 'completed' | 'failed';
  error: string | null;
  content_type: string | null;
  content: Buffer | null;
  created_at: string;
  expires_at: string;
  updated_at: string;
}
export type DashboardExportRow = Selectable<DashboardExportTable>;
