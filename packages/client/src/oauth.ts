import { unwrap } from './errors.js';
import type { RawClient } from './pagination.js';
import type { CreateOAuthIntegrationInput, OAuthIntegration, UpdateOAuthIntegrationInput, UserOAuthToken } from './types.js';

type CallOptions = { signal?: AbortSignal };
const withSignal = ({ signal }: CallOptions = {}) => (signal ? { signal } : {});

/** The tenant's third-party OAuth apps (reference 5.5-5.9): read by anyone, written by admins. */
export interface OAuthIntegrations {
  list(options?: CallOptions): Promise<OAuthIntegration[]>;
  get(id: number, options?: CallOptions): Promise<OAuthIntegration>;
  /** `clientSecret` is stored encrypted and never comes back. */
  create(input: CreateOAuthIntegrationInput, options?: CallOptions): Promise<OAuthIntegration>;
  /** A full replace; leave `clientSecret` out to keep the stored one. */
  update(id: number, input: UpdateOAuthIntegrationInput, options?: CallOptions): Promise<OAuthIntegration>;
  /** Deletes it and every user's token for it. */
  remove(id: number, options?: CallOptions): Promise<void>;
}

/** The caller's own tokens for those apps (reference 5.10-5.13). */
export interface UserOAuthTokens {
  list(options?: CallOptions): Promise<UserOAuthToken[]>;
  /** Rejects with ApiError 404 `USER_OAUTH_TOKEN_NOT_FOUND` when the caller has not authorized the integration. */
  get(integrationId: number, options?: CallOptions): Promise<UserOAuthToken>;
  /** Forgets the token, revoking it at the provider when the integration names a revocation endpoint. */
  remove(integrationId: number, options?: CallOptions): Promise<void>;
  /** The URL to open in the user's browser to authorize the integration (single-use state, 10 minutes, PKCE). */
  initiate(integrationId: number, options?: CallOptions): Promise<string>;
}

export function createOAuth(api: RawClient): { oauthIntegrations: OAuthIntegrations; userOAuthTokens: UserOAuthTokens } {
  const byId = (id: number) => ({ params: { path: { id } } });
  const byIntegration = (integrationId: number) => ({ params: { path: { integrationId } } });
  return {
    oauthIntegrations: {
      list: async (options) => unwrap(await api.GET('/api/v1/oauth-integrations', withSignal(options))),
      get: async (id, options) => unwrap(await api.GET('/api/v1/oauth-integrations/{id}', { ...byId(id), ...withSignal(options) })),
      create: async (input, options) => unwrap(await api.POST('/api/v1/oauth-integrations', { body: input, ...withSignal(options) })),
      update: async (id, input, options) => unwrap(await api.PUT('/api/v1/oauth-integrations/{id}', { ...byId(id), body: input, ...withSignal(options) })),
      remove: async (id, options) => {
        unwrap(await api.DELETE('/api/v1/oauth-integrations/{id}', { ...byId(id), ...withSignal(options) }));
      },
    },
    userOAuthTokens: {
      list: async (options) => unwrap(await api.GET('/api/v1/user-oauth-tokens', withSignal(options))),
      get: async (integrationId, options) =>
        unwrap(await api.GET('/api/v1/user-oauth-tokens/{integrationId}', { ...byIntegration(integrationId), ...withSignal(options) })),
      remove: async (integrationId, options) => {
        unwrap(await api.DELETE('/api/v1/user-oauth-tokens/{integrationId}', { ...byIntegration(integrationId), ...withSignal(options) }));
      },
      initiate: async (integrationId, options) =>
        unwrap(await api.POST('/api/v1/user-oauth-tokens/{integrationId}/initiate', { ...byIntegration(integrationId), ...withSignal(options) }))
          .authorizationUrl,
    },
  };
}
