import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { GitError, gitText, runGit } from './run.js';

/** A call to another server's repository that did not do what was asked; its message is for the user as it is, and never holds the token. */
export class RemoteReadError extends Error {
  constructor(
    readonly reason: 'refused-token' | 'not-found' | 'no-ref' | 'unreachable' | 'rejected',
    message: string,
  ) {
    super(message);
    this.name = 'RemoteReadError';
  }
}

/** Another server's repository and how to reach it. */
export interface RemoteEndpoint {
  /** An https URL without credentials, query or fragment. */
  url: URL;
  /** The address to connect to for the URL's host, already checked (Outbound.pinnedAddress): nothing else is looked up or reached. */
  address: string;
  /** Sent as the password of HTTP basic authentication (user `x-access-token`); null: none. */
  token: string | null;
  /** Every certificate authority trusted, as PEM; null: git's own list. */
  trustedCertificates: string | null;
  timeoutMs: number;
}

export interface RemoteRead extends RemoteEndpoint {
  /** A branch or tag of that repository. */
  ref: string;
  /** The file, from the repository's root. */
  filePath: string;
}

/** What git prints when the server refused the credentials, or asked for some and got none. */
const REFUSED = /returned error: (401|403)|Authentication failed|could not read Username|terminal prompts disabled/;
const NOT_FOUND = /returned error: 404|repository '.*' not found/;
const NO_REF = /couldn't find remote ref/;

/**
 * Runs `fn` with the environment that points git at the remote safely: the connection goes to
 * the checked address only (curl's resolve list pins the host name to it), follows no redirect,
 * uses no proxy and no protocol but https; the token travels in an Authorization header given
 * through the environment, so it is in no URL, argument, file or message.
 */
async function withRemote<T>(remote: RemoteEndpoint, fn: (env: Record<string, string>, scratch: string) => Promise<T>): Promise<T> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'mapi-remote-'));
  try {
    const port = remote.url.port === '' ? '443' : remote.url.port;
    const host = remote.url.hostname.replace(/^\[|\]$/g, '');
    const config: Array<[string, string]> = [
      ['protocol.allow', 'never'],
      ['protocol.https.allow', 'always'],
      ['http.followRedirects', 'false'],
      ['http.proxy', ''],
      ['http.curloptResolve', `${host}:${port}:${remote.address.includes(':') ? `[${remote.address}]` : remote.address}`],
      // A stalled server is given up on, as the outbound service would.
      ['http.lowSpeedLimit', '1'],
      ['http.lowSpeedTime', String(Math.max(1, Math.ceil(remote.timeoutMs / 1000)))],
      ['credential.helper', ''],
      // Objects from another server are checked before they are kept.
      ['fetch.fsckObjects', 'true'],
    ];
    if (remote.token !== null) config.push(['http.extraHeader', `Authorization: Basic ${Buffer.from(`x-access-token:${remote.token}`).toString('base64')}`]);
    if (remote.trustedCertificates !== null) {
      const caFile = path.join(dir, 'ca.pem');
      await fs.writeFile(caFile, remote.trustedCertificates, { mode: 0o600 });
      config.push(['http.sslCAInfo', caFile]);
    }
    // GIT_CONFIG_COUNT/KEY/VALUE: configuration that no other process sees in a command line.
    const env: Record<string, string> = { GIT_CONFIG_COUNT: String(config.length) };
    config.forEach(([key, value], i) => {
      env[`GIT_CONFIG_KEY_${i}`] = key;
      env[`GIT_CONFIG_VALUE_${i}`] = value;
    });
    return await fn(env, dir);
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

/** A failed git command against a remote, as a RemoteReadError whose message names the repository (never the token). */
function remoteFailure(error: unknown, remote: RemoteEndpoint, ref: string, refusedHint: string): never {
  if (!(error instanceof GitError)) throw error;
  const shown = `${remote.url.origin}${remote.url.pathname}`;
  const stderr = error.stderr.split(remote.token ?? '\u0000').join('***');
  if (REFUSED.test(stderr)) throw new RemoteReadError('refused-token', `${shown} refused the access token (HTTP 401/403)${refusedHint}.`);
  if (NOT_FOUND.test(stderr)) throw new RemoteReadError('not-found', `${shown} has no repository there (HTTP 404), or the token may not see it.`);
  if (NO_REF.test(stderr)) throw new RemoteReadError('no-ref', `${shown} has no branch or tag ${ref}.`);
  if (error.exitCode === null) throw new RemoteReadError('unreachable', `${shown} did not answer within ${remote.timeoutMs * 3} ms.`);
  const last = stderr.trim().split('\n').slice(-1)[0] ?? '';
  throw new RemoteReadError('unreachable', `${shown} could not be reached with git: ${last.replace(/^fatal: /, '')}`);
}

/**
 * Fetches a branch of another server's repository (its whole history that `gitDir` lacks) into
 * `into`, a ref of this repository, replacing it; the fetched commit, or null when the remote has
 * no such branch. Nothing from the repository runs.
 */
export async function fetchRemoteBranch(gitDir: string, remote: RemoteEndpoint, branch: string, into: string): Promise<string | null> {
  return withRemote(remote, async (env) => {
    try {
      await runGit({
        gitDir,
        args: ['fetch', '--quiet', '--no-tags', '--no-write-fetch-head', remote.url.href, `+refs/heads/${branch}:${into}`],
        env,
        timeoutMs: remote.timeoutMs * 3,
      });
    } catch (error) {
      if (error instanceof GitError && NO_REF.test(error.stderr)) return null;
      remoteFailure(error, remote, branch, '');
    }
    return gitText({ gitDir, args: ['rev-parse', '--verify', `${into}^{commit}`] });
  });
}

/**
 * Moves a branch of another server's repository: to `commit` (sent with what it needs; the
 * remote takes only a fast-forward, so commits made there are never overwritten), or deleted
 * (null; a branch the remote does not have counts as deleted). A refused update is a
 * RemoteReadError `rejected`.
 */
export async function pushRemoteBranch(gitDir: string, remote: RemoteEndpoint, branch: string, commit: string | null): Promise<void> {
  await withRemote(remote, async (env) => {
    try {
      await runGit({ gitDir, args: ['push', remote.url.href, `${commit ?? ''}:refs/heads/${branch}`], env, timeoutMs: remote.timeoutMs * 3 });
    } catch (error) {
      if (!(error instanceof GitError)) throw error;
      const said = `${error.stderr}\n${error.message}`;
      if (commit === null && /remote ref does not exist/.test(said)) return;
      if (/\[rejected\]|non-fast-forward|fetch first|\[remote rejected\]/.test(said)) {
        throw new RemoteReadError(
          'rejected',
          `${remote.url.origin}${remote.url.pathname} did not take the update of ${branch}: it has commits this deployment does not have.`,
        );
      }
      remoteFailure(error, remote, branch, '');
    }
  });
}

/**
 * Reads one file at a branch or tag of another server's repository over HTTPS, with git's smart
 * HTTP protocol: a shallow fetch of that one commit into a scratch repository, removed after.
 * Nothing from the repository runs.
 */
export async function readRemoteFile(read: RemoteRead): Promise<{ commit: string; content: Buffer | null }> {
  return withRemote(read, async (env, dir) => {
    const gitDir = path.join(dir, 'scratch.git');
    await runGit({ args: ['init', '--quiet', '--bare', gitDir] });
    try {
      await runGit({
        gitDir,
        args: ['fetch', '--quiet', '--depth=1', '--no-tags', '--no-write-fetch-head', read.url.href, `+${read.ref}:refs/remote-read`],
        env,
        timeoutMs: read.timeoutMs * 3,
      });
    } catch (error) {
      remoteFailure(error, read, read.ref, ': save a token that may read the repository in the dbt-sync settings');
    }
    const commit = await gitText({ gitDir, args: ['rev-parse', '--verify', 'refs/remote-read^{commit}'] });
    const listed = await gitText({ gitDir, args: ['ls-tree', '-z', commit, '--', read.filePath] });
    const match = /^\d+ blob ([0-9a-f]{40,64})\t/.exec(listed);
    if (!match?.[1]) return { commit, content: null };
    const { stdout } = await runGit({ gitDir, args: ['cat-file', 'blob', match[1]] });
    return { commit, content: stdout };
  });
}
