import fs from 'node:fs';
import { buildApp, type App } from './app.js';
import { bootstrapDefaultTenant, issueFirstAdminKey, type BootstrapResult } from './areas/tenants/tenants.service.js';
import type { Config } from './config.js';
import { migrate, storeFor, type Store } from './db/database.js';
import { configureLockWaits } from './db/transactions.js';
import { listenMetrics, type MetricsListener } from './metrics/listener.js';
import { Metrics } from './metrics/metrics.js';
import { SecretKeyError } from './secrets/index.js';
import { openSecrets } from './stored-secrets.js';
import { systemClock } from './time.js';
import { firstKeyBanner } from './first-key-banner.js';
import { loadTls } from './tls.js';
import { ensurePrivateDir } from './shared/private-files.js';

export interface RunningServer {
  app: App;
  store: Store;
  url: string;
  /** Where the Prometheus endpoint listens (METRICS_PORT); null when it is off. */
  metricsUrl: string | null;
  close(): Promise<void>;
}

/** A start-up failure the operator can fix, said in one line (main.ts prints it and exits 1). */
export class StartupError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'StartupError';
  }
}

/**
 * Loads TLS, opens the store, migrates, checks the secret keys, bootstraps, and listens over HTTPS; then, and only then,
 * makes and prints the first start's admin key, so a start that fails (port taken, bad
 * certificate) leaves no key behind that nobody saw. Used by main.ts and by tests that need a
 * real listening server.
 */
export async function startServer(config: Config, print: (line: string) => void = (l) => process.stdout.write(`${l}\n`)): Promise<RunningServer> {
  // A start that fails (port taken, bad certificate) leaves no data directory it made: the next
  // start, perhaps with another DATA_DIR, begins from nothing rather than from a half-made one.
  const freshDataDir = !fs.existsSync(config.dataDir);
  try {
    return await start(config, print);
  } catch (error) {
    if (freshDataDir) fs.rmSync(config.dataDir, { recursive: true, force: true });
    throw error;
  }
}

async function start(config: Config, print: (line: string) => void): Promise<RunningServer> {
  const tls = await loadTls(config);
  const metrics = config.metrics === null ? null : new Metrics();
  const store = storeFor(config, metrics?.queryLog);
  configureLockWaits(store, { timeoutMs: config.lockTimeoutMs });
  let app: App | null = null;
  let metricsListener: MetricsListener | null = null;
  try {
    await migrate(store);
    const secrets = await openSecrets(store, config.secretKeys).catch((error: unknown) => {
      throw error instanceof SecretKeyError ? new StartupError(error.message, { cause: error }) : error;
    });
    const boot = await bootstrapDefaultTenant(store, systemClock, config.adminEmail, config.adminApiKey);
    // Where operators put SQLite files that deployments may query (DB_TYPE=sqlite).
    fs.mkdirSync(config.runtime.dataSourcesDir, { recursive: true, mode: 0o700 });
    // The repositories hold every deployment's model: the server's user alone reads them.
    ensurePrivateDir(config.repositoriesDir);
    app = await buildApp({
      store,
      secrets,
      baseDomain: config.baseDomain,
      repositoriesDir: config.repositoriesDir,
      jobs: config.jobs,
      oauthTokenRefresh: config.oauthTokenRefresh,
      notificationsTickMs: config.notificationsTickMs,
      runtime: config.runtime,
      databaseUrl: config.databaseUrl,
      catalog: config.catalog,
      https: { key: tls.key, cert: tls.cert },
      sqlApi: config.sqlApi,
      logger: { level: config.logLevel },
      rateLimitPerMinute: config.rateLimitPerMinute,
      rateLimitPerIpPerMinute: config.rateLimitPerIpPerMinute,
      embedExchangePerIpPerMinute: config.embedExchangePerIpPerMinute,
      embedTokenLifetimeMs: config.embedTokenLifetimeMs,
      redisUrl: config.redisUrl,
      timeouts: config.timeouts,
      corsOrigins: config.corsOrigins,
      folderTreeSettleMs: config.folderTreeSettleMs,
      embedUserLimit: config.embedUserLimit,
      ...(config.publicUrl !== null ? { publicUrl: config.publicUrl } : {}),
      metrics,
      outbound: config.outbound,
      python: config.python,
      render: config.render,
      notificationMail: { smtp: config.smtp, ...config.notificationSends, summariser: config.summariser },
      aiProvider: config.aiProvider,
    });
    if (boot.configuredKeyRevoked)
      app.log.warn('ADMIN_API_KEY names a key that was revoked; it stays revoked. Remove it from the environment or set a new one.');
    if (boot.rotatedKeys > 0) app.log.info(`ADMIN_API_KEY changed: revoked ${boot.rotatedKeys} earlier value(s)`);
    if (boot.adminWarning) app.log.warn(boot.adminWarning);
    const address = await listen(app, config);
    await listenSql(app, config);
    if (metrics !== null && config.metrics !== null) metricsListener = await listenForMetrics(app, metrics, config.metrics);
    // PUBLIC_URL when set: the address clients use; otherwise the one just bound.
    await announceAdminKey(store, boot, config, print, { url: config.publicUrl ?? address, selfSignedCert: tls.selfSigned });
    if (metricsListener !== null) app.log.info(`metrics listening on ${metricsListener.url}`);
    const sql = app.sqlApi?.address();
    if (sql) app.log.info(`SQL API (PostgreSQL protocol) listening on ${sql.host}:${sql.port}`);
    app.log.info({ tls: tls.source, store: store.dialect }, `mapi listening on ${address}`);
    const running = app;
    const runningMetrics = metricsListener;
    return {
      app: running,
      store,
      url: address,
      metricsUrl: runningMetrics?.url ?? null,
      async close() {
        await running.close();
        await runningMetrics?.close();
        await store.close();
      },
    };
  } catch (error) {
    // A failed listen (port taken) leaves a built app: close it so its hooks run and nothing lingers.
    await metricsListener?.close().catch(() => undefined);
    await app?.close().catch(() => undefined);
    await store.close();
    throw error;
  }
}

async function listen(app: App, config: Config): Promise<string> {
  try {
    return await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const where = `port ${config.port} on ${config.host}`;
    if (code === 'EADDRINUSE') {
      throw new StartupError(`${where} is already in use: stop what listens there, or set PORT to a free port (PORT=0 picks one).`, { cause: error });
    }
    if (code === 'EACCES')
      throw new StartupError(`not allowed to listen on ${where}: set PORT to 1024 or above, or run with the right to bind it.`, { cause: error });
    if (code === 'EADDRNOTAVAIL')
      throw new StartupError(`HOST ${config.host} is not an address of this machine: set HOST to one of its addresses (0.0.0.0 for all).`, { cause: error });
    throw error;
  }
}

async function listenSql(app: App, config: Config): Promise<void> {
  if (app.sqlApi === null || config.sqlApi === null) return;
  try {
    await app.sqlApi.listen();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const where = `port ${config.sqlApi.port} on ${config.sqlApi.host}`;
    if (code === 'EADDRINUSE')
      throw new StartupError(`${where} (SQL_API_PORT) is already in use: stop what listens there, or set SQL_API_PORT to a free port different from PORT.`, {
        cause: error,
      });
    if (code === 'EACCES')
      throw new StartupError(`not allowed to listen on ${where}: set SQL_API_PORT to 1024 or above, or run with the right to bind it.`, { cause: error });
    if (code === 'EADDRNOTAVAIL')
      throw new StartupError(`SQL_API_HOST ${config.sqlApi.host} is not an address of this machine: set SQL_API_HOST to one of its addresses.`, {
        cause: error,
      });
    throw error;
  }
}

async function listenForMetrics(app: App, metrics: Metrics, at: { port: number; host: string }): Promise<MetricsListener> {
  try {
    return await listenMetrics(metrics.registry, at.port, at.host, (error) => app.log.error({ err: error }, 'collecting metrics failed'));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const where = `port ${at.port} on ${at.host}`;
    if (code === 'EADDRINUSE')
      throw new StartupError(`${where} (METRICS_PORT) is already in use: stop what listens there, or set METRICS_PORT to a free port different from PORT.`, {
        cause: error,
      });
    if (code === 'EACCES')
      throw new StartupError(`not allowed to listen on ${where}: set METRICS_PORT to 1024 or above, or run with the right to bind it.`, { cause: error });
    if (code === 'EADDRNOTAVAIL')
      throw new StartupError(`METRICS_HOST ${at.host} is not an address of this machine: set METRICS_HOST to one of its addresses.`, { cause: error });
    throw error;
  }
}

/** The first start's key, shown once; or, when no admin key works any more, how to make one. */
async function announceAdminKey(
  store: Store,
  boot: BootstrapResult,
  config: Config,
  print: (line: string) => void,
  reach: { url: string; selfSignedCert: string | null },
): Promise<void> {
  if (boot.adminKeys === 'first-start') {
    const key = await issueFirstAdminKey(store, systemClock, boot.tenant.id, boot.admin.id);
    // Null: another process starting at the same time made (and printed) it.
    if (key === null) return;
    print(firstKeyBanner({ email: boot.admin.email, key, ...reach }));
    return;
  }
  if (boot.adminKeys === 'usable' || config.adminApiKey !== null) return;
  const adminActive = boot.admin.role === 'ADMIN' && boot.admin.deactivated_at === null;
  print(
    [
      '',
      `No admin API key works in tenant "${boot.tenant.slug}": every admin key is revoked or expired, or its admin is deactivated.`,
      adminActive
        ? `To make one for ${boot.admin.email}, stop the server and start it with a new ADMIN_API_KEY (its hash is stored; keep the value):`
        : `${boot.admin.email} (ADMIN_EMAIL) is no longer an active admin. Stop the server and start it with ADMIN_EMAIL set to an address that is not a user yet (it becomes an admin) and a new ADMIN_API_KEY (its hash is stored; keep the value):`,
      '',
      ...(adminActive ? [] : ['  export ADMIN_EMAIL=ops@example.com']),
      '  export ADMIN_API_KEY=$(npm run --silent admin -- key generate)',
      '  echo "$ADMIN_API_KEY"   # the key: store it now',
      '  npm start',
      '',
    ].join('\n'),
  );
}
