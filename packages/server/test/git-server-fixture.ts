import fs from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { serveSmartHttp } from '../src/git/http-backend.js';
import { Repository } from '../src/git/repository.js';
import { runGit } from '../src/git/run.js';
import { selfSignedLocalhost } from '../src/tls.js';

/**
 * Another server's git repository, as a hosted git service serves one: real `git http-backend`
 * behind a small HTTPS server on loopback that asks for HTTP basic authentication and takes one
 * token as the password. It records every request's path and whether its credentials were good.
 */
export interface GitServer {
  /** `https://127.0.0.1:<port>/shop.git` */
  url: string;
  /** A file of the server's certificate, to trust it (OUTBOUND_CA_FILE). */
  caFile: string;
  repo: Repository;
  /** The server's origin, `https://127.0.0.1:<port>`. */
  origin: string;
  /** A new empty repository at `relPath` (such as `acme/models.git`), served at `<origin>/<relPath>`. */
  createRepo(relPath: string): Promise<Repository>;
  /** The repository at `relPath`, or null when there is none. */
  repoAt(relPath: string): Repository | null;
  requests: Array<{ path: string; authorized: boolean }>;
  close(): Promise<void>;
}

/**
 * `auth` is the one token every repository takes, or a check of the token presented for a
 * request's path (a host's installation tokens, each good for its own repositories).
 */
export async function startGitServer(auth: string | ((token: string, path: string) => boolean)): Promise<GitServer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mapi-git-server-'));
  const gitDir = path.join(dir, 'shop.git');
  await runGit({ args: ['init', '--quiet', '--bare', '--initial-branch=main', gitDir] });
  const accepts = typeof auth === 'string' ? (token: string) => token === auth : auth;
  const tokenOf = (header: string | undefined) => {
    const match = /^Basic (.+)$/.exec(header ?? '');
    if (!match?.[1]) return null;
    const [user, ...rest] = Buffer.from(match[1], 'base64').toString('utf8').split(':');
    return user === 'x-access-token' ? rest.join(':') : null;
  };
  const { key, cert } = await selfSignedLocalhost();
  const caFile = path.join(dir, 'ca.pem');
  fs.writeFileSync(caFile, cert);
  const requests: GitServer['requests'] = [];

  const server = https.createServer({ key, cert }, (req, res) => {
    const url = new URL(req.url ?? '/', 'https://git.test');
    const token = tokenOf(req.headers.authorization);
    const authorized = token !== null && accepts(token, url.pathname);
    requests.push({ path: url.pathname, authorized });
    if (!authorized) {
      res.writeHead(401, { 'www-authenticate': 'Basic realm="git"', 'content-type': 'text/plain' });
      res.end('token required\n');
      return;
    }
    const header = (name: string) => {
      const value = req.headers[name];
      return Array.isArray(value) ? value[0] : value;
    };
    serveSmartHttp(dir, {
      method: req.method ?? 'GET',
      pathInfo: url.pathname,
      query: url.search.slice(1),
      contentType: header('content-type'),
      contentEncoding: header('content-encoding'),
      gitProtocol: header('git-protocol'),
      body: req.method === 'POST' ? req : null,
      remoteUser: 'reader',
      remoteAddr: req.socket.remoteAddress ?? '',
      hookEnv: {},
    }).then(
      (answer) => {
        res.writeHead(answer.status, answer.headers);
        answer.body.pipe(res);
      },
      () => {
        res.writeHead(500);
        res.end();
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `https://127.0.0.1:${port}/shop.git`,
    origin: `https://127.0.0.1:${port}`,
    caFile,
    repo: new Repository(gitDir),
    async createRepo(relPath) {
      const at = path.join(dir, relPath);
      await runGit({ args: ['init', '--quiet', '--bare', '--initial-branch=main', at] });
      return new Repository(at);
    },
    repoAt(relPath) {
      const at = path.join(dir, relPath);
      return fs.existsSync(path.join(at, 'HEAD')) ? new Repository(at) : null;
    },
    requests,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
