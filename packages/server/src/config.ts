import fs from 'node:fs';
import path from 'node:path';
import { isApiKeyFormat } from './areas/api-keys/key-format.js';
import { EMAIL, HOST_NAME } from './formats.js';
import { DEFAULT_CATALOG, parseRegions, parseVersions, type Catalog } from './areas/deployments/catalog.js';
import { parseSecretKeys, type SecretKeySource } from './secrets/keys.js';
import { DEFAULT_EMBED_USER_LIMIT } from './areas/embed-tenants/limits.js';
import { AllowList } from './outbound/address-guard.js';
import { Masked, type SmtpConfig } from './mail/index.js';
import type { SummariserConfig } from './areas/notifications/summary.js';
import { providerUrlProblem, type ServerProviderConfig } from './ai/index.js';

/** The longest SHUTDOWN_DRAIN_MS: a stop is forced 30 s after SIGTERM (main.ts), and the store and runtimes still need to close after the drain. */
const MAX_DRAIN_MS = 25_000;

/** Everything the server reads from its environment, validated once at start-up. */
export interface Config {
  port: number;
  host: string;
  dataDir: string;
  /** Where deployments' git repositories live; every process sharing the database must share it. */
  repositoriesDir: string;
  /** A postgres:// URL selects PostgreSQL; null means SQLite in `dataDir`. */
  databaseUrl: string | null;
  tlsCert: string | null;
  tlsKey: string | null;
  adminApiKey: string | null;
  adminEmail: string;
  baseDomain: string | null;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Requests per minute per API key; 0 turns it off. */
  rateLimitPerMinute: number;
  /** Requests per minute per client address on public routes that declare no budget; 0 turns it off. */
  rateLimitPerIpPerMinute: number;
  /** Embed session exchanges a minute per client address (POST /api/v1/embed/session/token); 0 turns it off. */
  embedExchangePerIpPerMinute: number;
  /** EMBED_TOKEN_LIFETIME_MS: how long embed tokens live; default a day. */
  embedTokenLifetimeMs: number;
  /** Where rate-limit counters live, shared by every process using it; null: each process's memory. */
  redisUrl: string | null;
  /** How long a client may take to send headers, then a body, and keep an idle connection (ms). */
  timeouts: { headersMs: number; bodyMs: number; keepAliveMs: number; drainMs: number };
  /** How long a change waits for a busy deployment's lock before it is answered 503 (ms; db/transactions.ts). */
  lockTimeoutMs: number;
  /** How long a deployment's folders must stay unchanged before a server loads its folder tree into memory (ms; areas/workspace/folder-trees.ts). */
  folderTreeSettleMs: number;
  /** The most embed users an account may hold, across its embed tenants (EMBED_USER_LIMIT; reference 4.0). */
  embedUserLimit: number;
  /** Browser origins allowed by CORS; empty: no CORS headers (same-origin use and non-browser clients only). */
  corsOrigins: string[];
  /** Runtime versions per release channel and the regions offered (RUNTIME_VERSIONS, REGIONS). */
  catalog: Catalog;
  /**
   * Background jobs: how often a running job's heartbeat is written, and after how long without one
   * it is taken back (ms); how many threads run CPU-heavy work (absent: the cores less one, at least one).
   */
  jobs: { heartbeatMs: number; staleAfterMs: number; workerThreads?: number };
  /** The background refresh of user OAuth tokens: scan interval (0: off), how long before expiry, retry delay after a passing failure (ms). */
  oauthTokenRefresh: { scanMs: number; leadMs: number; retryMs: number };
  /** How often each process looks for notifications' due occurrences (NOTIFICATIONS_TICK_MS, ms). */
  notificationsTickMs: number;
  /** Origin of the absolute URLs the server builds in single-tenant mode; null: https://localhost:<bound port>. */
  publicUrl: string | null;
  /** Deployments' runtimes (runtime/): the driver (`none`: this process runs no pods), where pods listen, and the timings. */
  runtime: RuntimeConfig;
  /** The Prometheus endpoint's own plain-HTTP listener; null: no metrics are served. */
  metrics: { port: number; host: string } | null;
  /**
   * The SQL API's PostgreSQL listener (SQL_API_PORT, SQL_API_HOST default HOST, SQL_API_MAX_CONNECTIONS
   * default 100, SQL_API_MAX_CATALOGS default 8: models' catalogs open at once); null: off (SQL_API_PORT unset or 0).
   */
  sqlApi: { port: number; host: string; maxConnections: number; maxCatalogs: number } | null;
  /** The keys values are encrypted with at rest (secrets/): given, in a file, or made once in DATA_DIR. */
  secretKeys: SecretKeySource;
  /** Calls to other servers (outbound/): private ranges and hosts still allowed (OUTBOUND_ALLOW_PRIVATE), and one attempt's time limit. */
  outbound: { allowPrivate: string[]; timeoutMs: number; caFile?: string };
  /** Python analysis of embedded dashboards (python/): workers kept loaded, runs at once, a run's time and memory, how long a success is cached. */
  python: { poolSize: number; concurrency: number; queueLimit: number; timeoutMs: number; memoryMb: number; cacheMs: number };
  /** Dashboard renders: the DejaVu fonts' directory (RENDER_FONTS_DIR), exports rendering at once per identity (DASHBOARD_EXPORTS_PER_IDENTITY, default 3). */
  render: { fontsDir: string; exportsPerIdentity: number };
  /** Where notifications are mailed (SMTP_HOST, SMTP_PORT, SMTP_SECURE, SMTP_USER, SMTP_PASSWORD, SMTP_FROM); null: no SMTP, nothing is mailed. */
  smtp: SmtpConfig | null;
  /** A recipient's failed send is tried this many times in all (NOTIFICATION_SEND_ATTEMPTS), waiting NOTIFICATION_RETRY_BASE_MS, then twice that, and so on. */
  notificationSends: { attempts: number; retryBaseMs: number };
  /** `notificationAiSummary`'s writer: an OpenAI-compatible chat-completions URL and key (NOTIFICATION_SUMMARY_URL, NOTIFICATION_SUMMARY_API_KEY, NOTIFICATION_SUMMARY_MODEL); null: none. */
  summariser: SummariserConfig | null;
  /** The default model provider of every account's AI features (AI_PROVIDER_URL, AI_PROVIDER_MODEL, AI_PROVIDER_API_KEY); null: none, each account sets its own. */
  aiProvider: ServerProviderConfig | null;
}

export interface RuntimeConfig {
  driver: 'process' | 'none';
  host: string;
  tickMs: number;
  leaseMs: number;
  healthIntervalMs: number;
  backoffBaseMs: number;
  idleMs: number;
  logLinesPerDeployment: number;
  /** Where runtimes may open SQLite data sources (DATASOURCES_DIR). */
  dataSourcesDir: string;
  /** DATASOURCES_ALLOW_SOCKETS: a PostgreSQL DB_URL may name a Unix socket or set host= or hostaddr= (off: the URL's host part only). */
  allowSocketSources: boolean;
  /** Where the pods' files (workload-identity tokens) are written, a directory per pod: DATA_DIR/pods. */
  podFilesDir: string;
  /** What a query may take and return (QUERY_TIMEOUT_MS, QUERY_MAX_ROWS, QUERY_MAX_RESULT_BYTES, QUERY_CACHE_MS, QUERY_CONTINUE_WAIT_MS). */
  queries: { timeoutMs: number; maxRows: number; maxResultBytes: number; cacheTtlMs: number; continueWaitMs: number };
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** An origin as browsers send it: scheme, host, optional port, nothing else. */
const ORIGIN = /^https?:\/\/[A-Za-z0-9.-]+(:\d{1,5})?$/;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** Reads and validates the configuration; every problem is reported at once, not the first only. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const problems: string[] = [];
  const value = (name: string): string | null => {
    const v = env[name];
    return v === undefined || v.trim() === '' ? null : v.trim();
  };

  const wholeNumber = (name: string, fallback: number, max: number, hint: string): number => {
    const raw = value(name);
    if (raw === null) return fallback;
    if (/^\d+$/.test(raw) && Number(raw) <= max) return Number(raw);
    problems.push(`${name} must be ${hint}, got "${raw}"`);
    return fallback;
  };

  const yesNo = (name: string, fallback: boolean, what: string): boolean => {
    const raw = value(name)?.toLowerCase() ?? null;
    if (raw === null) return fallback;
    if (raw === 'true' || raw === 'false') return raw === 'true';
    problems.push(`${name} must be "true" (allow ${what}) or "false", got "${value(name)}"`);
    return fallback;
  };

  const port = wholeNumber('PORT', 8443, 65535, 'an integer from 0 to 65535');
  const databaseUrl = value('DATABASE_URL');
  if (databaseUrl !== null && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    problems.push('DATABASE_URL must be a postgres:// or postgresql:// URL (leave it unset for SQLite in DATA_DIR)');
  }

  const tlsCert = value('TLS_CERT');
  const tlsKey = value('TLS_KEY');
  if ((tlsCert === null) !== (tlsKey === null)) {
    problems.push('TLS_CERT and TLS_KEY go together: set both PEM paths, or neither for a self-signed localhost certificate');
  }

  const adminApiKey = value('ADMIN_API_KEY');
  if (adminApiKey !== null && !isApiKeyFormat(adminApiKey)) {
    problems.push('ADMIN_API_KEY must be "mapi_" followed by 40 letters or digits (generate one with `npm run admin -- key generate`)');
  }

  const adminEmail = value('ADMIN_EMAIL') ?? 'admin@localhost';
  if (!EMAIL.test(adminEmail)) problems.push(`ADMIN_EMAIL must be an email address, got "${adminEmail}"`);

  const baseDomain = value('BASE_DOMAIN')?.toLowerCase() ?? null;
  if (baseDomain !== null && !HOST_NAME.test(baseDomain)) {
    problems.push(`BASE_DOMAIN must be a host name such as "mapi.example.com", got "${baseDomain}"`);
  }

  const logLevel = (value('LOG_LEVEL') ?? 'info') as Config['logLevel'];
  if (!LOG_LEVELS.includes(logLevel)) problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);

  const rateLimitPerMinute = wholeNumber('RATE_LIMIT_PER_MINUTE', 1200, Number.MAX_SAFE_INTEGER, 'a whole number (0 turns limiting off)');
  const rateLimitPerIpPerMinute = wholeNumber('RATE_LIMIT_PER_IP_PER_MINUTE', 60, Number.MAX_SAFE_INTEGER, 'a whole number (0 turns limiting off)');
  const embedExchangePerIpPerMinute = wholeNumber('EMBED_EXCHANGE_PER_IP_PER_MINUTE', 120, Number.MAX_SAFE_INTEGER, 'a whole number (0 turns limiting off)');
  // At least a second (the token's `exp` counts seconds), at most the reference's day.
  const embedTokenLifetimeMs = wholeNumber('EMBED_TOKEN_LIFETIME_MS', 86_400_000, 86_400_000, 'a whole number of milliseconds up to 86400000 (a day)');
  if (embedTokenLifetimeMs < 1000) problems.push('EMBED_TOKEN_LIFETIME_MS must be at least 1000 (a second)');
  const redisUrl = value('REDIS_URL');
  if (redisUrl !== null && !/^rediss?:\/\/[^\s]+$/.test(redisUrl))
    problems.push('REDIS_URL must be a redis:// or rediss:// URL (leave it unset to count in each process)');

  // No timeout can be turned off: a client that never finishes its request would hold its connection forever.
  const milliseconds = (name: string, fallback: number) => {
    const ms = wholeNumber(name, fallback, 86_400_000, 'a number of milliseconds from 100 to 86400000');
    if (ms >= 100) return ms;
    problems.push(`${name} must be a number of milliseconds from 100 to 86400000, got "${ms}"`);
    return fallback;
  };
  const timeouts = {
    headersMs: milliseconds('HEADERS_TIMEOUT_MS', 10_000),
    bodyMs: milliseconds('BODY_TIMEOUT_MS', 30_000),
    keepAliveMs: milliseconds('KEEP_ALIVE_TIMEOUT_MS', 72_000),
    drainMs: milliseconds('SHUTDOWN_DRAIN_MS', 10_000),
  };
  // The drain must end well inside the 30 s after which a stopping process exits regardless (main.ts).
  if (timeouts.drainMs > MAX_DRAIN_MS)
    problems.push(`SHUTDOWN_DRAIN_MS must be at most ${MAX_DRAIN_MS} (a stop is forced after 30 s), got "${timeouts.drainMs}"`);
  const lockTimeoutMs = milliseconds('LOCK_TIMEOUT_MS', 5_000);
  const versions = value('RUNTIME_VERSIONS') === null ? DEFAULT_CATALOG.versions : parseVersions(value('RUNTIME_VERSIONS') ?? '');
  if (versions === null)
    problems.push(
      `RUNTIME_VERSIONS must list each release channel's versions, oldest first, as "release=1.0.0,1.1.0;latest=1.2.0", got "${value('RUNTIME_VERSIONS')}"`,
    );
  const regions = value('REGIONS') === null ? DEFAULT_CATALOG.regions : parseRegions(value('REGIONS') ?? '');
  if (regions === null)
    problems.push(
      `REGIONS must be region names separated by commas (lower-case letters, digits and dashes), such as "local,eu-west", got "${value('REGIONS')}"`,
    );
  const notificationsTickMs = milliseconds('NOTIFICATIONS_TICK_MS', 10_000);
  const workerThreads = value('JOBS_WORKER_THREADS') === null ? undefined : wholeNumber('JOBS_WORKER_THREADS', 1, 64, 'a number of threads from 1 to 64');
  if (workerThreads === 0) problems.push('JOBS_WORKER_THREADS must be a number of threads from 1 to 64, got "0"');
  const jobs = {
    heartbeatMs: milliseconds('JOBS_HEARTBEAT_MS', 5_000),
    staleAfterMs: milliseconds('JOBS_STALE_AFTER_MS', 30_000),
    ...(workerThreads === undefined ? {} : { workerThreads }),
  };
  const oauthTokenRefresh = {
    scanMs: wholeNumber('OAUTH_TOKEN_REFRESH_SCAN_MS', 60_000, 86_400_000, 'a number of milliseconds up to 86400000 (0 turns the background refresh off)'),
    leadMs: milliseconds('OAUTH_TOKEN_REFRESH_LEAD_MS', 300_000),
    retryMs: milliseconds('OAUTH_TOKEN_REFRESH_RETRY_MS', 300_000),
  };
  if (jobs.staleAfterMs < 2 * jobs.heartbeatMs)
    problems.push(`JOBS_STALE_AFTER_MS must be at least twice JOBS_HEARTBEAT_MS (${jobs.heartbeatMs}), got "${jobs.staleAfterMs}"`);
  const runtimeDriver = value('RUNTIME_DRIVER') ?? 'process';
  if (runtimeDriver !== 'process' && runtimeDriver !== 'none')
    problems.push(`RUNTIME_DRIVER must be "process" (run deployments' runtimes as child processes) or "none" (this process runs none), got "${runtimeDriver}"`);
  const runtimeHost = value('RUNTIME_HOST') ?? '127.0.0.1';
  if (!/^[A-Za-z0-9.:-]+$/.test(runtimeHost)) problems.push(`RUNTIME_HOST must be an address to listen on, such as "127.0.0.1", got "${runtimeHost}"`);
  const runtime: RuntimeConfig = {
    driver: runtimeDriver === 'none' ? 'none' : 'process',
    host: runtimeHost,
    tickMs: milliseconds('RUNTIME_TICK_MS', 2_000),
    leaseMs: milliseconds('RUNTIME_LEASE_MS', 15_000),
    healthIntervalMs: milliseconds('RUNTIME_HEALTH_INTERVAL_MS', 5_000),
    backoffBaseMs: milliseconds('RUNTIME_BACKOFF_MS', 2_000),
    idleMs: milliseconds('RUNTIME_IDLE_MS', 600_000),
    logLinesPerDeployment: wholeNumber('RUNTIME_LOG_LINES', 10_000, 10_000_000, 'a number of lines from 100 to 10000000'),
    dataSourcesDir: path.resolve(value('DATASOURCES_DIR') ?? path.join(value('DATA_DIR') ?? './data', 'datasources')),
    allowSocketSources: yesNo('DATASOURCES_ALLOW_SOCKETS', false, 'a Unix socket or host=/hostaddr= in DB_URL'),
    podFilesDir: path.resolve(value('DATA_DIR') ?? './data', 'pods'),
    queries: {
      timeoutMs: milliseconds('QUERY_TIMEOUT_MS', 30_000),
      maxRows: wholeNumber('QUERY_MAX_ROWS', 50_000, 1_000_000, 'a number of rows from 1 to 1000000'),
      maxResultBytes: wholeNumber('QUERY_MAX_RESULT_BYTES', 50 * 1_048_576, 1_073_741_824, 'a number of bytes up to 1073741824'),
      cacheTtlMs: wholeNumber('QUERY_CACHE_MS', 10_000, 3_600_000, 'a number of milliseconds from 0 (no cache) to 3600000'),
      // Cube's "Continue wait": a data-API request answers this after so long, and the client asks again.
      continueWaitMs: milliseconds('QUERY_CONTINUE_WAIT_MS', 5_000),
    },
  };
  if (runtime.queries.maxRows < 1) problems.push('QUERY_MAX_ROWS must be a number of rows from 1 to 1000000, got "0"');
  // The server's own SQLite database must never be reachable as a deployment's data source.
  const ownDatabase = path.resolve(value('DATA_DIR') ?? './data', 'mapi.sqlite');
  if (!path.relative(runtime.dataSourcesDir, ownDatabase).startsWith('..'))
    problems.push(`DATASOURCES_DIR must not hold the server's own database (${ownDatabase}): give it a directory of its own, such as DATA_DIR/datasources`);
  if (runtime.leaseMs < 3 * runtime.tickMs)
    problems.push(`RUNTIME_LEASE_MS must be at least three times RUNTIME_TICK_MS (${runtime.tickMs}), got "${runtime.leaseMs}"`);
  if (runtime.logLinesPerDeployment < 100)
    problems.push(`RUNTIME_LOG_LINES must be a number of lines from 100 to 10000000, got "${runtime.logLinesPerDeployment}"`);
  const folderTreeSettleMs = wholeNumber('FOLDER_TREE_SETTLE_MS', 1_000, 86_400_000, 'a number of milliseconds from 0 to 86400000');
  const embedUserLimit = wholeNumber('EMBED_USER_LIMIT', DEFAULT_EMBED_USER_LIMIT, 100_000_000, 'a number of embed users from 0 to 100000000');

  const corsOrigins = (value('CORS_ORIGINS') ?? '')
    .split(',')
    .map((o) => o.trim())
    .filter((o) => o !== '');
  for (const origin of corsOrigins) {
    if (origin !== '*' && !ORIGIN.test(origin))
      problems.push(`CORS_ORIGINS must list origins such as "https://app.example.com" (scheme, host, optional port; no path), or "*"; got "${origin}"`);
  }

  const publicUrl = value('PUBLIC_URL');
  if (publicUrl !== null && !isPublicOrigin(publicUrl)) {
    problems.push(`PUBLIC_URL must be an https origin such as "https://mapi.example.com" or "https://mapi.example.com:8443" (no path), got "${publicUrl}"`);
  }

  // Unset means off; metrics cover every tenant, so they are never served on the API port.
  const metricsPort =
    value('METRICS_PORT') === null ? null : wholeNumber('METRICS_PORT', 0, 65535, 'an integer from 0 to 65535 (leave it unset to serve no metrics)');
  const metricsHost = value('METRICS_HOST');
  if (metricsHost !== null && metricsPort === null)
    problems.push('METRICS_HOST is set but METRICS_PORT is not: set METRICS_PORT to serve metrics, or unset METRICS_HOST');
  if (metricsPort !== null && metricsPort !== 0 && metricsPort === port && (metricsHost ?? '127.0.0.1') === (value('HOST') ?? '127.0.0.1')) {
    problems.push(`METRICS_PORT must differ from PORT (${port}): metrics are served on a listener of their own`);
  }

  // Unset or 0 means off: the SQL API listens only where an operator opens its port.
  const sqlApiPort = value('SQL_API_PORT') === null ? 0 : wholeNumber('SQL_API_PORT', 0, 65535, 'an integer from 1 to 65535 (0 or unset: no SQL API)');
  const sqlApiMax =
    value('SQL_API_MAX_CONNECTIONS') === null ? 100 : wholeNumber('SQL_API_MAX_CONNECTIONS', 100, 100_000, 'a whole number of connections from 1 to 100000');
  const sqlApiCatalogs =
    value('SQL_API_MAX_CATALOGS') === null ? 8 : wholeNumber('SQL_API_MAX_CATALOGS', 8, 10_000, 'a whole number of catalogs from 1 to 10000');
  if (sqlApiCatalogs === 0) problems.push('SQL_API_MAX_CATALOGS must be a whole number of catalogs from 1 to 10000, got 0');
  if (sqlApiMax === 0)
    problems.push('SQL_API_MAX_CONNECTIONS must be a whole number of connections from 1 to 100000, got 0 (unset SQL_API_PORT to turn the SQL API off)');
  if (sqlApiPort !== 0 && sqlApiPort === port && (value('SQL_API_HOST') ?? value('HOST') ?? '127.0.0.1') === (value('HOST') ?? '127.0.0.1')) {
    problems.push(`SQL_API_PORT must differ from PORT (${port}): the SQL API has a listener of its own`);
  }

  const secretKeys = secretKeySource(value, env, problems);

  // Off by default: a URL an admin configures must not reach the server's own network.
  const allowPrivate = (value('OUTBOUND_ALLOW_PRIVATE') ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');
  for (const entry of allowPrivate) {
    const problem = AllowList.problemOf(entry);
    if (problem !== null) problems.push(`OUTBOUND_ALLOW_PRIVATE: ${problem}`);
  }
  const caFile = value('OUTBOUND_CA_FILE');
  if (caFile !== null && !fileHoldsPem(caFile)) problems.push(`OUTBOUND_CA_FILE (${caFile}) must be a readable PEM file of certificate authorities`);
  const outbound = { allowPrivate, timeoutMs: milliseconds('OUTBOUND_TIMEOUT_MS', 10_000), ...(caFile === null ? {} : { caFile: path.resolve(caFile) }) };

  const python = {
    poolSize: wholeNumber('PYTHON_POOL_SIZE', 2, 64, 'a number of workers from 0 to 64'),
    concurrency: wholeNumber('PYTHON_CONCURRENCY', 2, 64, 'a number of runs from 1 to 64'),
    queueLimit: wholeNumber('PYTHON_QUEUE_LIMIT', 32, 10_000, 'a number of waiting runs from 0 to 10000'),
    timeoutMs: milliseconds('PYTHON_TIMEOUT_MS', 10_000),
    memoryMb: wholeNumber('PYTHON_MEMORY_MB', 256, 4_096, 'a number of megabytes from 64 to 4096'),
    cacheMs: wholeNumber('PYTHON_CACHE_MS', 60_000, 3_600_000, 'a number of milliseconds from 0 (no cache) to 3600000'),
  };
  if (python.concurrency < 1) problems.push('PYTHON_CONCURRENCY must be a number of runs from 1 to 64, got "0"');
  // Pyodide itself takes about 30 MB before any code runs.
  if (python.memoryMb < 64) problems.push(`PYTHON_MEMORY_MB must be a number of megabytes from 64 to 4096, got "${python.memoryMb}"`);
  const exportsPerIdentity = wholeNumber('DASHBOARD_EXPORTS_PER_IDENTITY', 3, 1000, 'a number of exports from 1 to 1000');
  if (exportsPerIdentity < 1) problems.push('DASHBOARD_EXPORTS_PER_IDENTITY must be a number of exports from 1 to 1000, got "0"');
  const render = { fontsDir: path.resolve(value('RENDER_FONTS_DIR') ?? '/usr/share/fonts/truetype/dejavu'), exportsPerIdentity };

  const smtp = smtpConfig(value, wholeNumber, adminEmail, problems);
  const notificationSends = {
    attempts: wholeNumber('NOTIFICATION_SEND_ATTEMPTS', 3, 10, 'a number of attempts from 1 to 10'),
    retryBaseMs: wholeNumber('NOTIFICATION_RETRY_BASE_MS', 30_000, 3_600_000, 'a number of milliseconds up to 3600000'),
  };
  const summaryUrl = value('NOTIFICATION_SUMMARY_URL');
  const summaryKey = value('NOTIFICATION_SUMMARY_API_KEY');
  let summariser: SummariserConfig | null = null;
  if (summaryUrl !== null) {
    if (!/^https?:\/\/[^\s]+$/.test(summaryUrl))
      problems.push(`NOTIFICATION_SUMMARY_URL must be an http(s) URL of a chat-completions endpoint, got "${summaryUrl}"`);
    if (summaryKey === null) problems.push('NOTIFICATION_SUMMARY_URL needs NOTIFICATION_SUMMARY_API_KEY');
    summariser = { url: summaryUrl, apiKey: new Masked(summaryKey ?? ''), model: value('NOTIFICATION_SUMMARY_MODEL') ?? 'gpt-4o-mini' };
  } else if (summaryKey !== null) problems.push('NOTIFICATION_SUMMARY_API_KEY needs NOTIFICATION_SUMMARY_URL');
  const aiProvider = aiProviderConfig(value, problems);
  if (notificationSends.attempts < 1) problems.push('NOTIFICATION_SEND_ATTEMPTS must be a number of attempts from 1 to 10, got "0"');

  if (problems.length > 0) throw new ConfigError(problems);
  return {
    port,
    host: value('HOST') ?? '127.0.0.1',
    dataDir: path.resolve(value('DATA_DIR') ?? './data'),
    repositoriesDir: path.resolve(value('REPOSITORIES_DIR') ?? path.join(value('DATA_DIR') ?? './data', 'repositories')),
    databaseUrl,
    tlsCert,
    tlsKey,
    adminApiKey,
    adminEmail,
    baseDomain,
    logLevel,
    rateLimitPerMinute,
    rateLimitPerIpPerMinute,
    embedExchangePerIpPerMinute,
    embedTokenLifetimeMs,
    redisUrl,
    timeouts,
    lockTimeoutMs,
    folderTreeSettleMs,
    embedUserLimit,
    jobs,
    oauthTokenRefresh,
    notificationsTickMs,
    runtime,
    catalog: { versions: versions ?? DEFAULT_CATALOG.versions, regions: regions ?? DEFAULT_CATALOG.regions },
    corsOrigins,
    publicUrl: publicUrl === null ? null : new URL(publicUrl).origin,
    metrics: metricsPort === null ? null : { port: metricsPort, host: metricsHost ?? '127.0.0.1' },
    sqlApi:
      sqlApiPort === 0
        ? null
        : { port: sqlApiPort, host: value('SQL_API_HOST') ?? value('HOST') ?? '127.0.0.1', maxConnections: sqlApiMax, maxCatalogs: sqlApiCatalogs },
    secretKeys,
    outbound,
    python,
    render,
    smtp,
    notificationSends,
    summariser,
    aiProvider,
  };
}

/** AI_PROVIDER_URL turns the server's default provider on; it needs AI_PROVIDER_MODEL, and a key unless the server asks for none. */
function aiProviderConfig(value: (name: string) => string | null, problems: string[]): ServerProviderConfig | null {
  const url = value('AI_PROVIDER_URL');
  const model = value('AI_PROVIDER_MODEL');
  const key = value('AI_PROVIDER_API_KEY');
  if (url === null) {
    if (model !== null || key !== null) problems.push('AI_PROVIDER_MODEL and AI_PROVIDER_API_KEY need AI_PROVIDER_URL');
    return null;
  }
  const problem = providerUrlProblem(url);
  if (problem !== null) problems.push(`AI_PROVIDER_URL ${problem}, got "${url}"`);
  if (model === null)
    problems.push('AI_PROVIDER_URL needs AI_PROVIDER_MODEL, the model asked for (such as gpt-4o-mini, or the name a local server gives its model)');
  return { baseUrl: url.replace(/\/+$/, ''), model: model ?? '', apiKey: new Masked(key ?? '') };
}

/** SMTP_HOST turns mail on; the rest have defaults (port 587, or 465 with SMTP_SECURE=true; From: ADMIN_EMAIL). */
function smtpConfig(
  value: (name: string) => string | null,
  wholeNumber: (name: string, fallback: number, max: number, hint: string) => number,
  adminEmail: string,
  problems: string[],
): SmtpConfig | null {
  const host = value('SMTP_HOST');
  const secureRaw = value('SMTP_SECURE')?.toLowerCase() ?? 'false';
  if (secureRaw !== 'true' && secureRaw !== 'false')
    problems.push(`SMTP_SECURE must be "true" (TLS from the start, usually port 465) or "false" (STARTTLS when offered), got "${secureRaw}"`);
  const secure = secureRaw === 'true';
  const port = wholeNumber('SMTP_PORT', secure ? 465 : 587, 65535, 'a port from 1 to 65535');
  const user = value('SMTP_USER');
  const password = value('SMTP_PASSWORD');
  const from = value('SMTP_FROM') ?? adminEmail;
  // A bad ADMIN_EMAIL is reported once, as itself, not again as the From address it defaults.
  if (value('SMTP_FROM') !== null && !EMAIL.test(from)) problems.push(`SMTP_FROM must be an email address, got "${from}"`);
  if (host === null) {
    if (user !== null || password !== null) problems.push('SMTP_USER and SMTP_PASSWORD need SMTP_HOST (the SMTP server to sign in to)');
    return null;
  }
  if (!/^[A-Za-z0-9.:-]+$/.test(host)) problems.push(`SMTP_HOST must be a host name or address, got "${host}"`);
  if (password !== null && user === null) problems.push('SMTP_PASSWORD needs SMTP_USER');
  return { host, port, secure, user, password: password === null ? null : new Masked(password), from };
}

/**
 * MAPI_SECRET_KEY (the keys themselves) or MAPI_SECRET_KEY_FILE (a file holding them), never both.
 * Neither: required in production, where a key made on the spot would be lost with the machine;
 * elsewhere one is made once in DATA_DIR/secret.key and kept.
 */
function secretKeySource(value: (name: string) => string | null, env: NodeJS.ProcessEnv, problems: string[]): SecretKeySource {
  const given = value('MAPI_SECRET_KEY');
  const file = value('MAPI_SECRET_KEY_FILE');
  const generated: SecretKeySource = { from: 'generated', file: path.resolve(value('DATA_DIR') ?? './data', 'secret.key') };
  if (given !== null && file !== null) {
    problems.push('MAPI_SECRET_KEY and MAPI_SECRET_KEY_FILE are both set: set one of them');
    return generated;
  }
  if (given !== null) {
    const parsed = parseSecretKeys(given, 'MAPI_SECRET_KEY');
    problems.push(...parsed.problems);
    return { from: 'MAPI_SECRET_KEY', keys: parsed.keys };
  }
  if (file !== null) return { from: 'MAPI_SECRET_KEY_FILE', file: path.resolve(file) };
  if (env.NODE_ENV === 'production') {
    problems.push(
      'MAPI_SECRET_KEY or MAPI_SECRET_KEY_FILE is required when NODE_ENV=production (values such as environment variables are encrypted with it): ' +
        'generate one with `npm run admin -- secrets generate-key` and keep it safe; without it the stored values cannot be read',
    );
  }
  return generated;
}

/** Only HTTPS is served, and absolute URLs are built as origin + path, so nothing else is accepted. */
function isPublicOrigin(raw: string): boolean {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return false;
  }
  return (
    url.protocol === 'https:' &&
    url.username === '' &&
    url.password === '' &&
    url.search === '' &&
    url.hash === '' &&
    (url.pathname === '/' || url.pathname === '') &&
    HOST_NAME.test(url.hostname)
  );
}

function fileHoldsPem(file: string): boolean {
  try {
    return fs.readFileSync(file, 'utf8').includes('-----BEGIN CERTIFICATE-----');
  } catch {
    return false;
  }
}
