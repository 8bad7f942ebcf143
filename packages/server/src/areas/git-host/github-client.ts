import type { Outbound } from '../../outbound/index.js';

/**
 * A git host with a GitHub-App-style REST API, reached only through `outbound/` (its address
 * guard, timeouts, retries of reads, logs without queries, headers or bodies). Only the
 * documented endpoints are used: the user authorization (`/login/oauth/authorize` and
 * `/login/oauth/access_token` on the web origin), `/user`, `/user/installations`,
 * `/user/installations/{id}/repositories`, `/repos/{owner}/{repo}` and its `/branches`, the
 * repository creation of `/orgs/{org}/repos` and `/user/repos`, and the app's
 * `/app/installations/{id}/access_tokens`.
 */
export interface HostSettings {
  apiBaseUrl: string;
  webBaseUrl: string;
  appSlug: string;
  clientId: string;
}

export interface Installation {
  id: number;
  login: string;
  avatarUrl: string;
  /** Whether the account is an organisation (repositories are created under `/orgs/…`) or a user. */
  organization: boolean;
}

/** A repository as connecting needs it: where git reaches it and its default branch. */
export interface HostRepository {
  id: number;
  owner: string;
  name: string;
  cloneUrl: string;
  defaultBranch: string;
}

export interface Repository {
  id: number;
  name: string;
  htmlUrl: string;
}

/** The host answered, but not with what was asked: `status` null when the body was unusable. */
export class HostError extends Error {
  constructor(
    readonly status: number | null,
    message: string,
  ) {
    super(message);
    this.name = 'HostError';
  }
}

/** The most pages of 100 read from one list: lists longer than this are cut (docs/api/git-host.md). */
export const MAX_PAGES = 20;
const PER_PAGE = 100;

const joined = (base: string, path: string) => `${base.replace(/\/+$/, '')}${path}`;

/** Where the user authorizes the app to act for them; the host sends them to the app's callback URL. */
export function authorizeUrl(host: HostSettings, state: string): string {
  const url = new URL(joined(host.webBaseUrl, '/login/oauth/authorize'));
  url.searchParams.set('client_id', host.clientId);
  url.searchParams.set('state', state);
  return url.toString();
}

/** Where the app is installed on an organisation or account (the host's own settings page). */
export function installUrl(host: HostSettings): string {
  return joined(host.webBaseUrl, `/apps/${encodeURIComponent(host.appSlug)}/installations/new`);
}

/** A user's tokens from the host; the refresh token and expiry only from hosts whose user tokens expire. */
export interface UserTokens {
  accessToken: string;
  refreshToken: string | null;
  expiresAt: string | null;
}

export function gitHostClient(outbound: Outbound, host: HostSettings) {
  /** The web origin's token endpoint, which reports a refused grant with 200 and an `error`. */
  async function tokenRequest(form: Record<string, string>, now: Date): Promise<UserTokens> {
    const response = await outbound.request(joined(host.webBaseUrl, '/login/oauth/access_token'), {
      method: 'POST',
      headers: { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'mapi' },
      body: new URLSearchParams(form).toString(),
    });
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(response.body) as Record<string, unknown>;
    } catch {
      // Handled below as no token.
    }
    if (typeof body.access_token === 'string' && body.access_token !== '') {
      const expiresIn = typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : null;
      return {
        accessToken: body.access_token,
        refreshToken: typeof body.refresh_token === 'string' && body.refresh_token !== '' ? body.refresh_token : null,
        expiresAt: expiresIn === null ? null : new Date(now.getTime() + expiresIn * 1000).toISOString(),
      };
    }
    const error = typeof body.error === 'string' ? body.error.replace(/[^\x20-\x7E]/g, '?').slice(0, 100) : null;
    throw new HostError(
      response.status >= 500 ? response.status : error === null ? null : 400,
      error ?? `the git host answered ${response.status} without a token`,
    );
  }

  async function getJson(path: string, token: string): Promise<unknown> {
    const response = await outbound.request(joined(host.apiBaseUrl, path), {
      headers: { accept: 'application/vnd.github+json', authorization: `Bearer ${token}`, 'user-agent': 'mapi' },
    });
    if (response.status !== 200) throw new HostError(response.status, `the git host answered ${response.status}`);
    try {
      return JSON.parse(response.body) as unknown;
    } catch {
      throw new HostError(null, 'the git host answered something other than JSON');
    }
  }

  /** Every page of a list, `pick` taking the items out of each answer. */
  async function all<T>(path: string, token: string, pick: (body: unknown) => unknown[], map: (item: Record<string, unknown>) => T): Promise<T[]> {
    const out: T[] = [];
    const sep = path.includes('?') ? '&' : '?';
    for (let page = 1; page <= MAX_PAGES; page++) {
      const items = pick(await getJson(`${path}${sep}per_page=${PER_PAGE}&page=${page}`, token));
      for (const item of items) if (item !== null && typeof item === 'object') out.push(map(item as Record<string, unknown>));
      if (items.length < PER_PAGE) break;
    }
    return out;
  }

  const parsed = (body: string): unknown => {
    try {
      return JSON.parse(body) as unknown;
    } catch {
      throw new HostError(null, 'the git host answered something other than JSON');
    }
  };
  const hostRepository = (body: unknown): HostRepository => {
    const r = (body ?? {}) as Record<string, unknown>;
    const owner = (r.owner ?? {}) as Record<string, unknown>;
    if (typeof r.clone_url !== 'string' || typeof r.name !== 'string') throw new HostError(null, 'the git host described the repository without `clone_url`');
    return { id: Number(r.id), owner: text(owner.login), name: r.name, cloneUrl: r.clone_url, defaultBranch: text(r.default_branch) };
  };

  const field = (body: unknown, name: string): unknown[] => {
    const value = body !== null && typeof body === 'object' ? (body as Record<string, unknown>)[name] : undefined;
    if (!Array.isArray(value)) throw new HostError(null, `the git host's answer has no \`${name}\` list`);
    return value;
  };
  const list = (body: unknown): unknown[] => {
    if (!Array.isArray(body)) throw new HostError(null, 'the git host answered no list');
    return body;
  };
  const text = (value: unknown) => (typeof value === 'string' ? value : '');

  return {
    /** Exchanges the code the host sent the user back with for the user's tokens. */
    exchangeCode(clientSecret: string, code: string, now: Date): Promise<UserTokens> {
      return tokenRequest({ client_id: host.clientId, client_secret: clientSecret, code }, now);
    },

    /** New tokens for a refresh token (the host rotates it: the one used stops working). */
    refresh(clientSecret: string, refreshToken: string, now: Date): Promise<UserTokens> {
      return tokenRequest({ client_id: host.clientId, client_secret: clientSecret, grant_type: 'refresh_token', refresh_token: refreshToken }, now);
    },

    /** Revokes the user's token at the host (the app's client credentials, basic authentication). */
    async revoke(clientSecret: string, accessToken: string): Promise<void> {
      const response = await outbound.request(joined(host.apiBaseUrl, `/applications/${encodeURIComponent(host.clientId)}/token`), {
        method: 'DELETE',
        headers: {
          accept: 'application/vnd.github+json',
          authorization: `Basic ${Buffer.from(`${host.clientId}:${clientSecret}`).toString('base64')}`,
          'content-type': 'application/json',
          'user-agent': 'mapi',
        },
        body: JSON.stringify({ access_token: accessToken }),
      });
      // 404: the host no longer knows the token, which is what revoking wants.
      if (response.status !== 204 && response.status !== 404)
        throw new HostError(response.status, `the git host answered ${response.status} to the revocation`);
    },

    async userLogin(token: string): Promise<string> {
      const body = await getJson('/user', token);
      return text((body as Record<string, unknown> | null)?.login);
    },

    /** The app's installations the user can reach. */
    installations(token: string): Promise<Installation[]> {
      return all(
        '/user/installations',
        token,
        (b) => field(b, 'installations'),
        (i) => {
          const account = (i.account ?? {}) as Record<string, unknown>;
          return { id: Number(i.id), login: text(account.login), avatarUrl: text(account.avatar_url), organization: account.type === 'Organization' };
        },
      );
    },

    /** The repositories of one installation the user can reach. */
    repositories(token: string, installationId: number): Promise<Repository[]> {
      return all(
        `/user/installations/${installationId}/repositories`,
        token,
        (b) => field(b, 'repositories'),
        (r) => ({ id: Number(r.id), name: text(r.name), htmlUrl: text(r.html_url) }),
      );
    },

    async repository(token: string, owner: string, repo: string): Promise<HostRepository> {
      return hostRepository(await getJson(`/repos/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}`, token));
    },

    /**
     * Creates an empty repository with the user's token: under the organisation, or the user's
     * own. 422 (the host's "name already exists") comes back as a HostError with that status.
     */
    async createRepository(token: string, organization: string | null, name: string, isPrivate: boolean): Promise<HostRepository> {
      const response = await outbound.request(
        joined(host.apiBaseUrl, organization === null ? '/user/repos' : `/orgs/${encodeURIComponent(organization)}/repos`),
        {
          method: 'POST',
          headers: { accept: 'application/vnd.github+json', authorization: `Bearer ${token}`, 'content-type': 'application/json', 'user-agent': 'mapi' },
          body: JSON.stringify({ name, private: isPrivate, auto_init: false }),
        },
      );
      if (response.status !== 201) throw new HostError(response.status, `the git host answered ${response.status}`);
      return hostRepository(parsed(response.body));
    },

    /** A token of the app's installation (about an hour), for git; asked for with the app's own JWT. */
    async installationToken(appJwt: string, installationId: number): Promise<string> {
      const response = await outbound.request(joined(host.apiBaseUrl, `/app/installations/${installationId}/access_tokens`), {
        method: 'POST',
        headers: { accept: 'application/vnd.github+json', authorization: `Bearer ${appJwt}`, 'user-agent': 'mapi' },
      });
      if (response.status !== 201) throw new HostError(response.status, `the git host answered ${response.status} to the app`);
      const token = (parsed(response.body) as Record<string, unknown> | null)?.token;
      if (typeof token !== 'string' || token === '') throw new HostError(null, 'the git host gave the app no installation token');
      return token;
    },

    async defaultBranch(token: string, owner: string, repo: string): Promise<string> {
      const body = await getJson(`/repos/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}`, token);
      return text((body as Record<string, unknown> | null)?.default_branch);
    },

    branches(token: string, owner: string, repo: string): Promise<string[]> {
      return all(`/repos/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}/branches`, token, list, (b) => text(b.name));
    },
  };
}
