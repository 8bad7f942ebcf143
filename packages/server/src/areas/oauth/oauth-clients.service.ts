import { timestamp, type Clock } from '../../time.js';
import type { Caller } from '../../access/caller.js';
import type { Db, OAuthModelRow } from '../../db/tables.js';
import type { Secrets } from '../../secrets/index.js';
import { ApiError, notFound, type FieldError } from '../../shared/problems.js';
import { urlProblem } from '../oauth-integrations/index.js';
import { existingDeploymentIds } from '../deployments/index.js';
import { findUserById } from '../users/index.js';
import { hashOf, oauthSecretContext } from './oauth.adapter.js';
import { deleteOAuthClient, findOAuthClient, insertOAuthClient, listOAuthClients } from './oauth-models.store.js';
import type { CreatedOAuthClient, CreateOAuthClientInput, OAuthClient } from './oauth-clients.schemas.js';
import { randomToken } from '../../shared/tokens.js';

function invalid(errors: FieldError[]): never {
  throw new ApiError('VALIDATION_FAILED', `Nothing was registered: ${errors.map((e) => `${e.pointer.replace('/body/', '')} ${e.message}`).join('; ')}.`, {
    errors,
  });
}

interface ClientPayload {
  client_id: string;
  client_name: string;
  grant_types: string[];
  redirect_uris?: string[];
  token_endpoint_auth_method?: string;
  mapi_kind?: 'machine' | 'app';
  mapi_user_id: number | null;
  mapi_deployment_ids: number[] | null;
  mapi_created_at: string;
  mapi_created_by: number;
}

function toClient(row: Pick<OAuthModelRow, 'id' | 'payload'>): OAuthClient {
  const p = JSON.parse(row.payload) as ClientPayload;
  return {
    id: row.id,
    clientId: p.client_id,
    name: p.client_name,
    type: p.mapi_kind ?? 'machine',
    public: p.token_endpoint_auth_method === 'none',
    redirectUris: p.redirect_uris ?? [],
    userId: p.mapi_user_id,
    deploymentIds: p.mapi_deployment_ids,
    grantTypes: p.grant_types,
    createdAt: p.mapi_created_at,
  };
}

/**
 * Machine clients (extension): registered by an admin, they get access tokens by the client
 * credentials grant, and those act as a user chosen at registration (the admin by default),
 * within the deployments given, exactly as an API key of that user with that scope. They are
 * rows of the provider's table (model `Client`), their secret sealed by secrets/.
 */
export function oauthClientsService(db: Db, secrets: Secrets, now: Clock) {
  /** Stores a client with a fresh id and, unless it is a public app, a fresh secret (sealed). */
  async function insertClient(
    actor: Caller['actor'],
    fields: Omit<ClientPayload, 'client_id' | 'mapi_created_at' | 'mapi_created_by'> & Record<string, unknown>,
  ): Promise<CreatedOAuthClient> {
    const clientId = `mapi-client-${randomToken(12)}`;
    const clientSecret = fields.token_endpoint_auth_method === 'none' ? undefined : randomToken(32);
    const createdAt = timestamp(now);
    const payload = { client_id: clientId, ...fields, mapi_created_at: createdAt, mapi_created_by: actor.userId };
    const keyHash = hashOf(clientId);
    const sealed = clientSecret === undefined ? null : secrets.seal(clientSecret, oauthSecretContext(actor.tenantId, keyHash));
    const row = await insertOAuthClient(db, actor.tenantId, keyHash, JSON.stringify(payload), sealed, createdAt);
    return { ...toClient(row), ...(clientSecret === undefined ? {} : { clientSecret }) };
  }

  /**
   * An app: authorization code with PKCE (S256, required), its tokens acting as the user who signs
   * in through the tenant's identity provider and consents, within the deployments consented to.
   * Confidential apps authenticate with their secret; public ones by PKCE alone.
   */
  async function createApp(actor: Caller['actor'], input: CreateOAuthClientInput): Promise<CreatedOAuthClient> {
    const errors: FieldError[] = [];
    for (const field of ['userId', 'deploymentIds'] as const) {
      if (input[field] !== undefined)
        errors.push({
          pointer: `/body/${field}`,
          message: 'is for machine clients only: an app acts as the user who signs in, within the deployments they consent to',
        });
    }
    const uris = input.redirectUris ?? [];
    if (uris.length === 0) errors.push({ pointer: '/body/redirectUris', message: 'is required for apps' });
    uris.forEach((uri, i) => {
      const problem = urlProblem(uri);
      if (problem !== null) errors.push({ pointer: `/body/redirectUris/${i}`, message: `redirect URI ${problem}` });
    });
    if (errors.length > 0) invalid(errors);
    const isPublic = input.public ?? false;
    return insertClient(actor, {
      client_name: input.name,
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      redirect_uris: uris,
      token_endpoint_auth_method: isPublic ? 'none' : 'client_secret_basic',
      mapi_kind: 'app',
      mapi_user_id: null,
      mapi_deployment_ids: null,
    });
  }

  return {
    async create({ actor, access }: Caller, input: CreateOAuthClientInput): Promise<CreatedOAuthClient> {
      access.requireAccountAdmin('register an OAuth client');
      if ((input.type ?? 'machine') === 'app') return createApp(actor, input);
      const misplaced = (['redirectUris', 'public'] as const).filter((field) => input[field] !== undefined);
      if (misplaced.length > 0) invalid(misplaced.map((field) => ({ pointer: `/body/${field}`, message: `is for apps only ("type": "app")` })));
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
      return insertClient(actor, {
        client_name: input.name,
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
        token_endpoint_auth_method: 'client_secret_basic',
        mapi_kind: 'machine',
        mapi_user_id: userId,
        mapi_deployment_ids: scope,
      });
    },

    async list({ actor, access }: Caller): Promise<{ items: OAuthClient[] }> {
      access.requireAdmin('list OAuth clients');
      const rows = await listOAuthClients(db, actor.tenantId);
      return { items: rows.map(toClient) };
    },

    /** Deleting a client ends its tokens on the next request (the delete bumps the auth version). */
    async remove({ actor, access }: Caller, id: number): Promise<void> {
      access.requireAccountAdmin('delete an OAuth client');
      const row = await findOAuthClient(db, actor.tenantId, id);
      if (!row) throw notFound('OAUTH_CLIENT_NOT_FOUND', 'OAuth client', id);
      const clientId = (JSON.parse(row.payload) as ClientPayload).client_id;
      await db.transaction().execute(async (trx) => {
        await deleteOAuthClient(trx, actor.tenantId, row.id, clientId);
      });
    },
  };
}
export type OAuthClientsService = ReturnType<typeof oauthClientsService>;
