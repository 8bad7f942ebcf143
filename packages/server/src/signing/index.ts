/**
 * The signing service: one keyring per tenant (ES256 key pairs, the private halves sealed by
 * secrets/), signing and verifying JWTs, the public key set, and rotation with overlap. It knows
 * no area: embed, usage-analytics, workload-identity and deployment tokens all sign through it.
 *
 * @example
 *   const signing = new Signing(store, { secrets, issuerOf: (tenant) => tenantOrigin(tenant) });
 *   const { token } = await signing.sign(tenant, { deployment_id: 7 }, { audience: 'https://…/data-api/v1', expiresInSeconds: 3600 });
 *   const claims = await signing.verify(tenant, token, { audience: 'https://…/data-api/v1' });
 *   const { keys } = await signing.jwks(tenant); // what GET /api/v1/data-api/jwks.json serves
 */
export {
  Signing,
  SigningError,
  MAX_TOKEN_LIFETIME_SECONDS,
  type PublicJwk,
  type SignedToken,
  type SignOptions,
  type SigningOptions,
  type SigningPurpose,
  type SigningTenant,
} from './signing.js';
export { signingKeySecretColumn } from './signing-keys.store.js';
