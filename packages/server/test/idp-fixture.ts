import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

/** A person at the identity provider: the claims it asserts about them. */
export interface IdpAccount {
  sub: string;
  email?: string;
  email_verified?: boolean;
}

/**
 * A tenant's identity provider for the tests: a real OpenID provider (oidc-provider) on loopback,
 * with its own users. Its login page is answered by a minimal handler: the account last chosen
 * with `signInAs` signs in and consents, as a person clicking through the provider's pages would.
 * Email claims are served from its UserInfo endpoint (the library's default for code flows).
 */
export interface IdpFixture {
  issuer: string;
  clientId: string;
  clientSecret: string;
  signInAs(sub: string): void;
  /** How many times the discovery document was read. */
  discoveries(): number;
  close(): Promise<void>;
}

export async function startIdp(options: { redirectUri: string; accounts: IdpAccount[] }): Promise<IdpFixture> {
  const accounts = new Map(options.accounts.map((a) => [a.sub, a]));
  let current = options.accounts[0]!.sub;
  const clientId = 'mapi-sign-in';
  const clientSecret = `idp-client-secret-${Math.random().toString(36).slice(2)}`;
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const provider = new Provider(issuer, {
    clients: [
      { client_id: clientId, client_secret: clientSecret, redirect_uris: [options.redirectUri], grant_types: ['authorization_code'], response_types: ['code'] },
    ],
    features: { devInteractions: { enabled: false } },
    claims: { openid: ['sub'], email: ['email', 'email_verified'] },
    findAccount: async (_ctx: unknown, sub: string) => {
      const account = accounts.get(sub);
      if (!account) return undefined;
      return { accountId: sub, claims: async () => ({ ...account }) };
    },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    cookies: { keys: ['idp-fixture-cookie-key'] },
    pkce: { required: () => true },
  } as never);
  const callback = provider.callback();
  let discoveries = 0;
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (req.url === '/.well-known/openid-configuration') discoveries += 1;
    void (async () => {
      if (req.url?.startsWith('/interaction/')) {
        const details = await provider.interactionDetails(req, res);
        const params = details.params as { client_id: string; scope?: string };
        const grant = new provider.Grant({ accountId: current, clientId: params.client_id });
        if (params.scope) grant.addOIDCScope(params.scope);
        grant.addOIDCClaims(['email', 'email_verified']);
        const grantId = await grant.save();
        await provider.interactionFinished(req, res, { login: { accountId: current }, consent: { grantId } }, { mergeWithLastSubmission: false });
        return;
      }
      callback(req, res);
    })().catch((error: unknown) => {
      res.statusCode = 500;
      res.end(String(error));
    });
  });
  return {
    issuer,
    clientId,
    clientSecret,
    signInAs(sub) {
      current = sub;
    },
    discoveries: () => discoveries,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

interface Cookie {
  host: string;
  path: string;
  name: string;
  value: string;
}

export interface Page {
  status: number;
  url: URL;
  body: string;
  location?: URL;
}

/**
 * A browser for the sign-in tests: follows redirects between this server (answered in-process,
 * at https://localhost) and the identity provider (over HTTP), keeping each host's cookies with
 * their paths, as a browser sends them.
 */
export class Browser {
  readonly cookies: Cookie[] = [];

  constructor(
    private readonly inject: (request: {
      method: 'GET' | 'POST';
      url: string;
      headers: Record<string, string>;
      payload?: string;
    }) => Promise<{ statusCode: number; headers: Record<string, unknown>; body: string }>,
  ) {}

  private cookieHeader(url: URL): string {
    return this.cookies
      .filter((c) => c.host === url.host && (url.pathname === c.path || url.pathname.startsWith(c.path.endsWith('/') ? c.path : `${c.path}/`)))
      .map((c) => `${c.name}=${c.value}`)
      .join('; ');
  }

  private remember(url: URL, lines: string[]): void {
    for (const line of lines) {
      const [pair = '', ...attributes] = line.split(';');
      const at = pair.indexOf('=');
      const name = pair.slice(0, at).trim();
      const value = pair.slice(at + 1).trim();
      const path =
        attributes
          .map((a) => a.trim())
          .find((a) => a.toLowerCase().startsWith('path='))
          ?.slice(5) ?? '/';
      const expired = attributes.some((a) => /^max-age=0$/i.test(a.trim()) || /^expires=thu, 01 jan 1970/i.test(a.trim())) || value === '';
      const index = this.cookies.findIndex((c) => c.host === url.host && c.name === name && c.path === path);
      if (index >= 0) this.cookies.splice(index, 1);
      if (!expired) this.cookies.push({ host: url.host, path, name, value });
    }
  }

  /** One request, no redirect followed. */
  async request(url: URL, method: 'GET' | 'POST' = 'GET', form?: Record<string, string>): Promise<Page> {
    const headers: Record<string, string> = {};
    const cookie = this.cookieHeader(url);
    if (cookie) headers.cookie = cookie;
    const payload = form === undefined ? undefined : new URLSearchParams(form).toString();
    if (payload !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
    let status: number;
    let body: string;
    let location: string | undefined;
    let setCookies: string[];
    if (url.hostname === 'localhost' && url.protocol === 'https:') {
      const res = await this.inject({ method, url: `${url.pathname}${url.search}`, headers, ...(payload === undefined ? {} : { payload }) });
      status = res.statusCode;
      body = res.body;
      location = res.headers.location as string | undefined;
      setCookies = [res.headers['set-cookie'] ?? []].flat() as string[];
    } else {
      const res = await fetch(url, { method, redirect: 'manual', headers, ...(payload === undefined ? {} : { body: payload }) });
      status = res.status;
      body = await res.text();
      location = res.headers.get('location') ?? undefined;
      setCookies = res.headers.getSetCookie();
    }
    this.remember(url, setCookies);
    return { status, url, body, ...(location === undefined ? {} : { location: new URL(location, url) }) };
  }

  /** Follows redirects until a page answers, or until the next hop would go to a URL `stopAt` accepts (answered unfollowed). */
  async go(start: URL | string, options: { method?: 'GET' | 'POST'; form?: Record<string, string>; stopAt?: (url: URL) => boolean } = {}): Promise<Page> {
    let page = await this.request(new URL(start, 'https://localhost'), options.method ?? 'GET', options.form);
    for (let hop = 0; hop < 15 && page.location && page.status >= 300 && page.status < 400; hop++) {
      if (options.stopAt?.(page.location)) return page;
      page = await this.request(page.location);
    }
    return page;
  }
}
