import { randomBytes } from 'node:crypto';
import type { Caller } from '../../access/caller.js';
import type { Db, OAuthModelRow } from '../../db/tables.js';
import type { Secrets } from '../../secrets/index.js';
import { ApiError, notFound } from '../../shared/problems.js';
import { existingDeploymentIds } from '../deployments/deployments.store.js';
import { findUserById } from '../users/users.store.js';
import { hashOf, oauthSecretContext } from './oauth.adapter.js';
import type { CreatedOAuthClient, CreateOAuthClientInput, OAuthClient } from './oauth-clients.schemas.js';

interface ClientPayload {
  client_id: string;
  client_name: string;
  grant_types: string[];
  mapi_user_id: number;
  mapi_deployment_ids: number[] | null;
  mapi_created_at: string;
  mapi_created_by: number;
}

function toClient(row: Pick<OAuthModelRow, 'id' | 'payload'>): OAuthClient {
  const p = JSON.parse(row.payload) as ClientPayload;
  return { id: row.id, clientId: p.client_id, name: p.client_name, userId: p.mapi_user_id, deploymentIds: p.mapi_deployment_ids, grantTypes: p.grant_types, createdAt: p.mapi_created_at };
}

/**
 * Machine clients (extension): registered by an admin, they get access tokens by the client
 * credentials grant, and those act as a user chosen at registration (the admin by default),
 * within the deployments given, exactly as an API key of that user with that scope. They are
 * rows of the provider's table (model `Client`), their secret sealed by secrets/.
 */
export function oauthClientsService(db: Db, secrets: Secrets) {
  const clients = (tenantId: number) => db.selectFrom('oauth_models').select(['id', 'payload']).where('tenant_id', '=', tenantId).where('model', '=', 'Client');
  return {
    async create({ actor, access }: Caller, input: CreateOAuthClientInput): Promise<CreatedOAuthClient> {
      access.requireAccountAdmin('register an OAuth client');
      const userId = input.userId ?? actor.userId;
      const user = await findUserById(db, actor.tenantId, userId);
      if (!user) throw notFound('USER_NOT_FOUND', 'User', userId);
      if (user.deactivated_at !== null) throw new ApiError('INVALID_OPERATION', `User ${userId} is deactivated; a client cannot act as them.`);
      const scope = input.deploymentIds ?? null;
      if (scope !== null) {
        const known = await existingDeploymentIds(db, actor.tenantId, scope);
        const missing = scope.filter((id) => !known.has(id));
        if (missing.length > 0) {
          throw new ApiError('DEPLOYMENT_NOT_FOUND', `Deployment ${missing.join(', ')} does not exist.`, {
            errors: missing.map((id) => ({ pointer: `/body/deploymentIds/${scope.indexOf(id)}`, message: 'is not a deployment' })),
          });
        }
      }
      const clientId = `mapi-client-${randomBytes(12).toString('base64url')}`;
      const clientSecret = randomBytes(32).toString('base64url');
      const createdAt = new Date().toISOString();
      const payload: ClientPayload & Record<string, unknown> = {
        client_id: clientId,
        client_name: input.name,
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
        token_endpoint_auth_method: 'client_secret_basic',
        mapi_user_id: userId,
        mapi_deployment_ids: scope,
        mapi_created_at: createdAt,
        mapi_created_by: actor.userId,
      };
      const keyHash = hashOf(clientId);
      const row = await db
        .insertInto('oauth_models')
        .values({
          tenant_id: actor.tenantId,
          model: 'Client',
          key_hash: keyHash,
          payload: JSON.stringify(payload),
          secret: secrets.seal(clientSecret, oauthSecretContext(actor.tenantId, keyHash)),
          created_at: createdAt,
          expires_at: null,
          grant_hash: null,
          user_code_hash: null,
          uid: null,
        })
        .returning(['id', 'payload'])
        .executeTakeFirstOrThrow();
      return { ...toClient(row), clientSecret };
    },

    async list({ actor, access }: Caller): Promise<{ items: OAuthClient[] }> {
      access.requireAdmin('list OAuth clients');
      const rows = await clients(actor.tenantId).orderBy('id').execute();
      return { items: rows.map(toClient) };
    },

    /** Deleting a client ends its tokens on the next request (the delete bumps the auth version). */
    async remove({ actor, access }: Caller, id: number): Promise<void> {
      access.requireAccountAdmin('delete an OAuth client');
      const row = await clients(actor.tenantId).where('id', '=', id).executeTakeFirst();
      if (!row) throw notFound('OAUTH_CLIENT_NOT_FOUND', 'OAuth client', id);
      const clientId = (JSON.parse(row.payload) as ClientPayload).client_id;
      await db.transaction().execute(async (trx) => {
        await trx.deleteFrom('oauth_models').where('id', '=', row.id).execute();
        // Its client-credentials tokens are useless without it; removed now rather than left to expire.
        await trx.deleteFrom('oauth_models').where('tenant_id', '=', actor.tenantId).where('model', '=', 'ClientCredentials').where('payload', 'like', `%"clientId":${JSON.stringify(clientId)}%`).execute();
      });
    },
  };
}
export type OAuthClientsService = ReturnType<typeof oauthClientsService>;
