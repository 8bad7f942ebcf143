import type { Generated, Selectable } from 'kysely';

// Tables of deployments: versions, branches, builds, uploads, dev sessions, env vars, tokens, runtimes, dbt sync, git host.

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
export type DbtSyncSettingsRow = Selectable<DbtSyncSettingsTable>;
export type DbtSyncRunRow = Selectable<DbtSyncRunTable>;
export type DbtSyncLogRow = Selectable<DbtSyncLogTable>;
export type DeploymentRow = Selectable<DeploymentTable>;
export type BranchRow = Selectable<BranchTable>;
export type DevSessionRow = Selectable<DevSessionTable>;
export type BuildRow = Selectable<BuildTable>;
export type UploadRow = Selectable<UploadTable>;
export type EnvVarRow = Selectable<EnvVarTable>;
export type EnvironmentTokenRow = Selectable<EnvironmentTokenTable>;
export type RuntimeRow = Selectable<RuntimeTable>;
export type RuntimeLogRow = Selectable<RuntimeLogTable>;
export type OidcTokenConfigRow = Selectable<OidcTokenConfigTable>;
