import type { JWK } from 'jose';
import type Provider from 'oidc-provider';
import type { Configuration, KoaContextWithOIDC } from 'oidc-provider';
import { loadOidcProvider } from './oidc-provider-module.js';
import type { Db } from '../../db/tables.js';
import type { Secrets } from '../../secrets/index.js';
import type { Signing } from '../../signing/index.js';
import { CLI_CLIENT_ID } from './access-tokens.store.js';
import { DbAdapter, hashOf, oauthSecretContext } from './oauth.adapter.js';
import { findActiveUser, findProviderKeys, insertProviderKeysUnlessPresent } from './oauth-models.store.js';
import { devicePages, escapeHtml, page } from './oauth.pages.js';
import { DEPLOYMENTS_PARAM, grantableScope, requestedDeployments } from './deployment-scope.js';
import { randomToken } from '../../shared/tokens.js';

function requestedScope(ctx: KoaContextWithOIDC): string | undefined {
  const scope = (ctx.oidc.body as { scope?: unknown } | undefined)?.scope;
  return typeof scope === 'string' ? scope : undefined;
}

/** Token lifetimes, in seconds (docs/api/oauth.md). */
export const TTL = {
  AccessToken: 3600,
  ClientCredentials: 3600,
  RefreshToken: 30 * 86_400,
  Grant: 90 * 86_400,
  DeviceCode: 600,
  AuthorizationCode: 60,
  Interaction: 600,
  Session: 86_400,
} as const;

export interface OAuthTenant {
  id: number;
  slug: string;
}

/**
 * The per-tenant secrets the provider keeps itself, the same on every process: its cookie keys.
 * Its ID-token key is the tenant's `oauth-id-token` keyring of signing/, which holds every key
 * the tenant signs with; `jwk` is that key as tenants made before kept it here, taken into the
 * keyring (same `kid`, so ID tokens it signed still verify) and dropped from here on first read.
 */
interface ProviderKeys {
  cookieKeys: string[];
  jwk?: JWK & { kid: string };
}

/** The keyring purpose of the provider's ID tokens. */
const ID_TOKEN_PURPOSE = 'oauth-id-token';

const PROVIDER_KEYS = 'provider-keys';

/**
 * One `oidc-provider` instance per tenant, made on the tenant's first OAuth request and kept:
 * each has its tenant's issuer (`<tenant origin>/oauth`), storage (the adapter is bound to the
 * tenant) and accounts (the tenant's users), so nothing of one tenant can be reached through
 * another's provider. A tenant whose origin changes (a new primary domain) gets a new instance.
 */
export class OAuthProviders {
  readonly #providers = new Map<number, Promise<Provider>>();
  readonly #issuers = new Map<number, string>();

  constructor(
    private readonly db: Db,
    private readonly secrets: Secrets,
    private readonly signing: Signing,
    private readonly originOf: (tenant: OAuthTenant) => Promise<string>,
    private readonly onError: (error: unknown, what: string) => void,
  ) {}

  async issuerOf(tenant: OAuthTenant): Promise<string> {
    return `${await this.originOf(tenant)}/oauth`;
  }

  async forTenant(tenant: OAuthTenant): Promise<Provider> {
    const issuer = await this.issuerOf(tenant);
    if (this.#issuers.get(tenant.id) !== issuer) {
      this.#issuers.set(tenant.id, issuer);
      const made = this.#make(tenant, issuer);
      made.catch(() => this.#providers.delete(tenant.id));
      this.#providers.set(tenant.id, made);
    }
    return this.#providers.get(tenant.id)!;
  }

  async #make(tenant: OAuthTenant, issuer: string): Promise<Provider> {
    const keys = await this.#keys(tenant);
    const { default: OidcProvider, errors, interactionPolicy } = await loadOidcProvider();
    // Consent is asked again whenever an app requests deployments (or all of them) that the
    // user's grant to it does not hold yet: the provider's own checks only see the scopes it lists.
    const policy = interactionPolicy.base();
    policy.get('consent')!.checks.add(
      new interactionPolicy.Check('deployment_scope_missing', 'requested deployments not granted', (ctx: KoaContextWithOIDC) => {
        const held = new Set(ctx.oidc.grant?.getOIDCScopeEncountered().split(' ') ?? []);
        const wanted = requestedDeployments(ctx.oidc.params?.[DEPLOYMENTS_PARAM] as string | undefined);
        return wanted.every((value) => held.has(value)) ? interactionPolicy.Check.NO_NEED_TO_PROMPT : interactionPolicy.Check.REQUEST_PROMPT;
      }),
    );
    const db = this.db;
    const configuration: Configuration = {
      adapter: (model: string) => new DbAdapter(db, this.secrets, tenant.id, model, errors.InvalidGrant),
      clients: [
        {
          client_id: CLI_CLIENT_ID,
          client_name: 'mapi command-line client',
          token_endpoint_auth_method: 'none',
          grant_types: ['urn:ietf:params:oauth:grant-type:device_code', 'refresh_token'],
          response_types: [],
          redirect_uris: [],
        },
      ],
      // An account is an active user of this tenant; a deactivated one can neither approve nor refresh.
      async findAccount(_ctx, sub) {
        if (!/^[1-9][0-9]*$/.test(sub)) return undefined;
        const user = await findActiveUser(db, tenant.id, Number(sub));
        if (!user) return undefined;
        return { accountId: sub, claims: () => ({ sub, email: user.email, email_verified: true }) };
      },
      claims: { openid: ['sub'], email: ['email', 'email_verified'] },
      // The provider keeps only the scopes it lists in a request's parameters; the deployment scope
      // an app asked for is read here from the request itself (a value the client sent under this
      // name is replaced), for the consent page to show and the grant to record.
      extraParams: {
        [DEPLOYMENTS_PARAM](ctx: KoaContextWithOIDC) {
          const raw = ctx.method === 'POST' ? (ctx.oidc.body as { scope?: unknown } | undefined)?.scope : ctx.query.scope;
          (ctx.oidc.params as Record<string, unknown>)[DEPLOYMENTS_PARAM] = requestedDeployments(typeof raw === 'string' ? raw : undefined).join(' ');
        },
      },
      scopes: ['openid', 'offline_access', 'email'],
      features: {
        devInteractions: { enabled: false },
        deviceFlow: {
          enabled: true,
          ...devicePages,
          // The provider keeps only the scopes it lists; the deployment scope the device asked
          // for is kept here, from the request itself, for the approval to grant.
          deviceInfo: (ctx: KoaContextWithOIDC) => ({ ip: ctx.ip, ua: ctx.get('user-agent'), scope: grantableScope(requestedScope(ctx)) }),
        },
        revocation: { enabled: true },
        introspection: { enabled: true },
        clientCredentials: { enabled: true },
        userinfo: { enabled: false },
      },
      extraClientMetadata: { properties: ['mapi_kind', 'mapi_user_id', 'mapi_deployment_ids', 'mapi_name', 'mapi_created_at', 'mapi_created_by'] },
      pkce: { required: () => true },
      rotateRefreshToken: true,
      // Every client allowed the refresh grant gets a refresh token, `offline_access` or not:
      // the device flow's client keeps the user signed in, which is the point of it.
      issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
      ttl: { ...TTL },
      cookies: { keys: keys.cookieKeys, long: { signed: true }, short: { signed: true } },
      jwks: { keys: keys.jwks },
      clientDefaults: { id_token_signed_response_alg: 'ES256', grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'] },
      // Authorization code only: no implicit or hybrid flows (OAuth 2.1).
      responseTypes: ['code'],
      enabledJWA: { idTokenSigningAlgValues: ['ES256'] },
      interactions: { policy, url: (_ctx: KoaContextWithOIDC, interaction) => `/oauth/interaction/${interaction.uid}` },
      renderError: async (ctx, out) => {
        ctx.type = 'html';
        ctx.body = page('Sign-in failed', `<p>${escapeHtml(String(out.error_description ?? out.error))}</p>`);
      },
    };
    const provider = new OidcProvider(issuer, configuration);
    // The app decides the scheme and host the provider sees (oauth.routes.ts), never the client.
    provider.proxy = true;
    provider.on('server_error', (_ctx, error) => this.onError(error, 'oauth server error'));
    return provider;
  }

  /**
   * The tenant's cookie keys, made once (the first process to ask stores them; the others read
   * them) and sealed by secrets/ like every stored secret, and its ID-token keys from signing/.
   */
  async #keys(tenant: OAuthTenant): Promise<{ cookieKeys: string[]; jwks: JWK[] }> {
    const keyHash = hashOf(PROVIDER_KEYS);
    const context = oauthSecretContext(tenant.id, keyHash);
    const read = async () => {
      const row = await findProviderKeys(this.db, tenant.id, keyHash);
      return row?.secret ? (JSON.parse(this.secrets.open(row.secret, context)) as ProviderKeys) : undefined;
    };
    let keys = await read();
    if (!keys) {
      const fresh: ProviderKeys = { cookieKeys: [randomToken(32)] };
      await insertProviderKeysUnlessPresent(this.db, tenant.id, keyHash, this.secrets.seal(JSON.stringify(fresh), context), new Date().toISOString());
      keys = await read();
      if (!keys) throw new Error(`Tenant ${tenant.id} has no OAuth provider keys after storing them.`);
    }
    // A key made before the keyring signed ID tokens moves into it under its own kid, so tokens
    // already issued still verify. The old secret keeps its copy: a process of the previous
    // version reads it during a rolling upgrade; from here on only the keyring's is signed with.
    if (keys.jwk !== undefined) await this.signing.adopt(tenant, ID_TOKEN_PURPOSE, keys.jwk);
    return { cookieKeys: keys.cookieKeys, jwks: await this.signing.privateJwks(tenant, ID_TOKEN_PURPOSE) };
  }
}
