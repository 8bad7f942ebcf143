import { accountArea, tenantSettings } from './areas/account/index.js';
import { aiSettingsArea } from './areas/ai-settings/index.js';
import type { ServerProviderConfig } from './ai/index.js';
import { agentsArea } from './areas/agents/index.js';
import { apiKeysArea } from './areas/api-keys/index.js';
import { chartsArea } from './areas/charts/index.js';
import { dashboardCommentsArea } from './areas/dashboard-comments/index.js';
import { dashboardExportsArea } from './areas/dashboard-exports/index.js';
import { dashboardsArea } from './areas/dashboards/index.js';
import { dataApiArea } from './areas/data-api/index.js';
import { authorOf, dataModelArea } from './areas/data-model/index.js';
import { dbtSyncArea } from './areas/dbt-sync/index.js';
import { deploymentsArea, type Catalog } from './areas/deployments/index.js';
import { embedPageArea } from './areas/embed-page/index.js';
import { embedSessionsArea } from './areas/embed-sessions/index.js';
import { DEFAULT_EMBED_USER_LIMIT, embedTenantsArea } from './areas/embed-tenants/index.js';
import { envVarsArea, runtimePlanner } from './areas/env-vars/index.js';
import { gitHostArea } from './areas/git-host/index.js';
import { groupsArea } from './areas/groups/index.js';
import { rolesArea } from './areas/roles/index.js';
import { identityProviderArea } from './areas/identity-provider/index.js';
import { notificationsArea, type NotificationMailOptions } from './areas/notifications/index.js';
import { reportDeliveriesArea } from './areas/report-deliveries/index.js';
import { oauthArea } from './areas/oauth/index.js';
import { oauthIntegrationsArea, type TokenRefreshConfig } from './areas/oauth-integrations/index.js';
import { deletePoliciesOn, policiesArea } from './areas/policies/index.js';
import { pythonAnalysisArea } from './areas/python-analysis/index.js';
import { reportsArea } from './areas/reports/index.js';
import { scimArea } from './areas/scim/index.js';
import { tenantsArea } from './areas/tenants/index.js';
import { tokensArea } from './areas/tokens/index.js';
import { usageAnalyticsArea } from './areas/usage-analytics/index.js';
import { userAttributesArea } from './areas/user-attributes/index.js';
import { findUserById, usersArea } from './areas/users/index.js';
import { workbooksArea } from './areas/workbooks/index.js';
import { workloadFiles, workloadIdentityArea } from './areas/workload-identity/index.js';
import { deleteItemPoliciesOf, workspaceArea } from './areas/workspace/index.js';
import type { Caller } from './access/caller.js';
import { AccessContext } from './access/access.js';
import { Audit } from './audit/index.js';
import { TenantCache } from './cache/tenant-cache.js';
import type { Store } from './db/database.js';
import { createJobs, type JobsOptions } from './jobs/index.js';
import { Outbound, type OutboundLog, type OutboundOptions } from './outbound/index.js';
import { Areas, configure, wire, type Platform, type Use } from './platform/index.js';
import type { PythonSandboxOptions } from './python/sandbox.js';
import { Runtime, type RuntimeDriver, type RuntimeOptions } from './runtime/index.js';
import { ownClusterReader } from './runtime/own-cluster.js';
import type { Secrets } from './secrets/index.js';
import { Signing } from './signing/index.js';
import { systemClock, type Clock } from './time.js';

/** What the shared services and the areas are built with: the server's configuration, as app.ts passes it on. */
export interface ServiceOptions {
  repositoriesDir: string;
  secrets: Secrets;
  jobs?: Pick<JobsOptions, 'heartbeatMs' | 'staleAfterMs' | 'onTakeover' | 'workerThreads'>;
  catalog: Catalog;
  /** The origin of a tenant: deployments are at `<origin>/deployments/<id>`. */
  deploymentUrlOf: Platform['originOf'];
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
  now?: Clock;
  /** Where a service reports a failure no request sees (the authorization server's own errors). */
  onError?: (error: unknown, what: string) => void;
  /** The background refresh of user OAuth tokens (OAUTH_TOKEN_REFRESH_*). */
  tokenRefresh?: TokenRefreshConfig;
  /** How often notifications' due occurrences are looked for (NOTIFICATIONS_TICK_MS); absent: 10 s. */
  notificationsTickMs?: number;
  /** Dashboard renders: where the DejaVu fonts are (RENDER_FONTS_DIR), and exports rendering at once per identity (DASHBOARD_EXPORTS_PER_IDENTITY). */
  render?: { fontsDir?: string; exportsPerIdentity?: number };
  /** How notifications are mailed; absent: no SMTP, nothing is mailed. */
  notificationMail?: NotificationMailOptions;
  /** The most rows a report delivery attaches per recipient; absent: 10,000. */
  reportDeliveryMaxRows?: number;
  /** How often coalesced `lastUsedAt` values are written (ms). */
  lastUsedFlushMs?: number;
  /** How long a deployment's folders must stay unchanged before its tree is held in memory (ms). */
  folderTreeSettleMs?: number;
  /** Embed session exchanges a minute per client address (EMBED_EXCHANGE_PER_IP_PER_MINUTE); absent: 120; 0: unlimited. */
  embedExchangePerIpPerMinute?: number;
  /** How long an embed token lives (ms, whole seconds); absent: 24 hours. */
  embedTokenLifetimeMs?: number;
  /** Where the embedded dashboard page's build is; absent: beside this build. */
  embedPageDir?: string;
  /** The Python sandbox of embedded dashboards' analysis, and how long a run's result is reused (ms). */
  python?: PythonSandboxOptions & { cacheMs: number };
  /** The operator's default model provider of AI features (AI_PROVIDER_*); absent or null: none. */
  aiProvider?: ServerProviderConfig | null;
}

/**
 * The caller of a user as if they had sent a request with an unscoped key of theirs: what work done
 * for a user outside a request (a scheduled agent task, an internal embed session's saving) runs
 * as, with the same access checks; `credentialKind` says which in the audit log.
 * A user who is gone or deactivated has no caller.
 */
function callerFor(store: Store, tenantCache: TenantCache, later: Use) {
  return async (tenantId: number, userId: number, credentialKind = 'agent-task'): Promise<Caller> => {
    const [user, tenant] = await Promise.all([
      findUserById(store.db, tenantId, userId),
      store.db.selectFrom('tenants').select(['id', 'slug']).where('id', '=', tenantId).executeTakeFirst(),
    ]);
    if (!user || user.deactivated_at !== null || !tenant) throw new Error(`User ${userId} no longer exists or is deactivated.`);
    const snapshot = await tenantCache.snapshot(tenantId);
    const actor = { tenantId, userId, email: user.email, role: user.role, keyId: 0, scope: null, credentialKind };
    return {
      actor,
      tenant,
      access: new AccessContext(store.db, tenantId, { userId, role: user.role }, null, snapshot),
      log: { error: () => undefined },
      snapshot,
      folderTrees: later(workspaceArea).folderTrees,
    };
  };
}

const QUIET: OutboundLog = { debug: () => undefined, warn: () => undefined };

/** The shared services every area leans on (platform/platform.ts), built once per app. */
function createPlatform(store: Store, options: ServiceOptions): Platform {
  const { secrets } = options;
  const now = options.now ?? systemClock;
  const onError = options.onError ?? (() => undefined);
  const originOf = options.deploymentUrlOf;
  const signing = new Signing(store, { secrets, issuerOf: originOf, now });
  // The audit log records while the tenant's setting says so; audit/ knows no area, so it is told here.
  const audit = new Audit(store.db, async (db, tenantId, snapshot) => (await tenantSettings(db, tenantId, snapshot)).auditLogEnabled, now);
  // Each running environment receives the tenant's workload-identity tokens as files.
  const planner = runtimePlanner(store, secrets, options.catalog, workloadFiles(store.db, signing, audit));
  const ownCluster = ownClusterReader(options.ownDatabaseUrl ?? null);
  const runtime = new Runtime(store, secrets, options.runtime?.driver ?? null, planner, { ownCluster, ...options.runtime?.options }, options.runtime?.onError);
  const log = options.log ?? QUIET;
  return {
    store,
    secrets,
    signing,
    // Jobs' heartbeats tell live workers from dead ones across processes, so they keep real time
    // (the system clock, jobs/types.ts), as the runtime's pod records do; everything else reads `now`.
    jobs: createJobs(store, options.jobs ?? {}),
    audit,
    outbound: new Outbound({ ...options.outbound, log }),
    runtime,
    tenantCache: new TenantCache(store.db),
    now,
    originOf,
    log,
    onError,
  };
}

/**
 * The app's areas, each listed once, with its configuration. The order is the order routes and
 * schemas are added; an area another needs is built first whatever its place here.
 */
function listAreas(store: Store, options: ServiceOptions, later: Use, platform: Platform) {
  const embedUserLimit = options.embedUserLimit ?? DEFAULT_EMBED_USER_LIMIT;
  return [
    tenantsArea,
    configure(apiKeysArea, { lastUsedFlushMs: options.lastUsedFlushMs }),
    usersArea,
    groupsArea,
    scimArea,
    userAttributesArea,
    // The deployments area is what the data model, policies and workspace build on; what it needs
    // of them (repositories, builds, what goes with a deleted deployment) is given here.
    wire(deploymentsArea, (use) => {
      const { repositories, deployBranchMoved } = use(dataModelArea);
      return {
        catalog: options.catalog,
        sqlApiPort: options.sqlApiPort ?? (() => null),
        repositories: {
          create: async (row, actor) => repositories.create(row, await authorOf(store.db, actor)),
          open: (row) => repositories.open(row),
          remove: (id) => repositories.remove(id),
        },
        deployBranchMoved,
        // The policies granted on it, and its items', go with it.
        onDelete: [
          (trx, tenantId, id) => deletePoliciesOn(trx, tenantId, { type: 'DEPLOYMENT', id }),
          (trx, tenantId, id) => deleteItemPoliciesOf(trx, tenantId, id),
        ],
      };
    }),
    policiesArea,
    rolesArea,
    configure(workspaceArea, { folderTreeSettleMs: options.folderTreeSettleMs }),
    workbooksArea,
    wire(reportsArea, (use) => ({ queries: use(dataApiArea).dataApi })),
    dashboardsArea,
    // A deployment connected to the git host pulls from it and pushes to it (git-host builds on the data model).
    configure(dataModelArea, { repositoriesDir: options.repositoriesDir, upstreamOf: (row) => later(gitHostArea).upstreams.of(row) }),
    envVarsArea,
    tokensArea,
    dataApiArea,
    dbtSyncArea,
    workloadIdentityArea,
    configure(embedSessionsArea, {
      embedUserLimit,
      exchangePerIpPerMinute: options.embedExchangePerIpPerMinute ?? 120,
      tokenSeconds: options.embedTokenLifetimeMs === undefined ? undefined : Math.max(1, Math.round(options.embedTokenLifetimeMs / 1000)),
    }),
    configure(embedPageArea, { pageDir: options.embedPageDir, perIpPerMinute: options.embedExchangePerIpPerMinute ?? 120 }),
    chartsArea,
    configure(pythonAnalysisArea, { python: options.python }),
    configure(embedTenantsArea, { embedUserLimit }),
    configure(oauthIntegrationsArea, { tokenRefresh: options.tokenRefresh }),
    accountArea,
    configure(aiSettingsArea, { serverProvider: options.aiProvider ?? null, outbound: options.outbound }),
    usageAnalyticsArea,
    oauthArea,
    configure(notificationsArea, {
      embedUserLimit,
      mail: options.notificationMail,
      tickMs: options.notificationsTickMs,
      summaryTimeoutMs: options.outbound?.timeoutMs,
    }),
    identityProviderArea,
    gitHostArea,
    configure(dashboardExportsArea, { fontsDir: options.render?.fontsDir, exportsPerIdentity: options.render?.exportsPerIdentity }),
    // Scheduled tasks run as their owners, through the answering loop, and their answers are mailed
    // with notifications' mailer (the one SMTP transport of the process).
    wire(agentsArea, (use) => ({
      callerFor: callerFor(store, platform.tenantCache, later),
      mailer: use(notificationsArea).mailer,
    })),
    // Mentions are mailed with notifications' mailer too.
    wire(dashboardCommentsArea, (use) => ({ mailer: use(notificationsArea).mailer })),
    // Report deliveries mail through the same transport.
    wire(reportDeliveriesArea, (use) => ({ mailer: use(notificationsArea).mailer, maxRows: options.reportDeliveryMaxRows })),
  ] as const;
}

/** The shared services and every area, built once per app over one store. Routes share them. */
export function createServices(store: Store, options: ServiceOptions) {
  const platform = createPlatform(store, options);
  let built: Areas<ReturnType<typeof listAreas>> | null = null;
  // For wiring that goes against the build order: called once every area is built, never while one is.
  const later: Use = (module) => {
    if (built === null) throw new Error(`The area ${module.name} was asked for before every area was built.`);
    return built.use(module);
  };
  const areas = new Areas(platform, listAreas(store, options, later, platform));
  built = areas;
  const { secrets, signing, jobs, audit, outbound, runtime, tenantCache } = platform;
  const services = { secrets, signing, jobs, audit, outbound, runtime, tenantCache, ...areas.services() };
  return { platform, areas: areas.all, services };
}
export type Services = ReturnType<typeof createServices>['services'];
