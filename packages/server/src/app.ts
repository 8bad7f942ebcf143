import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Fastify, { LogController, type FastifyInstance, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { AccessContext } from './access/access.js';
import { embedSettings } from './areas/account/index.js';
import type { LastUsedRecorder } from './areas/api-keys/index.js';
import { isApiKeyFormat } from './areas/api-keys/index.js';
import { DEFAULT_CATALOG, type Catalog } from './areas/deployments/index.js';
import type { NotificationMailOptions } from './areas/notifications/index.js';
import { isAccessTokenFormat } from './areas/oauth/index.js';
import { sqlApiListener, sqlApiService, type SqlApiListener } from './areas/sql-api/index.js';
import { tenantOrigin } from './areas/tenants/index.js';
import { checkKeyScope } from './access/key-scope.js';
import type { Store } from './db/database.js';
import { installAccessLog } from './http/access-log.js';
import { authenticator, checkPublicRoute, type CredentialCheckers } from './http/auth.js';
import { DEFAULT_BODY_LIMIT, installBodyRules } from './http/body.js';
import { installCors } from './http/cors.js';
import { installCredentialCheck } from './http/credential-check.js';
import { installErrorHandler, sendProblem } from './http/error-handler.js';
import { healthRoutes } from './http/health.routes.js';
import { installInputGuard } from './http/input-guard.js';
import { installNotFound } from './http/not-found.js';
import { installOpenApi } from './http/openapi.js';
import { installPageSerializer } from './http/page-serializer.js';
import { installRateLimit } from './http/rate-limit.js';
import { referenceRoutes } from './http/reference.routes.js';
import './http/request-context.js';
import { installSerializers } from './http/serializers.js';
import { specRoutes } from './http/spec.routes.js';
import { tenantResolver, type Tenant } from './http/tenant.js';
import { DEFAULT_TIMEOUTS, fastifyTimeoutOptions, installTimeouts, type Timeouts } from './http/timeouts.js';
import { installValidators } from './http/validation.js';
import { installAuditHook } from './audit/hook.js';
import { takeoverMessage } from './jobs/index.js';
import { installRequestMetrics } from './metrics/http-hooks.js';
import type { Metrics } from './metrics/metrics.js';
import type { OutboundOptions } from './outbound/index.js';
import type { ServerProviderConfig } from './ai/index.js';
import type { RouteContext } from './platform/index.js';
import type { PythonSandbox, PythonSandboxOptions } from './python/sandbox.js';
import { processDriver, type RuntimeOptions } from './runtime/index.js';
import { Secrets } from './secrets/index.js';
import { RUNTIME_ENTRY } from './semantic-layer/entry.js';
import { createServices, type Services } from './services.js';
import { sharedSchemas } from './shared/schemas.js';

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
  jobs?: { heartbeatMs: number; staleAfterMs: number; workerThreads?: number };
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
  /** How long an embed token lives (EMBED_TOKEN_LIFETIME_MS, whole seconds, at least 1 s); absent: 24 hours (reference 4.16). Tests shorten it to see the page renew. */
  embedTokenLifetimeMs?: number;
  /** Where the embedded dashboard page's build is; absent: packages/embed/dist beside this build (tests and scripts point elsewhere). */
  embedPageDir?: string;

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
  /** The operator's default model provider of AI features (AI_PROVIDER_URL, AI_PROVIDER_MODEL, AI_PROVIDER_API_KEY); absent or null: none. */
  aiProvider?: ServerProviderConfig | null;
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
  /** The most rows a report delivery attaches per recipient; absent: 10,000. */
  reportDeliveryMaxRows?: number;
}

/** `python`: the app's Python sandbox (its runs and workers, for shutdown and tests). */
export type App = FastifyInstance & { services: Services; lastUsed: LastUsedRecorder; python: PythonSandbox; sqlApi: SqlApiListener | null };

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

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

/** The credential checks the areas that issue credentials give (api-keys, oauth, embed-sessions); each must be given once. */
function credentialCheckers(given: Array<Partial<CredentialCheckers> | undefined>): CredentialCheckers {
  const merged = Object.assign({}, ...given) as Partial<CredentialCheckers>;
  if (!merged.apiKeys || !merged.accessTokens || merged.embedTokenType === undefined)
    throw new Error('An area issuing credentials is not listed in services.ts.');
  return merged as CredentialCheckers;
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
  const { services, areas, platform } = createServices(store, {
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
    ...(options.embedExchangePerIpPerMinute !== undefined ? { embedExchangePerIpPerMinute: options.embedExchangePerIpPerMinute } : {}),
    ...(options.embedTokenLifetimeMs !== undefined ? { embedTokenLifetimeMs: options.embedTokenLifetimeMs } : {}),
    ...(options.embedPageDir !== undefined ? { embedPageDir: options.embedPageDir } : {}),
    runtime: {
      driver:
        options.runtime?.driver === 'process'
          ? processDriver({ entry: options.runtime.entry ?? RUNTIME_ENTRY, host: options.runtime.host ?? '127.0.0.1' })
          : null,
      options: runtimeTimings(options.runtime),
      onError: (error, what) => app.log.error({ err: error }, `runtime: ${what} failed`),
    },
    ...(options.outbound ? { outbound: options.outbound } : {}),
    ...(options.aiProvider ? { aiProvider: options.aiProvider } : {}),
    ...(options.now ? { now: options.now } : {}),
    ...(options.notificationsTickMs !== undefined ? { notificationsTickMs: options.notificationsTickMs } : {}),
    ...(options.render ? { render: options.render } : {}),
    ...(options.notificationMail ? { notificationMail: options.notificationMail } : {}),
    ...(options.reportDeliveryMaxRows !== undefined ? { reportDeliveryMaxRows: options.reportDeliveryMaxRows } : {}),
    log: { debug: (fields, message) => app.log.debug(fields, message), warn: (fields, message) => app.log.warn(fields, message) },
    ...(options.lastUsedFlushMs !== undefined ? { lastUsedFlushMs: options.lastUsedFlushMs } : {}),
    ...(options.folderTreeSettleMs !== undefined ? { folderTreeSettleMs: options.folderTreeSettleMs } : {}),
    ...(options.python ? { python: options.python } : {}),
  });
  const { tenantCache, folderTrees } = services;
  const resolveTenant = tenantResolver(services.tenantLookup, options.baseDomain, options.tenantCacheMs);
  const authenticate = authenticator(credentialCheckers(areas.map((area) => area.credentials)), tenantCache);
  const callerOf = (log: FastifyRequest['log'], tenant: Tenant, { actor, snapshot }: Awaited<ReturnType<typeof authenticate>>, requestId?: string) => {
    const access = new AccessContext(store.db, actor.tenantId, { userId: actor.userId, role: actor.role }, actor.scope, snapshot);
    return { actor, tenant, access, log, snapshot, folderTrees, ...(requestId === undefined ? {} : { requestId }) };
  };
  const routeContext: RouteContext = {
    resolveTenant,
    // For the OAuth callbacks, which need no credential: one they do carry must be valid (and the state's user's).
    identifyOptional: async (request, tenant) => (request.headers.authorization === undefined ? null : (await authenticate(request, tenant)).actor.userId),
    publicUrl,
    baseDomain: options.baseDomain,
  };

  const schemas = [...sharedSchemas, ...areas.flatMap((area) => area.schemas ?? [])];
  for (const schema of schemas) app.addSchema(schema);
  const serializerFor = installSerializers(app);
  installValidators(app, schemas);
  installErrorHandler(
    app,
    areas.flatMap((area) => area.problemDialects ?? []),
    { strictProblemCodes: options.strictProblemCodes ?? false },
  );
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
  installCredentialCheck(app, {
    resolveTenant,
    authenticate,
    isRestCredential: (token) => isApiKeyFormat(token) || isAccessTokenFormat(token),
    acceptEmbed: async (request, tenant, token) => {
      request.embed = await services.verifyEmbed(tenant, token);
    },
    callerOf: (request, tenant, authenticated) => callerOf(request.log, tenant, authenticated, request.id),
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
  await app.register(specRoutes);
  await app.register(referenceRoutes);
  for (const area of areas) for (const routes of area.routes?.(routeContext) ?? []) await app.register(routes);

  // Background jobs (builds) run in every process: on PostgreSQL any of them may take a job. The
  // areas' schedules (periodic claims they registered with the jobs service) run with the worker;
  // tests start them by hand instead. jobs.stop() ends both.
  if (options.startJobs !== 'on-first-job') {
    app.addHook('onReady', () => services.jobs.start());
    app.addHook('onReady', async () => services.jobs.startSchedules());
  }
  if (options.sqlApi) {
    const sqlService = sqlApiService(store, services.dataApi, {
      baseDomain: options.baseDomain,
      // An API key as the password: checked as the REST routes check it, scope included.
      authenticateKey: async (tenant, key, deploymentId) => {
        const request = { headers: { authorization: `Bearer ${key}` }, routeOptions: { config: {} }, url: '/sql-api' } as unknown as FastifyRequest;
        const authenticated = await authenticate(request, tenant);
        checkKeyScope(authenticated.actor.scope, { deploymentId });
        return callerOf(app.log, tenant, authenticated);
      },
    });
    const tls = options.https ? { key: Buffer.from(options.https.key), cert: Buffer.from(options.https.cert) } : null;
    // Listening is the starter's (server.ts, tests), after the HTTP port, as for that port.
    sqlApi = sqlApiListener(sqlService, { ...options.sqlApi, tls, log: app.log });
  }
  // Pods start once the app is ready, and stop (handing their environments to other processes) as it closes.
  app.addHook('onReady', async () => platform.runtime.start());
  app.addHook('preClose', async () => {
    for (const area of areas) await area.preClose?.();
  });
  app.addHook('onClose', async () => {
    await sqlApi?.close();
    await platform.runtime.close();
    await platform.jobs.stop();
    for (const area of areas) await area.close?.();
    await platform.outbound.close();
    if (ownRepositories !== null) fs.rmSync(ownRepositories, { recursive: true, force: true });
  });
  await app.ready();
  return Object.assign(app, { services, lastUsed: services.lastUsed, python: services.python, sqlApi }) as unknown as App;
}
