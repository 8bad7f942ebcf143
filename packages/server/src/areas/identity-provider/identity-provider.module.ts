import { defineArea } from '../../platform/index.js';
import { identityProviderRoutes } from './identity-provider.routes.js';
import { identityProviderSchemas } from './identity-provider.schemas.js';
import { identityProviderService } from './identity-provider.service.js';

/** The tenant's OpenID Connect identity provider, which users sign in through. */
export const identityProviderArea = defineArea('identity-provider', ({ platform: { store, secrets, originOf, now } }) => {
  const identityProvider = identityProviderService(store.db, secrets, originOf, now);
  return { services: { identityProvider }, schemas: identityProviderSchemas, routes: () => [identityProviderRoutes(identityProvider)] };
});
