import type { Caller } from '../../access/caller.js';
import type { Db, IdentityProviderRow } from '../../db/tables.js';
import type { Secrets } from '../../secrets/index.js';
import { ApiError } from '../../shared/problems.js';
import { urlProblem } from '../oauth-integrations/index.js';
import type { IdentityProvider, PutIdentityProviderInput } from './identity-provider.schemas.js';
import { deleteIdentityProvider, findIdentityProvider, sealedAs, upsertIdentityProvider } from './identity-provider.store.js';

/** This server's callback at the tenant's origin, where the provider sends the browser back. */
export const IDP_CALLBACK_PATH = '/oauth/idp/callback';

const notConfigured = () =>
  new ApiError('IDENTITY_PROVIDER_NOT_FOUND', 'This tenant has no identity provider: an admin sets one with PUT /api/v1/tenant/identity-provider.');

export function domainsOf(row: IdentityProviderRow): string[] {
  return JSON.parse(row.allowed_email_domains) as string[];
}

/**
 * The tenant's identity provider (extension, DESIGN.md: admin only): read by admins, written by
 * admins with an unscoped credential. The client secret is sealed by secrets/ and never returned.
 */
export function identityProviderService(db: Db, secrets: Secrets, originOf: (tenant: { id: number; slug: string }) => Promise<string>, now: () => Date) {
  const present = async (caller: Caller, row: IdentityProviderRow): Promise<IdentityProvider> => ({
    issuer: row.issuer,
    clientId: row.client_id,
    allowedEmailDomains: domainsOf(row),
    redirectUri: `${await originOf(caller.tenant)}${IDP_CALLBACK_PATH}`,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  });

  return {
    async get(caller: Caller): Promise<IdentityProvider> {
      caller.access.requireAdmin('read the identity provider');
      const row = await findIdentityProvider(db, caller.actor.tenantId);
      if (!row) throw notConfigured();
      return present(caller, row);
    },

    /** Creates or replaces the provider; a `clientSecret` left out or null keeps the stored one (required the first time). */
    async put(caller: Caller, input: PutIdentityProviderInput): Promise<IdentityProvider> {
      caller.access.requireAccountAdmin('change the identity provider');
      const tenantId = caller.actor.tenantId;
      const problem = urlProblem(input.issuer);
      const issuerProblem = problem ?? (new URL(input.issuer).search !== '' ? 'must not have a query' : null);
      if (issuerProblem !== null)
        throw new ApiError('VALIDATION_FAILED', `Nothing was changed: issuer ${issuerProblem}.`, {
          errors: [{ pointer: '/body/issuer', message: `issuer ${issuerProblem}` }],
        });
      const secret = input.clientSecret ?? null;
      const values = {
        issuer: input.issuer,
        client_id: input.clientId,
        allowed_email_domains: JSON.stringify([...new Set(input.allowedEmailDomains.map((d) => d.toLowerCase()))]),
        ...(secret === null ? {} : { client_secret: secrets.seal(secret, sealedAs.clientSecret(tenantId)) }),
      };
      const row = await db.transaction().execute(async (trx) => {
        if (secret === null && !(await findIdentityProvider(trx, tenantId))) {
          throw new ApiError('VALIDATION_FAILED', 'Nothing was changed: clientSecret is required when the identity provider is first set.', {
            errors: [{ pointer: '/body/clientSecret', message: 'is required the first time' }],
          });
        }
        return upsertIdentityProvider(trx, tenantId, values, now().toISOString());
      });
      return present(caller, row);
    },

    /** Removes the provider: users sign in again only through an admin's device approval. */
    async remove(caller: Caller): Promise<void> {
      caller.access.requireAccountAdmin('remove the identity provider');
      if (!(await deleteIdentityProvider(db, caller.actor.tenantId))) throw notConfigured();
    },
  };
}
export type IdentityProviderService = ReturnType<typeof identityProviderService>;
