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
  requests: Array<{ path: string; authorized: boolean }>;
  close(): Promise<void>;
}

export async function startGitServer(token: string): Promise<GitServer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mapi-git-server-'));
  const gitDir = path.join(dir, 'shop.git');
  await runGit({ args: ['init', '--quiet', '--bare', '--initial-branch=main', gitDir] });
  const { key, cert } = await selfSignedLocalhost();
  const caFile = path.join(dir, 'ca.pem');
  fs.writeFileSync(caFile, cert);
  const expected = `Basic ${Buffer.from(`x-access-token:${token}`).toString('base64')}`;
  const requests: GitServer['requests'] = [];

  const server = https.createServer({ key, cert }, (req, res) => {
    const url = new URL(req.url ?? '/', 'https://git.test');
    const authorized = req.headers.authorization === expected;
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
    caFile,
    repo: new Repository(gitDir),
    requests,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
