import type { Caller } from '../../access/caller.js';
import type { Store } from '../../db/database.js';
import type { OAuthIntegrationRow } from '../../db/tables.js';
import type { Secrets } from '../../secrets/index.js';
import { ApiError, type FieldError } from '../../shared/problems.js';
import type { ClientSettings } from './oauth-client.js';
import type { CreateOAuthIntegrationInput, OAuthIntegration, UpdateOAuthIntegrationInput } from './oauth-integrations.schemas.js';
import {
  deleteIntegration,
  findIntegration,
  insertIntegration,
  listIntegrations,
  sealedAs,
  updateIntegration,
  type IntegrationValues,
} from './oauth-integrations.store.js';

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);
/** The JSON of `config` as stored, at most. */
const CONFIG_MAX = 16_384;

/** Why `raw` is not a URL this product calls or sends users to, or null: https, or http on loopback (development). */
export function urlProblem(raw: string): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'is not a URL';
  }
  if (url.username !== '' || url.password !== '') return 'must not carry a user name or password';
  if (url.hash !== '') return 'must not have a fragment';
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:' && LOOPBACK.has(url.hostname)) return null;
  return 'must be an https URL (http only on localhost, 127.0.0.1 or [::1], for development)';
}

type Input = CreateOAuthIntegrationInput | UpdateOAuthIntegrationInput;

function checked(input: Input): IntegrationValues {
  const errors: FieldError[] = [];
  for (const field of ['authUrl', 'tokenUrl', 'redirectUri'] as const) {
    const problem = urlProblem(input[field]);
    if (problem !== null) errors.push({ pointer: `/body/${field}`, message: `${field} ${problem}` });
  }
  const revocationUrl = input.config?.revocationUrl;
  if (revocationUrl !== undefined) {
    const problem = urlProblem(revocationUrl);
    if (problem !== null) errors.push({ pointer: '/body/config/revocationUrl', message: `config.revocationUrl ${problem}` });
  }
  const config = input.config === undefined || input.config === null ? null : JSON.stringify(input.config);
  if (config !== null && config.length > CONFIG_MAX) errors.push({ pointer: '/body/config', message: `config is more than ${CONFIG_MAX} characters as JSON` });
  if (errors.length > 0) throw new ApiError('VALIDATION_FAILED', `Nothing was changed: ${errors.map((e) => e.message).join('; ')}.`, { errors });
  return {
    name: input.name,
    type: input.type,
    auth_url: input.authUrl,
    token_url: input.tokenUrl,
    client_id: input.clientId,
    redirect_uri: input.redirectUri,
    scopes: input.scopes === undefined || input.scopes === null ? null : JSON.stringify(input.scopes),
    config,
  };
}

export function toIntegration(row: OAuthIntegrationRow): OAuthIntegration {
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    authUrl: row.auth_url,
    tokenUrl: row.token_url,
    clientId: row.client_id,
    redirectUri: row.redirect_uri,
    scopes: row.scopes === null ? null : (JSON.parse(row.scopes) as string[]),
    config: row.config === null ? null : (JSON.parse(row.config) as Record<string, unknown>),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** What the OAuth client needs of an integration, its secret opened. */
export function clientSettings(row: OAuthIntegrationRow, secrets: Secrets): ClientSettings {
  const config =
    row.config === null ? {} : (JSON.parse(row.config) as { revocationUrl?: unknown; tokenEndpointAuthMethod?: unknown; authorizationParams?: unknown });
  return {
    authUrl: row.auth_url,
    tokenUrl: row.token_url,
    clientId: row.client_id,
    clientSecret: secrets.open(row.client_secret, sealedAs.clientSecret(row.id)),
    redirectUri: row.redirect_uri,
    scopes: row.scopes === null ? null : (JSON.parse(row.scopes) as string[]),
    revocationUrl: typeof config.revocationUrl === 'string' ? config.revocationUrl : null,
    authMethod: config.tokenEndpointAuthMethod === 'client_secret_post' ? 'client_secret_post' : 'client_secret_basic',
    authorizationParams: (config.authorizationParams !== null && typeof config.authorizationParams === 'object' ? config.authorizationParams : {}) as Record<
      string,
      string
    >,
  };
}

const notFound = (id: number) => new ApiError('OAUTH_INTEGRATION_NOT_FOUND', `OAuth integration ${id} does not exist.`);

/**
 * Third-party OAuth apps (reference 5.5-5.9): any caller reads them (they hold nothing secret:
 * the client secret is never returned), admins with an unscoped key write them (DESIGN.md:
 * OAuth integrations' writes are admin only, and an integration is account-wide).
 */
export function oauthIntegrationsService(store: Store, secrets: Secrets, now: () => Date) {
  const { db } = store;
  const at = () => now().toISOString();

  return {
    async list(caller: Caller): Promise<OAuthIntegration[]> {
      return (await listIntegrations(db, caller.actor.tenantId)).map(toIntegration);
    },

    async get(caller: Caller, id: number): Promise<OAuthIntegration> {
      const row = await findIntegration(db, caller.actor.tenantId, id);
      if (!row) throw notFound(id);
      return toIntegration(row);
    },

    async create(caller: Caller, input: CreateOAuthIntegrationInput): Promise<OAuthIntegration> {
      caller.access.requireAccountAdmin('create OAuth integrations');
      const values = checked(input);
      const row = await db
        .transaction()
        .execute((trx) => insertIntegration(trx, caller.actor.tenantId, values, (id) => secrets.seal(input.clientSecret, sealedAs.clientSecret(id)), at()));
      return toIntegration(row);
    },

    /** A full replace; an omitted or null `clientSecret` keeps the stored one. */
    async update(caller: Caller, id: number, input: UpdateOAuthIntegrationInput): Promise<OAuthIntegration> {
      caller.access.requireAccountAdmin('change OAuth integrations');
      const values = checked(input);
      const secret = input.clientSecret ?? null;
      const row = await updateIntegration(
        db,
        caller.actor.tenantId,
        id,
        { ...values, ...(secret === null ? {} : { client_secret: secrets.seal(secret, sealedAs.clientSecret(id)) }) },
        at(),
      );
      if (!row) throw notFound(id);
      return toIntegration(row);
    },

    /** Deletes the integration, the users' tokens for it and its pending authorizations. */
    async remove(caller: Caller, id: number): Promise<Record<string, never>> {
      caller.access.requireAccountAdmin('delete OAuth integrations');
      if (!(await deleteIntegration(db, caller.actor.tenantId, id))) throw notFound(id);
      return {};
    },
  };
}
export type OAuthIntegrationsService = ReturnType<typeof oauthIntegrationsService>;
