import path from 'node:path';
import pg from 'pg';
import { OWN_CLUSTER_MESSAGE, readClusterIdentity, sameCluster } from '../../semantic-layer/cluster-identity.js';
import { DataSourceTargetRefused, DataSourceUrlError, onlyPassword, pgTarget, pinnedSettings, type PgTarget } from '../../semantic-layer/pg-target.js';
import type { OwnCluster } from '../../runtime/own-cluster.js';

/** The directory of the accounts' usage data sources (areas/usage-analytics), inside the data-sources directory that runtimes may open: no deployment's DB_URL may name it. */
export const USAGE_DATA_DIR = 'usage-analytics';

/** Whether a DB_URL names something in the usage data directory, however it is spelled (`./`, `a/../`, backslashes). */
export function isUsageDataPath(value: string): boolean {
  const normal = path.posix
    .normalize(value.trim().replace(/\\/g, '/'))
    .replace(/^(\.\/)+/, '')
    .replace(/^\/+/, '');
  return normal === USAGE_DATA_DIR || normal.startsWith(`${USAGE_DATA_DIR}/`);
}

/** What a deployment's PostgreSQL data source is held to when its variables are written. */
export interface DataSourceRules {
  ownCluster: OwnCluster;
  /** DATASOURCES_ALLOW_SOCKETS. */
  allowSocketSources: boolean;
}

/** The variables that choose a data source, as they will be once the write is applied. */
export interface DataSourceVariables {
  DB_TYPE?: string;
  DB_URL?: string;
  DB_PASSWORD?: string;
}

/** The whole write-time comparison, DNS included: a slow source must not hold the request. */
const CHECK_MS = 3_000;

/**
 * Why these variables may not be stored, or null. The write-time half of the rule that no
 * deployment queries the server's own PostgreSQL cluster, for a fast 400: a DB_URL leading past its
 * host part where the server does not allow it is refused, and one reaching a cluster the server can
 * compare (it connects within a few seconds) is refused when the cluster is its own. A source it
 * cannot reach now is accepted: the runtime compares again before it runs a query
 * (semantic-layer/data-source.ts), whatever path the URL was stored by. A DB_URL the runtime could
 * not use at all (a password in it, not a postgres:// URL; a SQLite path outside the data-sources
 * directory) is refused too.
 */
export async function dataSourceRefusal(vars: DataSourceVariables, password: string | undefined, rules: DataSourceRules): Promise<string | null> {
  if (vars.DB_TYPE === 'sqlite' && vars.DB_URL !== undefined) return sqliteRefusal(vars.DB_URL);
  if (vars.DB_TYPE !== 'postgres' || vars.DB_URL === undefined) return null;
  let target: PgTarget;
  try {
    target = pgTarget(vars.DB_URL, rules.allowSocketSources);
  } catch (error) {
    // A URL the runtime could not use (a password in it, not a postgres:// URL, a socket) is refused now, not later as a crash.
    return error instanceof DataSourceTargetRefused || error instanceof DataSourceUrlError ? error.message : null;
  }
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), CHECK_MS);
  });
  try {
    return await Promise.race([ownClusterReached(target, password, rules), late]);
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A SQLite DB_URL names a file inside the data-sources directory (DATASOURCES_DIR): an absolute
 * path or one that climbs out with `..` is refused as written. The runtime checks again with the
 * real paths (a symbolic link inside that leads outside), since the file may not exist yet.
 */
function sqliteRefusal(name: string): string | null {
  if (name === '' || path.isAbsolute(name) || /^[A-Za-z]:/.test(name) || path.normalize(name).split(/[\\/]/).includes('..')) {
    return 'DB_URL names a file outside the data-sources directory: give the name of a SQLite file in it (DATASOURCES_DIR), such as shop.sqlite.';
  }
  return null;
}

async function ownClusterReached(target: PgTarget, password: string | undefined, rules: DataSourceRules): Promise<string | null> {
  const own = await rules.ownCluster();
  if (own === null) return null;
  const client = new pg.Client({ ...(await pinnedSettings(target)), password: onlyPassword(password), connectionTimeoutMillis: 2_000 });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return sameCluster(own, await readClusterIdentity(client)) ? OWN_CLUSTER_MESSAGE : null;
  } finally {
    void client.end().catch(() => undefined);
  }
}
