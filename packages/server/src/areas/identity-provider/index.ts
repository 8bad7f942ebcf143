/**
 * The identity-provider area's public entry: what other areas may use of it. Everything else in the folder
 * is the area's own (npm run cycles enforces it).
 */
export { IDP_CALLBACK_PATH, domainsOf } from './identity-provider.service.js';
export { consumeSignIn, deleteExpiredSignIns, findIdentityProvider, findSignIn, insertSignIn, sealedAs } from './identity-provider.store.js';
export { ProviderRefused, ProviderUnavailable } from './relying-party.js';
export type { ProviderSettings, RelyingParty } from './relying-party.js';
export { identityProviderArea } from './identity-provider.module.js';
export { relyingParty } from './relying-party.js';
