import { LastUsedRecorder } from './areas/api-keys/last-used.js';
import { embedDashboards, embedSharing } from './areas/embed-sessions/embed-dashboards.js';
import { pythonRunsService } from './areas/python-analysis/python-runs.service.js';
import { PythonRunCache } from './areas/python-analysis/run-cache.js';
import { FolderTrees } from './areas/workspace/folder-trees.js';
import { TenantCache } from './cache/tenant-cache.js';
import { DEFAULT_PYTHON_OPTIONS, PythonSandbox, type PythonSandboxOptions } from './python/sandbox.js';
import type { Store } from './db/database.js';
import { apiKeysService } from './areas/api-keys/api-keys.service.js';
import { deploymentsService, type DeploymentUrlOf } from './areas/deployments/deployments.service.js';
import type { Catalog } from './areas/deployments/catalog.js';
import { setupService } from './areas/deployments/setup.service.js';
import { environmentsService } from './areas/deployments/environments.service.js';
import { groupsService } from './areas/groups/groups.service.js';
import { policiesService } from './areas/policies/policies.service.js';
import { usersService } from './areas/users/users.service.js';
import { scimService } from './areas/scim/scim.service.js';
import { userAttributesService } from './areas/user-attributes/user-attributes.service.js';
import { oidcTokenConfigsService } from './areas/workload-identity/oidc-token-configs.service.js';
import { workloadFiles } from './areas/workload-identity/workload-files.js';
import { foldersService } from './areas/workspace/folders.service.js';
import { workspaceService } from './areas/workspace/workspace.service.js';
import { workbooksService } from './areas/workbooks/workbooks.service.js';
import { reportsService } from './areas/reports/reports.service.js';
import { dashboardsService } from './areas/dashboards/dashboards.service.js';
import { commitsService } from './areas/data-model/commits.service.js';
import { gitHttpService } from './areas/data-model/git-http.service.js';
import { filesService } from './areas/data-model/files.service.js';
import { devModeService } from './areas/data-model/dev-mode.service.js';
import { branchesService } from './areas/data-model/branches.service.js';
import { buildsProduction, type DeployBranchMoved } from './areas/data-model/deploy-events.js';
import { authorOf } from './areas/data-model/authors.js';
import { hasSuccessfulBuild } from './areas/data-model/builds.store.js';
import { deletePoliciesOn } from './areas/policies/policies.store.js';
import { deleteItemPoliciesOf } from './areas/workspace/items.store.js';
import { buildsService } from './areas/data-model/builds.service.js';
import { validateService } from './areas/data-model/validate.service.js';
import { uploadsService } from './areas/data-model/uploads.service.js';
import { createJobs, type JobsOptions } from './jobs/index.js';
import { envVarsService } from './areas/env-vars/env-vars.service.js';
import type { Secrets } from './secrets/index.js';
import { Signing } from './signing/index.js';
import { tokensService } from './areas/tokens/tokens.service.js';
import { DeploymentRepositories } from './areas/data-model/deployment-repositories.js';
import { Repositories } from './git/repositories.js';
import { exclusive, lockKey } from './db/transactions.js';
import { Runtime, type RuntimeDriver, type RuntimeOptions } from './runtime/index.js';
import { ownClusterReader } from './runtime/own-cluster.js';
import { runtimePlanner } from './areas/env-vars/runtime-plan.js';
import { podsService } from './areas/deployments/pods.service.js';
import { dataApiService } from './areas/data-api/data-api.service.js';
import { reportRunsService } from './areas/reports/report-runs.js';
import { placementsService } from './areas/reports/placements.service.js';
import { dbtSyncSettingsService } from './areas/dbt-sync/settings.service.js';
import { dbtSyncService } from './areas/dbt-sync/runs.service.js';
import { embedSessionsService } from './areas/embed-sessions/embed-sessions.service.js';
import { embedSettings, embedSettingsService } from './areas/account/embed-settings.js';
import { embedTenantsService } from './areas/embed-tenants/embed-tenants.service.js';
import { embedGroupsService } from './areas/embed-tenants/embed-groups.service.js';
import { embedAccessService } from './areas/embed-tenants/embed-access.service.js';
import { publishedDashboardSwitch } from './areas/embed-tenants/dashboard-embed.js';
import { DEFAULT_EMBED_USER_LIMIT } from './areas/embed-tenants/limits.js';
import { oauthIntegrationsService } from './areas/oauth-integrations/oauth-integrations.service.js';
import { userOAuthTokensService } from './areas/oauth-integrations/user-oauth-tokens.service.js';
import { tokenRefresher } from './areas/oauth-integrations/token-refresh.js';
import { Outbound, type OutboundLog, type OutboundOptions } from './outbound/index.js';
import { tenantSettings, tenantSettingsService } from './areas/account/tenant-settings.js';
import { auditEventsService } from './areas/account/audit-events.js';
import { Audit } from './audit/index.js';
import { appConfigService } from './areas/account/app-config.js';
import { userSettingsService } from './areas/account/user-settings.js';
import { OAuthProviders } from './areas/oauth/oauth.provider.js';
import { oauthService } from './areas/oauth/oauth.service.js';
import { oauthClientsService } from './areas/oauth/oauth-clients.service.js';
import { notificationsService } from './areas/notifications/notifications.service.js';
import { NotificationScheduler } from './areas/notifications/scheduler.js';
import type { NotificationMailOptions } from './areas/notifications/deliver.js';
import { createMailer } from './mail/index.js';
import { createSummariser } from './areas/notifications/summary.js';
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { usageAnalyticsService } from './areas/usage-analytics/usage-analytics.service.js';
import { approveDeviceCode } from './areas/oauth/oauth.service.js';
import { idpSignIn } from './areas/oauth/idp-sign-in.js';
import type { SignInDeps } from './areas/oauth/oauth.mount.js';
import { identityProviderService } from './areas/identity-provider/identity-provider.service.js';
import { gitHostService } from './areas/git-host/git-host.service.js';
import { upstreamsService } from './areas/git-host/upstreams.service.js';
import { relyingParty } from './areas/identity-provider/relying-party.js';
import { findUserById } from './areas/users/users.store.js';
import { createRenderer, type Viewer } from './render/index.js';
import { findPublishedInDeployment } from './areas/dashboards/published.js';
import type { DataApiGrant } from './areas/data-api/data-api.service.js';
import { dashboardExportsService } from './areas/dashboard-exports/exports.service.js';
import { registerExportJob } from './areas/dashboard-exports/export-job.js';
import { ApiError } from './shared/problems.js';

/** Dashboard exports rendering at once per identity rendered as, unless configured (reference 8.A's 429). */
export const DEFAULT_EXPORTS_PER_IDENTITY = 3;

/** Every service, built once per app over one store and the deployments' repositories. Routes share them. */
export interface ServiceOptions {
  repositoriesDir: string;
  secrets: Secrets;
  jobs?: Pick<JobsOptions, 'heartbeatMs' | 'staleAfterMs' | 'onTakeover'>;
  catalog: Catalog;
  /** The origin of a tenant: deployments are at `<origin>/deployments/<id>`. */
  deploymentUrlOf: DeploymentUrlOf;
  /** Where the SQL API listens (SQL_API_PORT), once it does; null or absent: it is off. */
  sqlApiPort?: () => number | null;
  /** Deployments' runtimes: the driver (null: this process runs none) and timings. */
  runtime?: { driver: RuntimeDriver | null; options?: Partial<RuntimeOptions>; onError?: (error: Error, what: string) => void };
  /** The server's own PostgreSQL database (DATABASE_URL): no deployment's data source may be a database of its cluster. */
  ownDatabaseUrl?: string | null;
  /** The most embed users an account may hold (EMBED_USER_LIMIT); absent: 10,000. */
  embedUserLimit?: number;
  /** Calls to other servers (outbound/): the private addresses allowed, timeouts, retries. */
  outbound?: OutboundOptions;
  /** Where outbound calls and background failures of areas are logged (never a secret). */
  log?: OutboundLog;
  /** The clock of rules that expire (OAuth states, token refresh, signed tokens, embed sessions); tests move it. Default: the system's. */
  now?: () => Date;
  /** Where a service reports a failure no request sees (the authorization server's own errors). */
  onError?: (error: unknown, what: string) => void;
  /** The background refresh of user OAuth tokens: how long before expiry, and the retry delay after a passing failure (ms). */
  tokenRefresh?: { leadMs?: number; retryMs?: number };
  /** How often notifications' due occurrences are looked for (NOTIFICATIONS_TICK_MS); absent: 10 s. */
  notificationsTickMs?: number;
  /** Dashboard renders: where the DejaVu fonts are (RENDER_FONTS_DIR), and exports rendering at once per identity (DASHBOARD_EXPORTS_PER_IDENTITY). */
  render?: { fontsDir?: string; exportsPerIdentity?: number };
  /** How notifications are mailed; absent: no SMTP, nothing is mailed. */
  notificationMail?: NotificationMailOptions;
  /** How often coalesced `lastUsedAt` values are written (ms). */
  lastUsedFlushMs?: number;
  /** How long a deployment's folders must stay unchanged before its tree is held in memory (ms). */
  folderTreeSettleMs?: number;
  /** The Python sandbox of embedded dashboards' analysis, and how long a run's result is reused (ms). */
  python?: PythonSandboxOptions & { cacheMs: number };
}

/** Whose rows a render's queries return, as the data API's grant: a user's own context, or an embed user's whole one. */
function grantOf(viewer: Viewer): DataApiGrant {
  if ('context' in viewer) return { scopes: ['sql-runner'], userId: 0, securityContext: viewer.context.securityContext, context: viewer.context };
  return { scopes: null, userId: viewer.userId, securityContext: viewer.securityContext ?? {} };
}

export function createServices(store: Store, options: ServiceOptions) {
  const repositories = new DeploymentRepositories(new Repositories(options.repositoriesDir, (id, fn) => exclusive(store, lockKey.repository(id), fn)));
  const jobs = createJobs(store, options.jobs ?? {});
  // The runtimes reconcile when a build succeeds (they are made below; the call comes later).
  const builds = buildsService(store, repositories, jobs, () => runtime.reconcile());
  // Per-request caches every route reads through the caller (cache/tenant-cache.ts, areas/workspace/folder-trees.ts).
  const tenantCache = new TenantCache(store.db);
  const folderTrees = new FolderTrees(store.db, options.folderTreeSettleMs === undefined ? {} : { settleMs: options.folderTreeSettleMs });
  const lastUsed = new LastUsedRecorder(store.db, options.lastUsedFlushMs, (error) => options.onError?.(error, 'lastUsedAt flush failed'));
  const python = new PythonSandbox(options.python ?? DEFAULT_PYTHON_OPTIONS);
  // One keyring for every token the tenant issues; its issuer is the tenant's origin.
  const now = options.now ?? (() => new Date());
  const signing = new Signing(store, { secrets: options.secrets, issuerOf: options.deploymentUrlOf, now });
  // Production builds from the deploy branch whenever it moves.
  const deployBranchMoved: DeployBranchMoved = async (row, commit, cause) => {
    await builds.enqueue(row, row.deploy_branch_name, commit, cause);
  };
  // The audit log records while the tenant's setting says so; audit/ knows no area, so it is told here.
  const audit = new Audit(store.db, async (db, tenantId, snapshot) => (await tenantSettings(db, tenantId, snapshot)).auditLogEnabled);
  // Each running environment receives the tenant's workload-identity tokens as files.
  const planner = runtimePlanner(store, options.secrets, options.catalog, workloadFiles(store.db, signing, audit));
  const ownCluster = ownClusterReader(options.ownDatabaseUrl ?? null);
  const runtime = new Runtime(
    store,
    options.secrets,
    options.runtime?.driver ?? null,
    planner,
    { ownCluster, ...options.runtime?.options },
    options.runtime?.onError,
  );
  const runtimesChanged = () => runtime.reconcile();
  const dataApi = dataApiService(store, signing, runtime, builds, repositories, options.deploymentUrlOf);
  const reports = reportsService(store);
  const reportRuns = reportRunsService(reports, dataApi);
  const dbtSyncSettings = dbtSyncSettingsService(store, options.secrets);
  const embedPeople = { userLimit: options.embedUserLimit ?? DEFAULT_EMBED_USER_LIMIT };
  const outbound = new Outbound({ ...options.outbound, ...(options.log ? { log: options.log } : {}) });
  // A deployment connected to a repository of the git host pulls from it and pushes to it.
  const gitHost = gitHostService(store.db, options.secrets, outbound, options.deploymentUrlOf, now);
  const upstreams = upstreamsService({
    db: store.db,
    secrets: options.secrets,
    outbound,
    repositories,
    deployBranchMoved,
    originOf: options.deploymentUrlOf,
    now,
    linked: gitHost.linked,
  });
  // Dashboards rendered to PNG and PDF (exports, and each notification recipient), each query as its viewer.
  const renderer = createRenderer({
    findPublished: (tenantId, deploymentId, ref) => findPublishedInDeployment(store.db, tenantId, deploymentId, ref),
    run: async (tenant, deploymentId, viewer, request) => {
      const answer = await dataApi.runAs(tenant, deploymentId, grantOf(viewer), request);
      return { rows: answer.data, annotation: answer.annotation };
    },
    isRefusal: (error) => error instanceof ApiError && (error.code === 'QUERY_REFUSED' || error.code === 'FORBIDDEN'),
    ...(options.render?.fontsDir ? { fontsDir: options.render.fontsDir } : {}),
  });
  registerExportJob(store, jobs, renderer, now);
  // The tenants' OAuth authorization servers (issuer `<tenant origin>/oauth`), made on first use.
  const oauthProviders = new OAuthProviders(store.db, options.secrets, signing, options.deploymentUrlOf, (error, what) => options.onError?.(error, what));
  const userOAuthTokens = userOAuthTokensService(store, options.secrets, outbound, {
    now,
    ...(options.log ? { log: options.log } : {}),
    ...(options.tokenRefresh?.retryMs !== undefined ? { retryMs: options.tokenRefresh.retryMs } : {}),
  });
  // Notifications' schedules: the due-time loop claims each occurrence once across processes.
  const mail = options.notificationMail;
  const mailer = mail?.smtp ? createMailer(mail.smtp) : null;
  const summariser = mail?.summariser ? createSummariser(mail.summariser, options.outbound?.timeoutMs ? { timeoutMs: options.outbound.timeoutMs } : {}) : null;
  const notificationScheduler = new NotificationScheduler(store, jobs, {
    now,
    delivery: { renderer, mailer, summariser, attempts: mail?.attempts ?? 3, retryBaseMs: mail?.retryBaseMs ?? 30_000 },
    owner: `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`,
    ...(options.notificationsTickMs !== undefined ? { tickMs: options.notificationsTickMs } : {}),
    onError: (error) => options.onError?.(error, 'notifications: claiming due deliveries'),
  });
  // Sign-in through the tenant's identity provider, at the authorization server's pages.
  const oauthSignIn: SignInDeps = {
    idp: idpSignIn({ db: store.db, secrets: options.secrets, relyingParty: relyingParty(outbound), audit, originOf: options.deploymentUrlOf, now }),
    approveDevice: (tenant, userCode, userId) => approveDeviceCode(store.db, oauthProviders, tenant, userCode, userId),
    consented: (tenant, event) =>
      audit.recordFor(
        tenant.id,
        { userId: event.userId, email: null, credentialKind: 'identity-provider', credentialId: null },
        { action: event.allowed ? 'oauth.consent.allowed' : 'oauth.consent.denied', details: { clientId: event.clientId, scope: event.scope } },
        { requestId: event.requestId },
      ),
    describeAccount: async (tenantId, userId) => (Number.isInteger(userId) ? (await findUserById(store.db, tenantId, userId))?.email : undefined),
  };
  const dashboardsForEmbeds = embedDashboards(store.db, folderTrees, embedSharing(store.db));
  return {
    audit,
    outbound,
    mailer,
    summariser,
    notificationScheduler,
    notifications: notificationsService(store, { embedUserLimit: embedPeople.userLimit, now }),
    oauthSignIn,
    identityProvider: identityProviderService(store.db, options.secrets, options.deploymentUrlOf, now),
    gitHost,
    upstreams,
    oauthIntegrations: oauthIntegrationsService(store, options.secrets, now),
    userOAuthTokens,
    // Tokens are refreshed ahead of expiry on the jobs service, besides on use.
    tokenRefresh: tokenRefresher(store, userOAuthTokens, jobs, {
      now,
      ...(options.tokenRefresh?.leadMs !== undefined ? { leadMs: options.tokenRefresh.leadMs } : {}),
      onError: (error, what) => options.onError?.(error, what),
    }),
    secrets: options.secrets,
    signing,
    repositories,
    jobs,
    builds,
    validation: validateService(store, repositories),
    uploads: uploadsService(store, repositories, builds),
    commits: commitsService(store, repositories),
    gitHttp: gitHttpService(store, repositories, async (row, changed) => {
      const head = changed.get(row.deploy_branch_name);
      if (head !== undefined && buildsProduction(row, row.deploy_branch_name)) await deployBranchMoved(row, head, 'push');
    }),
    files: filesService(store, repositories),
    devMode: devModeService(store, repositories, deployBranchMoved, upstreams.of),
    branches: branchesService(
      store,
      repositories,
      deployBranchMoved,
      (row, branch, commit, cause) => builds.ensureBuilt(row, branch, commit, cause),
      (deploymentId, branch) => runtime.forget(deploymentId, branch),
      upstreams.of,
    ),
    apiKeys: apiKeysService(store),
    users: usersService(store),
    scim: scimService(store),
    userAttributes: userAttributesService(store),
    oidcTokenConfigs: oidcTokenConfigsService(store),
    groups: groupsService(store),
    deployments: deploymentsService(
      store,
      {
        create: async (row, actor) => repositories.create(row, await authorOf(store.db, actor)),
        open: (row) => repositories.open(row),
        remove: (id) => repositories.remove(id),
      },
      deployBranchMoved,
      options.catalog,
      options.deploymentUrlOf,
      runtimesChanged,
      // The policies granted on it, and its items', go with it.
      [(trx, tenantId, id) => deletePoliciesOn(trx, tenantId, { type: 'DEPLOYMENT', id }), (trx, tenantId, id) => deleteItemPoliciesOf(trx, tenantId, id)],
    ),
    setup: setupService(store, options.deploymentUrlOf, hasSuccessfulBuild),
    environments: environmentsService(store, options.deploymentUrlOf, options.sqlApiPort ?? (() => null)),
    policies: policiesService(store),
    folders: foldersService(store),
    workspace: workspaceService(store),
    workbooks: workbooksService(store),
    reports,
    dashboards: dashboardsService(store),
    envVars: envVarsService(store, options.secrets, runtimesChanged, { ownCluster, allowSocketSources: runtime.options.allowSocketSources }, audit),
    runtime,
    pods: podsService(store, runtime),
    dataApi,
    reportRuns,
    placements: placementsService(store, reportRuns),
    tokens: tokensService(store, signing, options.secrets, options.deploymentUrlOf, audit),
    dbtSyncSettings,
    dbtSync: dbtSyncService(store, repositories, jobs, dbtSyncSettings, outbound),
    embedSettings: embedSettingsService(store),
    embedSessions: embedSessionsService(store, {
      signing,
      urlOf: options.deploymentUrlOf,
      settings: (tenantId) => embedSettings(store.db, tenantId),
      now,
      embedUserLimit: embedPeople.userLimit,
    }),
    embedTenants: embedTenantsService(store, embedPeople),
    embedGroups: embedGroupsService(store, embedPeople),
    tenantSettings: tenantSettingsService(store, (trx, caller, enabled) =>
      audit.recordAlways(caller, { action: enabled ? 'audit-log.enabled' : 'audit-log.disabled' }, trx),
    ),
    auditEvents: auditEventsService(audit),
    appConfig: appConfigService(store),
    userSettings: userSettingsService(store),
    embedAccess: embedAccessService(store, publishedDashboardSwitch),
    embedDashboards: dashboardsForEmbeds,
    pythonRuns: pythonRunsService(store.db, dashboardsForEmbeds, dataApi, python, new PythonRunCache(options.python?.cacheMs ?? 60_000)),
    tenantCache,
    folderTrees,
    lastUsed,
    python,
    oauthProviders,
    oauth: oauthService(store.db, oauthProviders),
    oauthClients: oauthClientsService(store.db, options.secrets),
    usageAnalytics: usageAnalyticsService(store, {
      signing,
      secrets: options.secrets,
      urlOf: options.deploymentUrlOf,
      repositories,
      deployBranchMoved,
      runtimesChanged,
      dataSourcesDir: options.runtime?.options?.dataSourcesDir ?? null,
      audit,
      now,
    }),
    renderer,
    dashboardExports: dashboardExportsService(store, { jobs, now, concurrentPerIdentity: options.render?.exportsPerIdentity ?? DEFAULT_EXPORTS_PER_IDENTITY }),
  };
}
export type Services = ReturnType<typeof createServices>;
