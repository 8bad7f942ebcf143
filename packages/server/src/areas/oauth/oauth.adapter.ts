import type { Adapter, AdapterPayload } from 'oidc-provider';
import type { Executor } from '../../db/tables.js';
import type { SecretColumn, Secrets } from '../../secrets/index.js';
import { tokenHash } from '../../shared/tokens.js';
import {
  deleteExpiredOAuthModels,
  deleteOAuthModel,
  deleteOAuthModelsOfGrant,
  findLiveOAuthModel,
  replaceOAuthModelPayload,
  upsertOAuthModel,
} from './oauth-models.store.js';

/** SHA-256, base64url: how every id, grant id and user code is stored (never the value itself). */
export function hashOf(value: string): string {
  return tokenHash(value, 'base64url');
}

/** The context a stored secret (a client's, the provider's keys) is sealed with: moved to another row or tenant, it does not decrypt. */
export function oauthSecretContext(tenantId: number, keyHash: string): string {
  return `oauth:${tenantId}:${keyHash}`;
}

/** The sealed column (clients' secrets, the provider's keys), for the start-up key check and `secrets re-encrypt`. */
export const oauthSecretColumn: SecretColumn = {
  table: 'oauth_models',
  id: 'id',
  value: 'secret',
  contextColumns: ['tenant_id', 'key_hash'],
  context: (row) => oauthSecretContext(Number(row.tenant_id), String(row.key_hash)),
};

/**
 * Models whose id is a bearer secret (the token the client holds): the id is kept only as its
 * hash and is left out of the stored payload; `find` puts it back from the value it was given.
 * Device codes and sessions keep theirs, since they are also found by user code and uid.
 */
/** Every this many writes, rows past their expiry are deleted (they are never served anyway). */
const CLEAN_EVERY = 200;
let writes = 0;

const BEARER = new Set(['AccessToken', 'RefreshToken', 'AuthorizationCode', 'ClientCredentials', 'BackchannelAuthenticationRequest']);

/**
 * `oidc-provider`'s storage over the server's database: one adapter per model and tenant, one
 * table (`oauth_models`, migration 0022). Clients are rows too (model `Client`), written by the
 * oauth-clients service with their secret sealed by secrets/.
 */
export class DbAdapter implements Adapter {
  constructor(
    private readonly db: Executor,
    private readonly secrets: Secrets,
    private readonly tenantId: number,
    private readonly model: string,
    /** The provider's `invalid_grant` error (the library is loaded lazily: oidc-provider-module.ts). */
    private readonly InvalidGrant: new (description: string) => Error,
  ) {}

  async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
    const keyHash = hashOf(id);
    const stored: Record<string, unknown> = { ...payload };
    if (BEARER.has(this.model)) delete stored.jti;
    const now = new Date();
    const row = {
      payload: JSON.stringify(stored),
      grant_hash: typeof payload.grantId === 'string' ? hashOf(payload.grantId) : null,
      user_code_hash: typeof payload.userCode === 'string' ? hashOf(payload.userCode) : null,
      uid: typeof payload.uid === 'string' ? payload.uid : null,
      expires_at: expiresIn ? new Date(now.getTime() + expiresIn * 1000).toISOString() : null,
    };
    await upsertOAuthModel(this.db, this.tenantId, this.model, keyHash, now.toISOString(), row);
    // Expired rows bump no auth version (migration 0022), so the clean-up empties no cache.
    if (++writes % CLEAN_EVERY === 0) await deleteExpiredOAuthModels(this.db, now.toISOString());
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    const row = await this.#live('key_hash', hashOf(id));
    return row ? this.#payload(row, id) : undefined;
  }

  async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
    const row = await this.#live('user_code_hash', hashOf(userCode));
    return row ? this.#payload(row) : undefined;
  }

  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    const row = await this.#live('uid', uid);
    return row ? this.#payload(row) : undefined;
  }

  /**
   * Marks a code or refresh token used, once: the write applies only to the payload it read, so
   * two requests presenting the same refresh token at once cannot both rotate it.
   */
  async consume(id: string): Promise<void> {
    const keyHash = hashOf(id);
    const row = await this.#live('key_hash', keyHash);
    if (!row) return;
    const payload = JSON.parse(row.payload) as AdapterPayload;
    if (payload.consumed) throw new this.InvalidGrant('grant request is invalid');
    const replaced = await replaceOAuthModelPayload(this.db, row.id, row.payload, JSON.stringify({ ...payload, consumed: Math.floor(Date.now() / 1000) }));
    if (!replaced) throw new this.InvalidGrant('grant request is invalid');
  }

  async destroy(id: string): Promise<void> {
    await deleteOAuthModel(this.db, this.tenantId, this.model, hashOf(id));
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    await deleteOAuthModelsOfGrant(this.db, this.tenantId, this.model, hashOf(grantId));
  }

  #live(by: 'key_hash' | 'user_code_hash' | 'uid', value: string) {
    return findLiveOAuthModel(this.db, this.tenantId, this.model, by, value);
  }

  #payload(row: { key_hash: string; payload: string; secret: string | null }, id?: string): AdapterPayload {
    const payload = JSON.parse(row.payload) as AdapterPayload;
    if (id !== undefined && BEARER.has(this.model)) payload.jti = id;
    if (this.model === 'Client' && row.secret !== null) {
      payload.client_secret = this.secrets.open(row.secret, oauthSecretContext(this.tenantId, row.key_hash));
    }
    return payload;
  }
}
