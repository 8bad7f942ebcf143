import { Type, type Static } from 'typebox';
import { Nullable, Timestamp } from '../../shared/schemas.js';

/** A domain name as the part of an email after `@`: letters, digits, hyphens, dots; compared in lower case. */
const EmailDomain = Type.String({
  minLength: 1,
  maxLength: 253,
  pattern: '^(?=.{1,253}$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+[A-Za-z]{2,63}$',
  description: 'A domain, matched exactly (case-insensitively) against the part of the email after `@`; subdomains are not included.',
});

export const IdentityProviderSchema = Type.Object(
  {
    issuer: Type.String({ description: 'The provider’s OpenID issuer; its discovery document is at `<issuer>/.well-known/openid-configuration`.' }),
    clientId: Type.String(),
    allowedEmailDomains: Type.Array(Type.String(), { description: 'Users whose verified email is in one of these domains may sign in (lower case).' }),
    redirectUri: Type.String({ description: 'This server’s callback: register it with the provider as the client’s redirect URI.' }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'IdentityProvider', description: 'The tenant’s identity provider (OIDC). The client secret is stored encrypted and never returned.' },
);
export type IdentityProvider = Static<typeof IdentityProviderSchema>;

export const PutIdentityProviderBody = Type.Object(
  {
    issuer: Type.String({ minLength: 1, maxLength: 2048, description: 'https (http only on localhost, 127.0.0.1 or [::1], for development).' }),
    clientId: Type.String({ minLength: 1, maxLength: 255 }),
    clientSecret: Type.Optional(
      Nullable(Type.String({ minLength: 1, maxLength: 4096, description: 'Required the first time; left out or null keeps the stored secret.' })),
    ),
    allowedEmailDomains: Type.Array(EmailDomain, { minItems: 1, maxItems: 100, uniqueItems: true }),
  },
  { additionalProperties: false },
);
export type PutIdentityProviderInput = Static<typeof PutIdentityProviderBody>;

export const identityProviderSchemas = [IdentityProviderSchema];
