import { defineArea } from '../../platform/index.js';
import { relyingParty } from '../identity-provider/index.js';
import { findUserById } from '../users/index.js';
import { findLiveAccessToken, isAccessTokenFormat } from './access-tokens.store.js';
import { idpSignIn } from './idp-sign-in.js';
import { oauthClientsService } from './oauth-clients.service.js';
import { oauthClientSchemas } from './oauth-clients.schemas.js';
import { hashOf } from './oauth.adapter.js';
import { oauthMount, type SignInDeps } from './oauth.mount.js';
import { OAuthProviders } from './oauth.provider.js';
import { oauthRoutes } from './oauth.routes.js';
import { oauthSchemas } from './oauth.schemas.js';
import { approveDeviceCode, oauthService } from './oauth.service.js';

/** Each tenant's OAuth authorization server (issuer `<tenant origin>/oauth`, made on first use), its clients, and the access tokens it issues. */
export const oauthArea = defineArea('oauth', ({ platform: { store, secrets, signing, outbound, audit, originOf, now, onError } }) => {
  const oauthProviders = new OAuthProviders(store.db, secrets, signing, originOf, (error, what) => onError(error, what));
  // Sign-in through the tenant's identity provider, at the authorization server's pages.
  const oauthSignIn: SignInDeps = {
    idp: idpSignIn({ db: store.db, secrets, relyingParty: relyingParty(outbound), audit, originOf, now }),
    approveDevice: (tenant, userCode, userId) => approveDeviceCode(store.db, oauthProviders, tenant, userCode, userId),
    consented: (tenant, event) =>
      audit.recordFor(
        tenant.id,
        { userId: event.userId, email: null, credentialKind: 'identity-provider', credentialId: null },
        { action: event.allowed ? 'oauth.consent.allowed' : 'oauth.consent.denied', details: { clientId: event.clientId, scope: event.scope } },
        { requestId: event.requestId },
      ),
    describeAccount: async (tenantId, userId) => (Number.isInteger(userId) ? (await findUserById(store.db, tenantId, userId))?.email : undefined),
  };
  const oauth = oauthService(store.db, oauthProviders);
  const oauthClients = oauthClientsService(store.db, secrets, now);
  return {
    services: { oauthProviders, oauthSignIn, oauth, oauthClients },
    schemas: [...oauthSchemas, ...oauthClientSchemas],
    credentials: {
      accessTokens: { isFormat: isAccessTokenFormat, cacheKey: hashOf, find: (tenantId, token) => findLiveAccessToken(store.db, tenantId, token) },
    },
    routes: ({ resolveTenant }) => [oauthMount(oauthProviders, resolveTenant, oauthSignIn), oauthRoutes(oauth, oauthClients)],
  };
});
