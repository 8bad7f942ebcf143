import { randomBytes, type KeyObject } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { jwtVerify } from 'jose';

/**
 * A stand-in git host with a GitHub-App-style REST API: only the documented endpoints the
 * server uses. Each user (code → token) sees their own installations; repositories and branches
 * are answered only to a token whose installations hold them.
 */
export interface HostUser {
  login: string;
  code: string;
  token: string;
  /** Tokens that expire (seconds): the code also gives a refresh token, and each refresh rotates both. */
  expiresInSec?: number;
  installations: { id: number; account: string; repositories: { id: number; name: string; owner: string; defaultBranch: string; branches: string[] }[] }[];
}

export interface GitHostFixture {
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  /** Every request's method and path (with query), in order. */
  seen: string[];
  /** Access tokens revoked through `DELETE /applications/{client_id}/token`. */
  revoked: string[];
  /** Refresh grants answered, by user login. */
  refreshed: string[];
  /** How long a granted refresh's answer is held back after the token was rotated (a slow host). */
  refreshAnswerDelayMs: number;
  /** Installation tokens minted for the app, each to its installation id. */
  installationTokens: Map<string, number>;
  /** Whether an installation token may use the repository a git request path (`/owner/name.git/…`) names. */
  installationReaches(token: string, gitPath: string): boolean;
  close(): Promise<void>;
}

const PER_PAGE_DEFAULT = 30;

export interface HostOptions {
  clientId: string;
  clientSecret: string;
  /** The app: its id and public key, which the app's JWT must be signed for to get installation tokens. */
  app?: { id: string; publicKey: KeyObject };
  /** Where the repositories are served over git (`clone_url`), and how a new one is made there. */
  git?: { origin: string; create(owner: string, name: string): Promise<void> };
}

export async function startGitHost(users: HostUser[], options: HostOptions): Promise<GitHostFixture> {
  const seen: string[] = [];
  const installationTokens = new Map<string, number>();
  const installationById = (id: number) => users.flatMap((u) => u.installations).find((i) => i.id === id);
  const describeRepo = (r: { id: number; name: string; owner: string; defaultBranch: string }) => ({
    id: r.id,
    name: r.name,
    full_name: `${r.owner}/${r.name}`,
    owner: { login: r.owner },
    default_branch: r.defaultBranch,
    html_url: `https://git.example.test/${r.owner}/${r.name}`,
    clone_url: `${options.git?.origin ?? 'https://git.example.test'}/${r.owner}/${r.name}.git`,
  });
  let nextRepoId = 1000;
  const revoked: string[] = [];
  const refreshed: string[] = [];
  const refreshTokens = new Map<string, HostUser>();
  let issued = 0;
  /** A user's tokens as the host answers them; the refresh token only for expiring ones. */
  const tokensFor = (user: HostUser, accessToken: string) => {
    if (user.expiresInSec === undefined) return { access_token: accessToken, token_type: 'bearer', scope: '' };
    const refreshToken = `ghr_${user.login}_${++issued}`;
    refreshTokens.set(refreshToken, user);
    return {
      access_token: accessToken,
      token_type: 'bearer',
      scope: '',
      expires_in: user.expiresInSec,
      refresh_token: refreshToken,
      refresh_token_expires_in: 15_897_600,
    };
  };
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
    req.on('end', () => void answer().catch(() => send(res, 500, { message: 'stand-in failed' })));
    const answer = async () => {
      const url = new URL(req.url ?? '/', 'http://host');
      seen.push(`${req.method} ${url.pathname}${url.search}`);
      let m: RegExpMatchArray | null;
      if (req.method === 'POST' && (m = url.pathname.match(/^\/app\/installations\/(\d+)\/access_tokens$/))) {
        const jwt = (req.headers.authorization ?? '').replace(/^Bearer /, '');
        if (!options.app) return send(res, 404, { message: 'Not Found' });
        try {
          await jwtVerify(jwt, options.app.publicKey, { issuer: options.app.id, algorithms: ['RS256'], maxTokenAge: '10m' });
        } catch {
          return send(res, 401, { message: 'A JSON web token could not be decoded' });
        }
        if (!installationById(Number(m[1]))) return send(res, 404, { message: 'Not Found' });
        const token = `ghs_${randomBytes(18).toString('hex')}`;
        installationTokens.set(token, Number(m[1]));
        return send(res, 201, { token, expires_at: new Date(Date.now() + 3600_000).toISOString() });
      }
      if (req.method === 'POST' && url.pathname === '/login/oauth/access_token') {
        const form = new URLSearchParams(raw);
        if (form.get('client_id') !== options.clientId || form.get('client_secret') !== options.clientSecret)
          return send(res, 200, { error: 'incorrect_client_credentials' });
        if (form.get('grant_type') === 'refresh_token') {
          const owner = refreshTokens.get(form.get('refresh_token') ?? '');
          if (!owner) return send(res, 200, { error: 'bad_refresh_token' });
          // Rotation: the refresh token and the old access token stop working.
          refreshTokens.delete(form.get('refresh_token') ?? '');
          for (const [token, u] of byToken) if (u === owner) byToken.delete(token);
          const next = `${owner.token}-refreshed-${++issued}`;
          byToken.set(next, owner);
          refreshed.push(owner.login);
          const answer = tokensFor(owner, next);
          if (fixture.refreshAnswerDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, fixture.refreshAnswerDelayMs));
          return send(res, 200, answer);
        }
        const user = users.find((u) => u.code === form.get('code'));
        if (!user) return send(res, 200, { error: 'bad_verification_code' });
        byToken.set(user.token, user);
        return send(res, 200, tokensFor(user, user.token));
      }
      if (req.method === 'DELETE' && url.pathname === `/applications/${options.clientId}/token`) {
        if (req.headers.authorization !== `Basic ${Buffer.from(`${options.clientId}:${options.clientSecret}`).toString('base64')}`)
          return send(res, 401, { message: 'Bad credentials' });
        const token = (JSON.parse(raw) as { access_token?: string }).access_token ?? '';
        if (!byToken.delete(token)) return send(res, 404, { message: 'Not Found' });
        revoked.push(token);
        res.writeHead(204);
        return res.end();
      }
      const user = byToken.get((req.headers.authorization ?? '').replace(/^Bearer /, ''));
      if (!user) return send(res, 401, { message: 'Bad credentials' });
      if (url.pathname === '/user') return send(res, 200, { login: user.login, id: 1 });
      if (req.method === 'POST' && (url.pathname === '/user/repos' || (m = url.pathname.match(/^\/orgs\/([^/]+)\/repos$/)))) {
        const owner = url.pathname === '/user/repos' ? user.login : m![1]!;
        const installation = user.installations.find((i) => i.account === owner);
        if (!installation) return send(res, 404, { message: 'Not Found' });
        const body = JSON.parse(raw) as { name: string };
        if (installation.repositories.some((r) => r.name === body.name))
          return send(res, 422, { message: 'Repository creation failed.', errors: [{ message: 'name already exists on this account' }] });
        const made = { id: nextRepoId++, name: body.name, owner, defaultBranch: 'main', branches: [] };
        await options.git?.create(owner, body.name);
        installation.repositories.push(made);
        return send(res, 201, describeRepo(made));
      }
      if (url.pathname === '/user/installations') {
        const all = user.installations.map((i) => ({
          id: i.id,
          account: {
            login: i.account,
            id: i.id * 10,
            avatar_url: `https://avatars.example.test/${i.account}`,
            type: i.account === user.login ? 'User' : 'Organization',
          },
        }));
        return send(res, 200, { total_count: all.length, installations: pageOf(all, url) });
      }
      if ((m = url.pathname.match(/^\/user\/installations\/(\d+)\/repositories$/))) {
        const installation = user.installations.find((i) => i.id === Number(m![1]));
        if (!installation) return send(res, 404, { message: 'Not Found' });
        const all = installation.repositories.map((r) => ({
          id: r.id,
          name: r.name,
          full_name: `${r.owner}/${r.name}`,
          html_url: `https://git.example.test/${r.owner}/${r.name}`,
        }));
        return send(res, 200, { total_count: all.length, repositories: pageOf(all, url) });
      }
      if ((m = url.pathname.match(/^\/repos\/([^/]+)\/([^/]+)(\/branches)?$/))) {
        const repo = user.installations.flatMap((i) => i.repositories).find((r) => r.owner === m![1] && r.name === m![2]);
        if (!repo) return send(res, 404, { message: 'Not Found' });
        if (m[3] === undefined) return send(res, 200, describeRepo(repo));
        return send(
          res,
          200,
          pageOf(
            repo.branches.map((name) => ({ name, commit: { sha: '0'.repeat(40) }, protected: false })),
            url,
          ),
        );
      }
      send(res, 404, { message: 'Not Found' });
    };
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const fixture: GitHostFixture = {
    baseUrl: `http://127.0.0.1:${port}`,
    clientId: options.clientId,
    clientSecret: options.clientSecret,
    seen,
    revoked,
    refreshed,
    refreshAnswerDelayMs: 0,
    installationTokens,
    installationReaches(token, gitPath) {
      const installation = installationById(installationTokens.get(token) ?? -1);
      const match = /^\/([^/]+)\/([^/]+)\.git(\/|$)/.exec(gitPath);
      return installation !== undefined && match !== null && installation.repositories.some((r) => r.owner === match[1] && r.name === match[2]);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  return fixture;
}
