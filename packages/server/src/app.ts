import { embedSettings } from './areas/account/embed-settings.js';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Fastify, { LogController, type FastifyInstance, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { AccessContext } from './access/access.js';
import { apiKeysRoutes } from './areas/api-keys/api-keys.routes.js';
import { apiKeySchemas } from './areas/api-keys/api-keys.schemas.js';
import type { LastUsedRecorder } from './areas/api-keys/last-used.js';
import { deploymentsRoutes } from './areas/deployments/deployments.routes.js';
import { setupRoutes, setupSchemas } from './areas/deployments/setup.routes.js';
import { deploymentSchemas } from './areas/deployments/deployments.schemas.js';
import { envVarsRoutes } from './areas/env-vars/env-vars.routes.js';
import { envVarSchemas } from './areas/env-vars/env-vars.schemas.js';
import { tokensRoutes } from './areas/tokens/tokens.routes.js';
import { tokenSchemas } from './areas/tokens/tokens.schemas.js';
import { podSchemas, podsRoutes } from './areas/deployments/pods.routes.js';
import { dataApiRoutes, dataApiToken } from './areas/data-api/data-api.routes.js';
import { reportRunsRoutes } from './areas/reports/report-runs.js';
import { placementsRoutes } from './areas/reports/placements.routes.js';
import { placementSchemas } from './areas/reports/placements.schemas.js';
import { embedSessionsRoutes } from './areas/embed-sessions/embed-sessions.routes.js';
import { embedSessionSchemas } from './areas/embed-sessions/embed-sessions.schemas.js';
import { embedDashboardRoutes } from './areas/embed-sessions/embed-dashboards.js';
import { oauthIntegrationsRoutes } from './areas/oauth-integrations/oauth-integrations.routes.js';
import { oauthIntegrationSchemas } from './areas/oauth-integrations/oauth-integrations.schemas.js';
import { userOAuthTokensRoutes } from './areas/oauth-integrations/user-oauth-tokens.routes.js';
import { takeoverMessage } from './jobs/index.js';
import type { OutboundOptions } from './outbound/index.js';
import type { NotificationMailOptions } from './areas/notifications/deliver.js';
import type { PythonSandbox, PythonSandboxOptions } from './python/sandbox.js';
import { pythonRunsRoutes } from './areas/python-analysis/python-runs.routes.js';
import { pythonRunSchemas } from './areas/python-analysis/python-runs.schemas.js';
import { hashApiKey, hashesEqual, isApiKeyFormat } from './areas/api-keys/key-format.js';
import { findLiveKeyByHash } from './areas/api-keys/api-keys.store.js';
import { EMBED_TOKEN_TYPE } from './areas/embed-sessions/embed-claims.js';
import { hashOf } from './areas/oauth/oauth.adapter.js';
import { findLiveAccessToken, isAccessTokenFormat } from './areas/oauth/access-tokens.store.js';
import { processDriver, type RuntimeOptions } from './runtime/index.js';
import { RUNTIME_ENTRY } from './semantic-layer/entry.js';
import { groupsRoutes } from './areas/groups/groups.routes.js';
import { embedTenantsRoutes } from './areas/embed-tenants/embed-tenants.routes.js';
import { embedTenantSchemas } from './areas/embed-tenants/embed-tenants.schemas.js';
import { embedGroupsRoutes } from './areas/embed-tenants/embed-groups.routes.js';
import { embedGroupSchemas } from './areas/embed-tenants/embed-groups.schemas.js';
import { embedAccessRoutes } from './areas/embed-tenants/embed-access.routes.js';
import { embedAccessSchemas } from './areas/embed-tenants/embed-access.schemas.js';
import { groupSchemas } from './areas/groups/groups.schemas.js';
import { policiesRoutes } from './areas/policies/policies.routes.js';
import { policySchemas } from './areas/policies/policies.schemas.js';
import { scimRoutes } from './areas/scim/scim.routes.js';
import { scimSchemas } from './areas/scim/scim.schemas.js';
import { scimProblemDialect } from './areas/scim/scim.errors.js';
import { dataApiProblemDialect } from './areas/data-api/data-api.errors.js';
import { scimBaseUrl } from './areas/scim/scim.base-url.js';
import { tenantOrigin } from './areas/tenants/tenant-origin.js';
import { DEFAULT_CATALOG, type Catalog } from './areas/deployments/catalog.js';
import { userAttributesRoutes } from './areas/user-attributes/user-attributes.routes.js';
import { oidcTokenConfigsRoutes } from './areas/workload-identity/oidc-token-configs.routes.js';
import { oidcTokenConfigSchemas } from './areas/workload-identity/oidc-token-configs.schemas.js';
import { userAttributeSchemas } from './areas/user-attributes/user-attributes.schemas.js';
import { usersRoutes } from './areas/users/users.routes.js';
import { userSchemas } from './areas/users/users.schemas.js';
import { contentSchemas } from './areas/workspace/content.schemas.js';
import { folderSchemas } from './areas/workspace/folders.schemas.js';
import { listingSchemas } from './areas/workspace/listing.schemas.js';
import { foldersRoutes } from './areas/workspace/folders.routes.js';
import { workspaceRoutes } from './areas/workspace/workspace.routes.js';
import { workspaceSchemas } from './areas/workspace/workspace.schemas.js';
import { workbooksRoutes } from './areas/workbooks/workbooks.routes.js';
import { reportsRoutes } from './areas/reports/reports.routes.js';
import { dashboardsRoutes } from './areas/dashboards/dashboards.routes.js';
import { dashboardSchemas } from './areas/dashboards/dashboards.schemas.js';
import { commitsRoutes } from './areas/data-model/commits.routes.js';
import { gitHttpRoutes } from './areas/data-model/git-http.routes.js';
import { filesRoutes } from './areas/data-model/files.routes.js';
import { branchesRoutes } from './areas/data-model/branches.routes.js';
import { dataModelSchemas } from './areas/data-model/data-model.schemas.js';
import { buildsRoutes } from './areas/data-model/builds.routes.js';
import { buildSchemas } from './areas/data-model/builds.schemas.js';
import { uploadsRoutes } from './areas/data-model/uploads.routes.js';
import { uploadSchemas } from './areas/data-model/uploads.schemas.js';
import { commitSchemas } from './areas/data-model/commits.schemas.js';
import { reportSchemas } from './areas/reports/reports.schemas.js';
import { dbtSyncSettingsRoutes } from './areas/dbt-sync/settings.routes.js';
import { dbtSyncSettingsSchemas } from './areas/dbt-sync/settings.schemas.js';
import { dbtSyncRoutes } from './areas/dbt-sync/runs.routes.js';
import { dbtSyncRunSchemas } from './areas/dbt-sync/runs.schemas.js';
import type { Store } from './db/database.js';
import { checkKeyScope } from './access/key-scope.js';
import { sqlApiListener, type SqlApiListener } from './areas/sql-api/sql-api.server.js';
import { sqlApiService } from './areas/sql-api/sql-api.service.js';
import { authenticator, checkPublicRoute } from './http/auth.js';
import { installPageSerializer } from './http/page-serializer.js';
import { installSerializers } from './http/serializers.js';
import { installAccessLog } from './http/access-log.js';
import { installErrorHandler, sendProblem } from './http/error-handler.js';
import { DEFAULT_BODY_LIMIT, installBodyRules } from './http/body.js';
import { installInputGuard } from './http/input-guard.js';
import { installNotFound } from './http/not-found.js';
import { installOpenApi } from './http/openapi.js';
import { installRateLimit } from './http/rate-limit.js';
import { healthRoutes } from './http/health.routes.js';
import { jwksRoutes, type WorkloadIssuer } from './http/jwks.routes.js';
import { tenantSettings } from './areas/account/tenant-settings.js';
import { DEFAULT_TIMEOUTS, fastifyTimeoutOptions, installTimeouts, type Timeouts } from './http/timeouts.js';
import './http/request-context.js';
import { sharedSchemas } from './shared/schemas.js';
import { specRoutes } from './http/spec.routes.js';
import { referenceRoutes } from './http/reference.routes.js';
import { refuseRepeatedHost, tenantResolver, type Tenant } from './http/tenant.js';
import { findTenantByHost, findTenantBySlug } from './areas/tenants/tenants.store.js';
import { DEFAULT_TENANT_SLUG } from './areas/tenants/tenants.service.js';
import { installCors } from './http/cors.js';
import { installValidators } from './http/validation.js';
import { installRequestMetrics } from './metrics/http-hooks.js';
import type { Metrics } from './metrics/metrics.js';
import { createServices, type Services } from './services.js';
import { ApiError } from './shared/problems.js';
import { Secrets } from './secrets/index.js';
import { accountRoutes } from './areas/account/account.routes.js';
import { embedSettingsSchemas } from './areas/account/embed-settings.schemas.js';
import { usageAnalyticsSchemas } from './areas/usage-analytics/usage-analytics.schemas.js';
import { usageAnalyticsRoutes } from './areas/usage-analytics/usage-analytics.routes.js';
import { tenantSettingsSchemas } from './areas/account/tenant-settings.schemas.js';
import { auditEventSchemas } from './areas/account/audit-events.schemas.js';
import { appConfigSchemas } from './areas/account/app-config.schemas.js';
import { dashboardControlSchemas } from './areas/dashboards/controls.schemas.js';
import { dashboardExportSchemas } from './areas/dashboard-exports/exports.schemas.js';
import { dashboardExportsRoutes } from './areas/dashboard-exports/exports.routes.js';
import { installAuditHook } from './audit/hook.js';
import { oauthMount } from './areas/oauth/oauth.mount.js';
import { oauthRoutes } from './areas/oauth/oauth.routes.js';
import { oauthSchemas } from './areas/oauth/oauth.schemas.js';
import { oauthClientSchemas } from './areas/oauth/oauth-clients.schemas.js';
import { notificationsRoutes } from './areas/notifications/notifications.routes.js';
import { notificationSchemas } from './areas/notifications/notifications.schemas.js';
import { identityProviderRoutes } from './areas/identity-provider/identity-provider.routes.js';
import { identityProviderSchemas } from './areas/identity-provider/identity-provider.schemas.js';
import { gitHostRoutes } from './areas/git-host/git-host.routes.js';
import { gitHostSchemas } from './areas/git-host/git-host.schemas.js';

export interface AppOptions {
  store: Store;
  /**
   * Where deployments' git repositories live (REPOSITORIES_DIR). Absent: a directory of this app's
   * own, removed when it closes (tests and scripts).
   */
  repositoriesDir?: string;
  /**
   * Start this process's background-job worker with the app (default), or only when the app
   * first queues a job (tests: an idle worker's polls would show among the statements a test
   * counts). A server starts it with the app, so it also takes over jobs of processes that died.
   */
  startJobs?: 'with-app' | 'on-first-job';
  /** Runtime versions and regions offered (RUNTIME_VERSIONS, REGIONS); absent: the built-in catalog. */
  catalog?: Catalog;
  /**
   * Deployments' runtimes: `process` runs pods as child processes listening on `host`; `none` or
   * absent runs none (tests that do not need pods, API-only processes). Timings default as in
   * runtime/supervisor.ts.
   */
  /** `entry`: the runtime's program (default: the one beside this build, `semantic-layer/main.js`, or `main.ts` from the sources). */
  runtime?: { driver: 'process' | 'none'; host?: string; entry?: string } & Partial<Omit<RuntimeOptions, 'owner'>>;
  /** The server's own PostgreSQL URL (DATABASE_URL): no deployment's data source may be a database of its cluster. */
  databaseUrl?: string | null;
  /** Heartbeat and takeover times of background jobs (JOBS_HEARTBEAT_MS, JOBS_STALE_AFTER_MS); absent: 5 s and 30 s. */
  jobs?: { heartbeatMs: number; staleAfterMs: number };
  /**
   * The background refresh of user OAuth tokens (OAUTH_TOKEN_REFRESH_*): how often each process
   * scans (0: never; absent: every minute; it runs only where the jobs start with the app), how
   * long before expiry a token is refreshed, and the retry delay after a passing failure (ms).
   */
  oauthTokenRefresh?: { scanMs?: number; leadMs?: number; retryMs?: number };
  baseDomain: string | null;
  logger?: FastifyServerOptions['logger'];
  https?: { key: string | Buffer; cert: string | Buffer } | null;
  /**
   * The SQL API (docs/sql-api.md): the PostgreSQL protocol on its own port (SQL_API_PORT; 0 picks
   * one), SSL offered with the HTTPS certificate; `app.sqlApi.listen()` opens it. Absent or null: off.
   */
  sqlApi?: { port: number; host: string; maxConnections?: number; maxCatalogs?: number } | null;
  /** How often coalesced `lastUsedAt` values are written (ms). */
  lastUsedFlushMs?: number;
  /** How long a Host -> tenant answer is cached (ms). */
  tenantCacheMs?: number;
  /** How long a deployment's folders must stay unchanged before its folder tree is loaded (ms; default 1000). */
  folderTreeSettleMs?: number;
  /** The most embed users an account may hold (EMBED_USER_LIMIT); absent: 10,000 (reference 4.0). */
  embedUserLimit?: number;
  /** Requests per minute per API key; 0 or absent turns limiting off. */
  rateLimitPerMinute?: number;
  /** Requests per minute per client address on public routes that declare no budget; 0 or absent: off. */
  rateLimitPerIpPerMinute?: number;
  /** Rate-limit counters in this Redis, shared with every process using it; absent: in memory. */
  redisUrl?: string | null;
  /** Prefix of the rate limiter's Redis keys (tests use one per run). */
  redisKeyPrefix?: string;
  /** Slow clients are cut off after these (see http/timeouts.ts); absent values take the defaults. */
  timeouts?: Partial<Timeouts>;
  /** Browser origins allowed to call the API (`*` for any); empty or absent sends no CORS headers. The embed routes follow each tenant's embed settings instead. */
  corsOrigins?: string[];
  /** Embed session exchanges a minute per client address (EMBED_EXCHANGE_PER_IP_PER_MINUTE); absent: 120; 0: unlimited. */
  embedExchangePerIpPerMinute?: number;

  /**
   * Origin (`https://host[:port]`) of the absolute URLs the server builds (SCIM `meta.location`,
   * `Location`) in single-tenant mode, and the port of tenant domains; never taken from a request
   * header. Absent: `https://localhost:<bound port>`.
   */
  publicUrl?: string;
  /**
   * Answer 500 (and log) when a route answers a problem code its OpenAPI responses do not list.
   * The test harness turns it on, so every test also checks the published error codes.
   */
  strictProblemCodes?: boolean;
  /** Prometheus metrics of this app and its store (the store's `queryLog` must be this one's); absent or null: none. */
  metrics?: Metrics | null;
  /**
   * The keys values are encrypted with at rest, checked against the store (server.ts). Absent: a
   * key of this app's own, so its values are unreadable once it closes (tests and scripts).
   */
  secrets?: Secrets;
  /** Calls to other servers (OUTBOUND_ALLOW_PRIVATE, OUTBOUND_TIMEOUT_MS); absent: no private address, 10 s. */
  outbound?: OutboundOptions;
  /** The clock of rules that expire (OAuth states, token refresh, signed tokens, embed sessions) and of notifications' schedules; tests move it. Absent: the system's. */
  /** Python analysis of embedded dashboards (PYTHON_*); absent: the defaults. The pool loads on the first run, not at start (most processes never run Python). */
  python?: PythonSandboxOptions & { cacheMs: number };
  /** The clock of rules that expire (OAuth states, token refresh, signed tokens, embed sessions); tests move it. Absent: the system's. */
  now?: () => Date;
  /** How often notifications' due occurrences are looked for (NOTIFICATIONS_TICK_MS); absent: 10 s. The loop starts with the jobs worker. */
  notificationsTickMs?: number;
  /** Dashboard renders (RENDER_FONTS_DIR, DASHBOARD_EXPORTS_PER_IDENTITY); absent: Debian's DejaVu directory, 3 exports at once per identity. */
  render?: { fontsDir?: string; exportsPerIdentity?: number };
  /** How notifications are mailed (SMTP_*, NOTIFICATION_SEND_ATTEMPTS, NOTIFICATION_RETRY_BASE_MS); absent: no SMTP, nothing is mailed. */
  notificationMail?: NotificationMailOptions;
}

/** `python`: the app's Python sandbox (its runs and workers, for shutdown and tests). */
export type App = FastifyInstance & { services: Services; lastUsed: LastUsedRecorder; python: PythonSandbox; sqlApi: SqlApiListener | null };

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;
/** Unknown paths under these prefixes still need a credential, so probing them reveals nothing. */
const API_PATH = /^\/(api|build\/api)\//;

/**
 * Fail closed: every route the router matched needs a tenant and a credential unless it is
 * marked public. The raw URL is never the test: the router decodes `%61pi` to `api`, a regex would not.
 */
function needsCredential(request: FastifyRequest): boolean {
  if (request.routeOptions.url !== undefined) return !request.routeOptions.config?.public;
  let path = request.url.split('?')[0] ?? '';
  try {
    path = decodeURIComponent(path);
  } catch {
    // an undecodable path matches no route; the prefix test on the raw text decides
  }
  return API_PATH.test(path);
}

/** The configured public origin, else this server on localhost at the port it is bound to. */
function publicOrigin(app: FastifyInstance, configured: string | undefined): URL {
  if (configured !== undefined) return new URL(configured);
  const address = app.server.address();
  return new URL(typeof address === 'object' && address !== null ? `https://localhost:${address.port}` : 'https://localhost');
}

/**
 * `publicOrigin`, built once and again each time the server starts or stops listening (the bound
 * port is part of the default): it is read on every data-API request and deployment URL, and
 * asking the socket for its address and parsing a URL each time showed in their profiles.
 * Callers only read the URL.
 */
function publicOriginReader(app: FastifyInstance, configured: string | undefined): () => URL {
  let known: URL | null = null;
  const forget = () => {
    known = null;
  };
  app.server.on('listening', forget);
  app.server.on('close', forget);
  return () => (known ??= publicOrigin(app, configured));
}

function runtimeTimings(given: AppOptions['runtime']): Partial<RuntimeOptions> {
  if (!given) return {};
  const { driver: _driver, host: _host, entry: _entry, ...timings } = given;
  return Object.fromEntries(Object.entries(timings).filter(([, v]) => v !== undefined));
}

/** Builds the Fastify app over an open, migrated store. It does not listen; main.ts and tests do. */
export async function buildApp(options: AppOptions): Promise<App> {
  const { store } = options;
  const timeouts = { ...DEFAULT_TIMEOUTS, ...options.timeouts };
  const app = Fastify({
    logger: options.logger ?? false,
    // One line per request instead of two: http/access-log.ts.
    logController: new LogController({ disableRequestLogging: true }),
    // A TLS handshake gets no longer than the headers that follow it.
    ...(options.https ? { https: { ...options.https, handshakeTimeout: timeouts.headersMs } } : {}),
    ...fastifyTimeoutOptions(timeouts),
    routerOptions: { ignoreTrailingSlash: true },
    // Per route: Fastify's `bodyLimit` route option (see http/body.ts).
    bodyLimit: DEFAULT_BODY_LIMIT,
    // A client may pass its own request id to correlate logs; anything odd is replaced.
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    // Errors raised before routing (an undecodable URL) get the same problem details as the rest.
    frameworkErrors: (error, request, reply) => {
      reply.header('x-request-id', request.id);
      // A reply is thenable; this handler's result is not awaited.
      void sendProblem(request, reply, 'VALIDATION_FAILED', `The request URL is malformed: ${error.message}`);
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  if (options.metrics) {
    // First, so every later hook (the credential check included) is counted and timed.
    installRequestMetrics(app, options.metrics);
    options.metrics.observeStore(store);
  }
  installTimeouts(app, timeouts);
  installAccessLog(app);
  const ownRepositories = options.repositoriesDir === undefined ? fs.mkdtempSync(path.join(os.tmpdir(), 'mapi-repositories-')) : null;
  const publicUrl = publicOriginReader(app, options.publicUrl);
  const originOf = tenantOrigin(store.db, { baseDomain: options.baseDomain, publicUrl });
  let sqlApi: SqlApiListener | null = null;
  const services = createServices(store, {
    repositoriesDir: options.repositoriesDir ?? ownRepositories ?? '',
    secrets: options.secrets ?? Secrets.ephemeral(),
    // A job taken back from a dead process is told in the server log too, not only in the job's own.
    jobs: { ...options.jobs, onTakeover: (takeover) => app.log.warn({ takeover }, takeoverMessage(takeover)) },
    ...(options.oauthTokenRefresh ? { tokenRefresh: options.oauthTokenRefresh } : {}),
    catalog: options.catalog ?? DEFAULT_CATALOG,
    deploymentUrlOf: originOf,
    sqlApiPort: () => sqlApi?.address()?.port ?? null,
    onError: (error, what) => app.log.error({ err: error }, what),
    ownDatabaseUrl: options.databaseUrl ?? null,
    ...(options.embedUserLimit !== undefined ? { embedUserLimit: options.embedUserLimit } : {}),
    runtime: {
      driver:
        options.runtime?.driver === 'process'
          ? processDriver({ entry: options.runtime.entry ?? RUNTIME_ENTRY, host: options.runtime.host ?? '127.0.0.1' })
          : null,
      options: runtimeTimings(options.runtime),
      onError: (error, what) => app.log.error({ err: error }, `runtime: ${what} failed`),
    },
    ...(options.outbound ? { outbound: options.outbound } : {}),
    ...(options.now ? { now: options.now } : {}),
    ...(options.notificationsTickMs !== undefined ? { notificationsTickMs: options.notificationsTickMs } : {}),
    ...(options.render ? { render: options.render } : {}),
    ...(options.notificationMail ? { notificationMail: options.notificationMail } : {}),
    log: { debug: (fields, message) => app.log.debug(fields, message), warn: (fields, message) => app.log.warn(fields, message) },
    ...(options.lastUsedFlushMs !== undefined ? { lastUsedFlushMs: options.lastUsedFlushMs } : {}),
    ...(options.folderTreeSettleMs !== undefined ? { folderTreeSettleMs: options.folderTreeSettleMs } : {}),
    ...(options.python ? { python: options.python } : {}),
  });
  const { lastUsed, tenantCache, folderTrees, python } = services;
  const resolveTenant = tenantResolver(
    {
      byHost: (host) => findTenantByHost(store.db, host),
      bySlug: (slug) => findTenantBySlug(store.db, slug),
      byDefault: () => findTenantBySlug(store.db, DEFAULT_TENANT_SLUG),
    },
    options.baseDomain,
    options.tenantCacheMs,
  );
  const authenticate = authenticator(
    {
      apiKeys: {
        isFormat: isApiKeyFormat,
        hash: hashApiKey,
        find: (tenantId, hash) => findLiveKeyByHash(store.db, tenantId, hash),
        equal: hashesEqual,
        touch: (id, at) => lastUsed.touch(id, at),
      },
      accessTokens: { isFormat: isAccessTokenFormat, cacheKey: hashOf, find: (tenantId, token) => findLiveAccessToken(store.db, tenantId, token) },
      embedTokenType: EMBED_TOKEN_TYPE,
    },
    tenantCache,
  );

  // For the OAuth callbacks, which need no credential: one they do carry must be valid (and the state's user's).
  const identifyOptional = async (request: FastifyRequest, tenant: Tenant) =>
    request.headers.authorization === undefined ? null : (await authenticate(request, tenant)).actor.userId;

  const schemas = [
    ...sharedSchemas,
    ...apiKeySchemas,
    ...userSchemas,
    ...groupSchemas,
    ...deploymentSchemas,
    ...policySchemas,
    ...scimSchemas,
    ...userAttributeSchemas,
    ...contentSchemas,
    ...workspaceSchemas,
    ...folderSchemas,
    ...placementSchemas,
    ...reportSchemas,
    ...listingSchemas,
    ...commitSchemas,
    ...dataModelSchemas,
    ...buildSchemas,
    ...uploadSchemas,
    ...setupSchemas,
    ...envVarSchemas,
    ...tokenSchemas,
    ...podSchemas,
    ...oidcTokenConfigSchemas,
    ...embedSettingsSchemas,
    ...usageAnalyticsSchemas,
    ...embedSessionSchemas,
    ...pythonRunSchemas,
    ...dashboardSchemas,
    ...embedTenantSchemas,
    ...embedGroupSchemas,
    ...embedAccessSchemas,
    ...dbtSyncSettingsSchemas,
    ...dbtSyncRunSchemas,
    ...oauthIntegrationSchemas,
    ...tenantSettingsSchemas,
    ...auditEventSchemas,
    ...appConfigSchemas,
    ...dashboardControlSchemas,
    ...dashboardExportSchemas,
    ...oauthSchemas,
    ...oauthClientSchemas,
    ...notificationSchemas,
    ...identityProviderSchemas,
    ...gitHostSchemas,
  ];
  for (const schema of schemas) app.addSchema(schema);
  const serializerFor = installSerializers(app);
  installValidators(app, schemas);
  installErrorHandler(app, [scimProblemDialect, dataApiProblemDialect], { strictProblemCodes: options.strictProblemCodes ?? false });
  installNotFound(app);
  await installOpenApi(app);
  installBodyRules(app);
  installPageSerializer(app, serializerFor);
  installInputGuard(app);

  app.decorateRequest('tenant', null as never);
  app.decorateRequest('caller', null as never);
  app.decorateRequest('embed', null);
  installAuditHook(app, services.audit);

  // Before the credential hook: preflights carry no credential (see cors.ts).
  await installCors(app, {
    origins: options.corsOrigins ?? [],
    embedOrigins: async (request) => (await embedSettings(store.db, (await resolveTenant(request)).id)).allowedOrigins,
  });
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    refuseRepeatedHost(request);
    if (!needsCredential(request)) return;
    try {
      request.tenant = await resolveTenant(request);
      if (request.routeOptions.config?.credential === 'data-api') {
        const token = dataApiToken(request.headers.authorization);
        if (token === undefined) {
          throw new ApiError(
            'UNAUTHENTICATED',
            'Send a data-API token as `Authorization: <token>` or `Authorization: Bearer <token>`, or an API key as `Bearer <key>`.',
            {
              headers: { 'www-authenticate': 'Bearer realm="mapi-data-api"' },
            },
          );
        }
        // A data-API token or an embed token (JWTs) is verified by its route, against the
        // environment it addresses; an API key or an OAuth access token is a REST credential like
        // anywhere else.
        if (!isApiKeyFormat(token) && !isAccessTokenFormat(token)) return;
      }
      if (request.routeOptions.config?.credential === 'embed') {
        const bearer = /^bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '')?.[1];
        if (bearer !== undefined && !isApiKeyFormat(bearer) && !isAccessTokenFormat(bearer)) {
          request.embed = await services.embedSessions.verify(request.tenant, bearer, await tenantCache.snapshot(request.tenant.id));
          return;
        }
      }
      const { actor, snapshot } = await authenticate(request, request.tenant);
      // Path parameters are known before the body is read: a key scoped elsewhere gets its 403
      // whatever the body holds (spec, Authentication 4).
      checkKeyScope(actor.scope, request.params);
      const access = new AccessContext(store.db, actor.tenantId, { userId: actor.userId, role: actor.role }, actor.scope, snapshot);
      request.caller = { actor, tenant: request.tenant, access, log: request.log, snapshot, folderTrees, requestId: request.id };
    } catch (error) {
      // Refused from the headers alone: answer and close, rather than wait for a body that may
      // trickle in for as long as the body timeout allows.
      reply.header('connection', 'close');
      throw error;
    }
  });

  // Before any route is added (and before the rate limiter rewrites public routes' budgets).
  app.addHook('onRoute', (route) => checkPublicRoute(route as Parameters<typeof checkPublicRoute>[0]));
  await installRateLimit(app, {
    perKeyPerMinute: options.rateLimitPerMinute ?? 0,
    perIpPerMinute: options.rateLimitPerIpPerMinute ?? 0,
    redisUrl: options.redisUrl ?? null,
    ...(options.redisKeyPrefix === undefined ? {} : { redisKeyPrefix: options.redisKeyPrefix }),
  });
  await app.register(healthRoutes(store));
  // The tenant is the OIDC issuer of its workload tokens only while its `oidcEnabled` is on (reference 5.14).
  // Read through the tenant's snapshot: a settings write bumps auth_version, so switching it off is
  // seen by every process on its next request, and unauthenticated discovery traffic costs one statement.
  const workloadIssuer: WorkloadIssuer = async (tenant) => {
    if (!(await tenantSettings(store.db, tenant.id, await tenantCache.snapshot(tenant.id))).oidcEnabled) {
      throw new ApiError(
        'ROUTE_NOT_FOUND',
        'This tenant is not an OIDC issuer: an admin turns workload identity on with PUT /api/v1/tenant/settings {"oidcEnabled": true}.',
      );
    }
    return originOf(tenant);
  };
  await app.register(jwksRoutes(services.signing, resolveTenant, workloadIssuer));
  await app.register(oauthMount(services.oauthProviders, resolveTenant, services.oauthSignIn));
  await app.register(specRoutes);
  await app.register(referenceRoutes);
  await app.register(apiKeysRoutes(services.apiKeys));
  await app.register(usersRoutes(services.users));
  await app.register(groupsRoutes(services.groups));
  await app.register(scimRoutes(services.scim, scimBaseUrl(store.db, { baseDomain: options.baseDomain, publicUrl })));
  await app.register(userAttributesRoutes(services.userAttributes));
  await app.register(deploymentsRoutes(services.deployments));
  await app.register(setupRoutes(services.setup, services.environments));
  await app.register(policiesRoutes(services.policies));
  await app.register(foldersRoutes(services.folders));
  await app.register(workspaceRoutes(services.workspace));
  await app.register(workbooksRoutes(services.workbooks));
  await app.register(reportsRoutes(services.reports));
  await app.register(dashboardsRoutes(services.dashboards));
  await app.register(commitsRoutes(services.commits));
  await app.register(gitHttpRoutes(services.gitHttp));
  await app.register(filesRoutes(services.files));
  await app.register(branchesRoutes(services.devMode, services.branches));
  await app.register(buildsRoutes(services.builds, services.validation));
  await app.register(uploadsRoutes(services.uploads));
  await app.register(envVarsRoutes(services.envVars));
  await app.register(tokensRoutes(services.tokens));
  await app.register(podsRoutes(services.pods));
  await app.register(
    dataApiRoutes(services.dataApi, async (tenant, token) => services.embedSessions.verify(tenant, token, await tenantCache.snapshot(tenant.id))),
  );
  await app.register(reportRunsRoutes(services.reportRuns));
  await app.register(placementsRoutes(services.placements));
  await app.register(dbtSyncSettingsRoutes(services.dbtSyncSettings));
  await app.register(dbtSyncRoutes(services.dbtSync));
  await app.register(oidcTokenConfigsRoutes(services.oidcTokenConfigs));
  await app.register(embedDashboardRoutes(services.embedDashboards));
  await app.register(pythonRunsRoutes(services.pythonRuns));
  await app.register(
    embedSessionsRoutes(services.embedSessions, {
      signing: services.signing,
      resolveTenant,
      exchangePerIpPerMinute: options.embedExchangePerIpPerMinute ?? 120,
    }),
  );
  await app.register(embedTenantsRoutes(services.embedTenants));
  await app.register(embedGroupsRoutes(services.embedGroups));
  await app.register(embedAccessRoutes(services.embedAccess));
  await app.register(
    oauthIntegrationsRoutes(services.oauthIntegrations, services.userOAuthTokens, {
      resolveTenant,
      identify: identifyOptional,
    }),
  );
  await app.register(userOAuthTokensRoutes(services.userOAuthTokens));
  await app.register(
    accountRoutes({
      embedSettings: services.embedSettings,
      tenantSettings: services.tenantSettings,
      auditEvents: services.auditEvents,
      appConfig: services.appConfig,
      userSettings: services.userSettings,
    }),
  );
  await app.register(usageAnalyticsRoutes(services.usageAnalytics));
  await app.register(oauthRoutes(services.oauth, services.oauthClients));
  await app.register(notificationsRoutes(services.notifications));
  await app.register(identityProviderRoutes(services.identityProvider));
  await app.register(
    gitHostRoutes(services.gitHost, services.upstreams, {
      resolveTenant,
      identify: identifyOptional,
    }),
  );
  await app.register(dashboardExportsRoutes(services.dashboardExports));

  // Background jobs (builds) run in every process: on PostgreSQL any of them may take a job.
  if (options.startJobs !== 'on-first-job') {
    app.addHook('onReady', () => services.jobs.start());
    // Every process scans for tokens to refresh; the claims let one of them refresh each.
    app.addHook('onReady', async () => services.tokenRefresh.start(options.oauthTokenRefresh?.scanMs ?? 60_000));
    // Notifications' due-time loop runs with the worker (tests drive it with `tick()` instead).
    app.addHook('onReady', async () => services.notificationScheduler.start());
  }
  if (options.sqlApi) {
    const sqlService = sqlApiService(store, services.dataApi, {
      baseDomain: options.baseDomain,
      // An API key as the password: checked as the REST routes check it, scope included.
      authenticateKey: async (tenant, key, deploymentId) => {
        const request = { headers: { authorization: `Bearer ${key}` }, routeOptions: { config: {} }, url: '/sql-api' } as unknown as FastifyRequest;
        const { actor, snapshot } = await authenticate(request, tenant);
        checkKeyScope(actor.scope, { deploymentId });
        const access = new AccessContext(store.db, actor.tenantId, { userId: actor.userId, role: actor.role }, actor.scope, snapshot);
        return { actor, tenant, access, log: app.log, snapshot, folderTrees };
      },
    });
    const tls = options.https ? { key: Buffer.from(options.https.key), cert: Buffer.from(options.https.cert) } : null;
    // Listening is the starter's (server.ts, tests), after the HTTP port, as for that port.
    sqlApi = sqlApiListener(sqlService, { ...options.sqlApi, tls, log: app.log });
  }
  // Pods start once the app is ready, and stop (handing their environments to other processes) as it closes.
  app.addHook('onReady', async () => services.runtime.start());
  // Before the server waits for requests in flight: busy Python runs end now, so their requests
  // answer at once rather than after PYTHON_TIMEOUT_MS.
  app.addHook('preClose', async () => {
    await python.close();
  });
  app.addHook('onClose', async () => {
    await sqlApi?.close();
    await services.notificationScheduler.stop();
    await services.runtime.close();
    await services.tokenRefresh.stop();
    await services.jobs.stop();
    services.mailer?.close();
    await services.summariser?.close();
    await services.outbound.close();
    await python.close();
    if (ownRepositories !== null) fs.rmSync(ownRepositories, { recursive: true, force: true });
    await lastUsed.close();
  });
  await app.ready();
  return Object.assign(app, { services, lastUsed, python, sqlApi }) as unknown as App;
}
