import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A stand-in git host with a GitHub-App-style REST API: only the documented endpoints the
 * server uses. Each user (code → token) sees their own installations; repositories and branches
 * are answered only to a token whose installations hold them.
 */
export interface HostUser {
  login: string;
  code: string;
  token: string;
  installations: { id: number; account: string; repositories: { id: number; name: string; owner: string; defaultBranch: string; branches: string[] }[] }[];
}

export interface GitHostFixture {
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  /** Every request's method and path (with query), in order. */
  seen: string[];
  close(): Promise<void>;
}

const PER_PAGE_DEFAULT = 30;

export async function startGitHost(users: HostUser[], options: { clientId: string; clientSecret: string }): Promise<GitHostFixture> {
  const seen: string[] = [];
  const byToken = new Map(users.map((u) => [u.token, u]));
  const send = (res: http.ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const pageOf = <T>(items: T[], url: URL) => {
    const per = Number(url.searchParams.get('per_page') ?? PER_PAGE_DEFAULT);
    const page = Number(url.searchParams.get('page') ?? 1);
    return items.slice((page - 1) * per, page * per);
  };

  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://host');
      seen.push(`${req.method} ${url.pathname}${url.search}`);
      if (req.method === 'POST' && url.pathname === '/login/oauth/access_token') {
        const form = new URLSearchParams(raw);
        if (form.get('client_id') !== options.clientId || form.get('client_secret') !== options.clientSecret) return send(res, 200, { error: 'incorrect_client_credentials' });
        const user = users.find((u) => u.code === form.get('code'));
        if (!user) return send(res, 200, { error: 'bad_verification_code' });
        return send(res, 200, { access_token: user.token, token_type: 'bearer', scope: '' });
      }
      const user = byToken.get((req.headers.authorization ?? '').replace(/^Bearer /, ''));
      if (!user) return send(res, 401, { message: 'Bad credentials' });
      let m: RegExpMatchArray | null;
      if (url.pathname === '/user') return send(res, 200, { login: user.login, id: 1 });
      if (url.pathname === '/user/installations') {
        const all = user.installations.map((i) => ({ id: i.id, account: { login: i.account, id: i.id * 10, avatar_url: `https://avatars.example.test/${i.account}` } }));
        return send(res, 200, { total_count: all.length, installations: pageOf(all, url) });
      }
      if ((m = url.pathname.match(/^\/user\/installations\/(\d+)\/repositories$/))) {
        const installation = user.installations.find((i) => i.id === Number(m![1]));
        if (!installation) return send(res, 404, { message: 'Not Found' });
        const all = installation.repositories.map((r) => ({ id: r.id, name: r.name, full_name: `${r.owner}/${r.name}`, html_url: `https://git.example.test/${r.owner}/${r.name}` }));
        return send(res, 200, { total_count: all.length, repositories: pageOf(all, url) });
      }
      if ((m = url.pathname.match(/^\/repos\/([^/]+)\/([^/]+)(\/branches)?$/))) {
        const repo = user.installations.flatMap((i) => i.repositories).find((r) => r.owner === m![1] && r.name === m![2]);
        if (!repo) return send(res, 404, { message: 'Not Found' });
        if (m[3] === undefined) return send(res, 200, { id: repo.id, name: repo.name, default_branch: repo.defaultBranch });
        return send(res, 200, pageOf(repo.branches.map((name) => ({ name, commit: { sha: '0'.repeat(40) }, protected: false })), url));
      }
      send(res, 404, { message: 'Not Found' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    ...options,
    seen,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
