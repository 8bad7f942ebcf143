import type { ClusterIdentity } from './cluster-identity.js';
import type { SecurityContext } from './query/access.js';

/**
 * What a server process and the runtime it started say to each other over the IPC channel.
 * Values of environment variables never travel here: the runtime reads them from its own
 * environment, as a container would.
 */
export interface StartMessage {
  type: 'start';
  pod: string;
  /** Where to listen: the runtime picks a free port on it. */
  host: string;
  /** Every request must carry it in SECRET_HEADER: only the proxy can call the runtime. */
  secret: string;
  version: string;
  build: { id: number; branch: string; commit: string };
  /** The build's artifact (JSON text of the compiled cubes and views). */
  artifact: string;
  /** Where SQLite data sources may be opened from (DATASOURCES_DIR); null: nowhere. */
  dataSourcesDir: string | null;
  /** The server's own PostgreSQL cluster, read as the pod starts: no data source may be it. Null: the server has none. */
  ownCluster: ClusterIdentity | null;
  /** DATASOURCES_ALLOW_SOCKETS: a PostgreSQL DB_URL may name a Unix socket or set host= or hostaddr=. */
  allowSocketSources: boolean;
  /** Query limits (QUERY_TIMEOUT_MS, QUERY_MAX_ROWS, QUERY_MAX_RESULT_BYTES, QUERY_CACHE_MS, QUERY_CONTINUE_WAIT_MS). */
  queries: { timeoutMs: number; maxRows: number; maxResultBytes: number; cacheTtlMs: number; continueWaitMs?: number };
}

export interface ListeningMessage {
  type: 'listening';
  port: number;
}

/**
 * A data-API request from the server process that started the runtime, over their IPC channel:
 * the same request as over HTTP (`method`, `path` such as `/v1/load`, `search` without its `?`,
 * the JSON body as parsed), with what the proxy's headers carry as fields. Only the parent holds
 * the channel, so no secret travels; it saves both processes an HTTP exchange per query.
 */
export interface RequestMessage {
  type: 'request';
  id: number;
  method: string;
  path: string;
  search: string;
  /** The caller may read private members (PRIVATE_META_HEADER). */
  privateMeta: boolean;
  security: SecurityContext;
  body?: unknown;
}

/**
 * The runtime's answer to the RequestMessage of the same `id`: its status and JSON text, and the
 * request's line for the runtime's log (`POST /v1/load 200 3 ms`), which the server adds to the
 * log as a line the runtime printed. Sent with the answer rather than printed, it costs neither
 * process a write and a wake-up of its own per request.
 */
export interface ResponseMessage {
  type: 'response';
  id: number;
  status: number;
  body: string;
  log?: string;
}

/**
 * The signal a runtime stops itself with when a statement runs longer than QUERY_TIMEOUT_MS and
 * cannot be interrupted otherwise (statement-watchdog.ts): its server answers the query that was
 * running with the limit, and starts the runtime again at once, without counting a crash.
 */
export const STATEMENT_TIMEOUT_SIGNAL = 'SIGUSR2';

/**
 * The refusal of a statement stopped at QUERY_TIMEOUT_MS, whichever stopped it (the watchdog of a
 * SQLite source, PostgreSQL's statement_timeout): 400 `{type, error}`, this `type`, which the SQL
 * API answers with PostgreSQL's own SQLSTATE for it, 57014.
 */
export const QUERY_TIMEOUT_TYPE = 'QueryTimeout';

export function timeoutMessage(limitMs: number | undefined): string {
  return `The statement ran longer than the ${limitMs === undefined ? 'time' : `${limitMs} ms`} a query may take (QUERY_TIMEOUT_MS) and was stopped. Add filters, fewer dimensions or a narrower date range.`;
}

export const SECRET_HEADER = 'x-mapi-runtime-secret';
/** Set by the proxy when the caller may read private members (the `meta-private` scope). */
export const PRIVATE_META_HEADER = 'x-mapi-meta-private';
/** The caller's security context (groups, user attributes, the credential's context), base64url JSON, set by the proxy. */
export const SECURITY_HEADER = 'x-mapi-security-context';
