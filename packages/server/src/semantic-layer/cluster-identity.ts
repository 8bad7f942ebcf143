/**
 * Which PostgreSQL cluster a connection reached, whatever name or address led there: the server
 * compares a deployment's data source with its own database by this, never by how DB_URL spells
 * the host (0.0.0.0, 2130706433, ::ffff:127.0.0.1, a socket directory and a name that resolves to
 * loopback all reach the same cluster). Every database of a cluster shares it.
 */
export interface ClusterIdentity {
  /** `system_identifier` of `pg_control_system()`: set at initdb, unique per cluster; null where the role may not read it. */
  systemIdentifier: string | null;
  /** `pg_postmaster_start_time()` (microseconds, ISO) and the `port` setting: readable by any role, unique per running cluster. */
  startedAt: string;
  port: string;
}

/** Anything that runs one statement: a pg client, pool or the server's own connection. */
export interface Queryable {
  query(sql: string): Promise<{ rows: Array<Record<string, unknown>> }>;
}

/**
 * Reads the identity over `client`. `pg_control_system()` can be revoked from a role (managed
 * services do); the start time and port then still tell the cluster apart. Throws when neither
 * can be read: the caller must then not treat the source as foreign.
 */
export async function readClusterIdentity(client: Queryable): Promise<ClusterIdentity> {
  const started = await client.query(
    "SELECT to_char(pg_postmaster_start_time() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US') AS started_at, current_setting('port') AS port",
  );
  const row = started.rows[0] ?? {};
  let systemIdentifier: string | null = null;
  try {
    const control = await client.query('SELECT system_identifier::text AS id FROM pg_control_system()');
    systemIdentifier = String(control.rows[0]?.id ?? '') || null;
  } catch {
    // Permission denied: the start time and port decide (sameCluster).
  }
  return { systemIdentifier, startedAt: String(row.started_at), port: String(row.port) };
}

/**
 * Whether two identities are one cluster. The system identifier decides where both sides could
 * read it; otherwise the postmaster's start time with its port does, which two running clusters
 * do not share (a restart of the cluster changes it, so the server reads its own afresh for each
 * comparison: runtime/own-cluster.ts).
 */
export function sameCluster(a: ClusterIdentity, b: ClusterIdentity): boolean {
  if (a.systemIdentifier !== null && b.systemIdentifier !== null) return a.systemIdentifier === b.systemIdentifier;
  return a.startedAt === b.startedAt && a.port === b.port;
}

/** The refusal, as the runtime's log, the pod's status and a 400 of the variables' write state it. */
export const OWN_CLUSTER_MESSAGE =
  "DB_URL reaches this server's own PostgreSQL cluster, which no deployment may query (any of its databases, by any host name, address or socket): point DB_URL at your data warehouse";
