import { lookup } from 'node:dns/promises';
import net from 'node:net';
import type pg from 'pg';
import { parse } from 'pg-connection-string';

/** A DB_URL this server will not connect to as written; the message names the fix. */
export class DataSourceUrlError extends Error {}
/** DB_URL leads past its host part (a socket, host=, hostaddr=) where DATASOURCES_ALLOW_SOCKETS does not allow it. */
export class DataSourceTargetRefused extends DataSourceUrlError {}

const EXAMPLE = 'postgres://analyst@db.example.com:5432/warehouse';
/** Connection parameters whose values are paths of files pg would read on this host. */
const FILE_PARAMETERS = ['sslcert', 'sslkey', 'sslrootcert', 'sslcrl', 'passfile', 'service', 'servicefile'];
const ALLOW = 'an operator may allow them with DATASOURCES_ALLOW_SOCKETS=true';

/**
 * Where a PostgreSQL DB_URL leads, checked but not yet resolved: the host as written (for TLS and
 * messages), the address `hostaddr=` gives where allowed, and the rest of pg's settings.
 */
export interface PgTarget {
  host: string;
  hostaddr: string | null;
  /** A Unix-socket directory rather than a network host. */
  socket: boolean;
  settings: pg.PoolConfig;
}

/**
 * Reads DB_URL. Unix sockets (a host starting with `/`, written `%2F…`) and the `host=` and
 * `hostaddr=` parameters, which send the connection somewhere other than the URL's host part, are
 * refused unless `allowSockets` (DATASOURCES_ALLOW_SOCKETS). A URL without a host is refused too:
 * pg would fall back to PGHOST, which the deployment's own variables set.
 */
export function pgTarget(url: string | undefined, allowSockets: boolean): PgTarget {
  if (!url) throw new DataSourceUrlError(`DB_TYPE=postgres needs DB_URL, such as ${EXAMPLE}.`);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new DataSourceUrlError(`DB_URL is not a URL; it should look like ${EXAMPLE}.`);
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') throw new DataSourceUrlError('DB_URL must be a postgres:// URL.');
  if (parsed.password || parsed.searchParams.has('password'))
    throw new DataSourceUrlError('DB_URL holds a password: put it in DB_PASSWORD, whose value is stored encrypted and never shown.');
  let named: string;
  try {
    named = decodeURIComponent(parsed.hostname).replace(/^\[(.+)\]$/, '$1');
  } catch {
    throw new DataSourceUrlError(`DB_URL's host is not readable; it should look like ${EXAMPLE}.`);
  }
  // pg reads these files on this host and presents or trusts them in the TLS handshake with
  // whatever server DB_URL names: a tenant must not pick files of the server's machine.
  const files = FILE_PARAMETERS.filter((name) => parsed.searchParams.has(name));
  if (files.length > 0)
    throw new DataSourceUrlError(
      `DB_URL sets ${files.map((n) => `${n}=`).join(', ')}, which would read files on this server: remove ${files.length === 1 ? 'it' : 'them'}; sslmode=require (or verify-full against the public certificate authorities) needs no file.`,
    );
  const hostParam = parsed.searchParams.get('host');
  const hostaddr = parsed.searchParams.get('hostaddr');
  const host = hostParam ?? named;
  const socket = host.startsWith('/');
  if (!allowSockets) {
    if (socket)
      throw new DataSourceTargetRefused(
        `DB_URL names a Unix socket, which this server does not connect to: name the database server by host name or address, such as ${EXAMPLE} (${ALLOW}).`,
      );
    if (hostParam !== null || hostaddr !== null) {
      throw new DataSourceTargetRefused(
        `DB_URL sets host= or hostaddr= among its parameters, which this server does not accept: put the host in the URL itself, such as ${EXAMPLE} (${ALLOW}).`,
      );
    }
  }
  if (host === '') throw new DataSourceUrlError(`DB_URL names no host; it should look like ${EXAMPLE}.`);
  const { host: _host, hostaddr: _hostaddr, password: _password, ...settings } = parse(url) as Record<string, unknown>;
  return { host, hostaddr, socket, settings: settings as pg.PoolConfig };
}

/**
 * The password pg sends: DB_PASSWORD's value, or none. As a function, it keeps pg from falling back
 * to PGPASSWORD or a .pgpass file, which would hand a password of this host to whatever server
 * DB_URL names.
 */
export function onlyPassword(password: string | undefined): () => Promise<string> {
  return async () => password ?? '';
}

/**
 * pg's settings for the target with its host resolved once: every connection of the pool goes to
 * that one address, so a name cannot answer the identity check with one server and later
 * connections with another (DNS rebinding). TLS still checks the certificate against the name.
 */
export async function pinnedSettings(target: PgTarget): Promise<pg.PoolConfig> {
  if (target.socket) return { ...target.settings, host: target.host };
  const address = target.hostaddr ?? (net.isIP(target.host) !== 0 ? target.host : (await lookup(target.host)).address);
  const { ssl } = target.settings;
  const named = net.isIP(target.host) === 0;
  const pinnedSsl = ssl && named ? { ...(ssl === true ? {} : ssl), servername: target.host } : ssl;
  return { ...target.settings, host: address, ...(pinnedSsl === undefined ? {} : { ssl: pinnedSsl }) };
}
