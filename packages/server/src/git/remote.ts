import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { GitError, gitText, runGit } from './run.js';

/** A read of another server's repository that did not give the file; its message is for the user as it is, and never holds the token. */
export class RemoteReadError extends Error {
  constructor(
    readonly reason: 'refused-token' | 'not-found' | 'no-ref' | 'unreachable',
    message: string,
  ) {
    super(message);
    this.name = 'RemoteReadError';
  }
}

export interface RemoteRead {
  /** An https URL without credentials, query or fragment. */
  url: URL;
  /** The address to connect to for the URL's host, already checked (Outbound.pinnedAddress): nothing else is looked up or reached. */
  address: string;
  /** Sent as the password of HTTP basic authentication (user `x-access-token`); null: none. */
  token: string | null;
  /** A branch or tag of that repository. */
  ref: string;
  /** The file, from the repository's root. */
  filePath: string;
  /** Every certificate authority trusted, as PEM; null: git's own list. */
  trustedCertificates: string | null;
  timeoutMs: number;
}

/** What git prints when the server refused the credentials, or asked for some and got none. */
const REFUSED = /returned error: (401|403)|Authentication failed|could not read Username|terminal prompts disabled/;
const NOT_FOUND = /returned error: 404|repository '.*' not found/;
const NO_REF = /couldn't find remote ref/;

/**
 * Reads one file at a branch or tag of another server's repository over HTTPS, with git's smart
 * HTTP protocol: a shallow fetch of that one commit into a scratch repository, removed after.
 * The connection goes to the checked address only (curl's resolve list pins the host name to
 * it), follows no redirect, uses no proxy and no protocol but https; the token travels in an
 * Authorization header given through the environment, so it is in no URL, argument, file or
 * message. Nothing from the repository runs.
 */
export async function readRemoteFile(read: RemoteRead): Promise<{ commit: string; content: Buffer | null }> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'mapi-remote-'));
  try {
    const gitDir = path.join(dir, 'scratch.git');
    await runGit({ args: ['init', '--quiet', '--bare', gitDir] });
    const port = read.url.port === '' ? '443' : read.url.port;
    const host = read.url.hostname.replace(/^\[|\]$/g, '');
    const config: Array<[string, string]> = [
      ['protocol.allow', 'never'],
      ['protocol.https.allow', 'always'],
      ['http.followRedirects', 'false'],
      ['http.proxy', ''],
      ['http.curloptResolve', `${host}:${port}:${read.address.includes(':') ? `[${read.address}]` : read.address}`],
      // A stalled server is given up on, as the outbound service would.
      ['http.lowSpeedLimit', '1'],
      ['http.lowSpeedTime', String(Math.max(1, Math.ceil(read.timeoutMs / 1000)))],
      ['credential.helper', ''],
    ];
    if (read.token !== null) config.push(['http.extraHeader', `Authorization: Basic ${Buffer.from(`x-access-token:${read.token}`).toString('base64')}`]);
    if (read.trustedCertificates !== null) {
      const caFile = path.join(dir, 'ca.pem');
      await fs.writeFile(caFile, read.trustedCertificates, { mode: 0o600 });
      config.push(['http.sslCAInfo', caFile]);
    }
    // GIT_CONFIG_COUNT/KEY/VALUE: configuration that no other process sees in a command line.
    const env: Record<string, string> = { GIT_CONFIG_COUNT: String(config.length) };
    config.forEach(([key, value], i) => {
      env[`GIT_CONFIG_KEY_${i}`] = key;
      env[`GIT_CONFIG_VALUE_${i}`] = value;
    });
    const shown = `${read.url.origin}${read.url.pathname}`;
    try {
      await runGit({ gitDir, args: ['fetch', '--quiet', '--depth=1', '--no-tags', '--no-write-fetch-head', read.url.href, `+${read.ref}:refs/remote-read`], env, timeoutMs: read.timeoutMs * 3 });
    } catch (error) {
      if (!(error instanceof GitError)) throw error;
      const stderr = error.stderr.split(read.token ?? '\u0000').join('***');
      if (REFUSED.test(stderr)) throw new RemoteReadError('refused-token', `${shown} refused the access token (HTTP 401/403): save a token that may read the repository in the dbt-sync settings.`);
      if (NOT_FOUND.test(stderr)) throw new RemoteReadError('not-found', `${shown} has no repository there (HTTP 404), or the token may not see it.`);
      if (NO_REF.test(stderr)) throw new RemoteReadError('no-ref', `${shown} has no branch or tag ${read.ref}.`);
      if (error.exitCode === null) throw new RemoteReadError('unreachable', `${shown} did not answer within ${read.timeoutMs * 3} ms.`);
      const last = stderr.trim().split('\n').slice(-1)[0] ?? '';
      throw new RemoteReadError('unreachable', `${shown} could not be read with git: ${last.replace(/^fatal: /, '')}`);
    }
    const commit = await gitText({ gitDir, args: ['rev-parse', '--verify', 'refs/remote-read^{commit}'] });
    const listed = await gitText({ gitDir, args: ['ls-tree', '-z', commit, '--', read.filePath] });
    const match = /^\d+ blob ([0-9a-f]{40,64})\t/.exec(listed);
    if (!match?.[1]) return { commit, content: null };
    const { stdout } = await runGit({ gitDir, args: ['cat-file', 'blob', match[1]] });
    return { commit, content: stdout };
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}
