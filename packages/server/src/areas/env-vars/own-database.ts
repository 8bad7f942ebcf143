const LOOPBACK = new Set(['localhost', '127.0.0.1', '::1', '[::1]']);

function parts(url: string): { host: string; port: string; database: string } | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return null;
  }
  if (u.protocol !== 'postgres:' && u.protocol !== 'postgresql:') return null;
  const host = decodeURIComponent(u.hostname).toLowerCase() || 'localhost';
  const user = decodeURIComponent(u.username) || 'postgres';
  return { host: LOOPBACK.has(host) ? 'loopback' : host, port: u.port || '5432', database: decodeURIComponent(u.pathname.replace(/^\//, '')) || user };
}

/**
 * Whether a deployment's `DB_URL` names the server's own PostgreSQL database (any schema of it,
 * any user): a deployment's queries must never reach the product's own tables. Loopback names
 * count as one host.
 */
export function namesOwnDatabase(value: string, ownDatabaseUrl: string | null): boolean {
  if (ownDatabaseUrl === null) return false;
  const given = parts(value);
  const own = parts(ownDatabaseUrl);
  return given !== null && own !== null && given.host === own.host && given.port === own.port && given.database === own.database;
}
