import { defineArea } from '../../platform/index.js';
import { tokensRoutes } from './tokens.routes.js';
import { tokenSchemas } from './tokens.schemas.js';
import { tokensService } from './tokens.service.js';

/** Data-API tokens of deployments, signed by the tenant keyring. */
export const tokensArea = defineArea('tokens', ({ platform: { store, signing, secrets, originOf, audit, now } }) => {
  const tokens = tokensService(store, signing, secrets, originOf, now, audit);
  return { services: { tokens }, schemas: tokenSchemas, routes: () => [tokensRoutes(tokens)] };
});
