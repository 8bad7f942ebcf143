import pg from 'pg';
import { readClusterIdentity, type ClusterIdentity } from '../semantic-layer/cluster-identity.js';

/** The server's own PostgreSQL cluster as it is now; null when the server has no PostgreSQL database. */
export type OwnCluster = () => Promise<ClusterIdentity | null>;

/**
 * Reads the identity of the cluster DATABASE_URL names, over a connection of its own, each time it
 * is asked (a pod starting, a data source being set): the system identifier never changes, but the
 * start time that stands in for it where a source's role may not read it changes with every
 * restart of the cluster, and a stale one would match nothing.
 */
export function ownClusterReader(databaseUrl: string | null): OwnCluster {
  if (databaseUrl === null) return async () => null;
  return async () => {
    const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 5_000 });
    client.on('error', () => undefined);
    await client.connect();
    try {
      return await readClusterIdentity(client);
    } finally {
      await client.end();
    }
  };
}
