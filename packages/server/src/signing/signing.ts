import { createPublicKey, randomUUID, type JsonWebKey } from 'node:crypto';
import {
  calculateJwkThumbprint,
  decodeProtectedHeader,
  exportJWK,
  generateKeyPair,
  importJWK,
  jwtVerify,
  SignJWT,
  type CryptoKey,
  type JWK,
  type JWTPayload,
} from 'jose';
import type { Store } from '../db/database.js';
import { lockKey, serialized } from '../db/transactions.js';
import type { Secrets } from '../secrets/index.js';
import { deleteExpiredKeys, insertKey, liveKeys, retireKey, signingKeyContext } from './signing-keys.store.js';

/**
 * ES256 for what this platform verifies itself or its customers' code verifies (OAuth ID tokens
 * included); RS256 for workload identity, the one algorithm every cloud's token exchange accepts
 * (reference 5.14).
 */
const ALGORITHMS = { default: 'ES256', embed: 'ES256', workload: 'RS256', 'oauth-id-token': 'ES256' } as const;

/** The longest lifetime a token signed here may have (a day: deployment tokens, embed tokens). */
export const MAX_TOKEN_LIFETIME_SECONDS = 86_400;

/** How long a process keeps a tenant's keyring before reading it again. */
const CACHE_MS = 60_000;

/** Claims the service sets itself: a caller's claims cannot override them. */
const REGISTERED = ['iss', 'sub', 'aud', 'exp', 'nbf', 'iat', 'jti'];

/** A public key of the key set. */
export type PublicJwk = JWK & { kty: string; kid: string; alg: string; use: string };

export interface SigningTenant {
  id: number;
  slug: string;
}

export interface SigningOptions {
  secrets: Secrets;
  /** The issuer (`iss`) of a tenant's tokens: the origin it is reached on. */
  issuerOf: (tenant: SigningTenant) => Promise<string>;
  /** The clock (tests move it); default the system's. */
  now?: () => Date;
}

/**
 * A keyring of its own per purpose: a key set published for one kind of token (embed tokens, to
 * customers' backends) never verifies another kind. `default` signs data-API tokens;
 * `oauth-id-token` is the OAuth authorization server's ID-token key, which oidc-provider signs
 * with itself (`privateJwks`).
 */
export type SigningPurpose = 'default' | 'embed' | 'workload' | 'oauth-id-token';

export interface SignOptions {
  audience: string | string[];
  /** Default `default`. */
  purpose?: SigningPurpose;
  /** The token's `jti`; default a random UUID (a caller that must record it first passes its own). */
  jti?: string;
  /** 1 to MAX_TOKEN_LIFETIME_SECONDS. */
  expiresInSeconds: number;
  subject?: string;
  /** The header's `typ`; default `JWT`. */
  type?: string;
}

export interface SignedToken {
  token: string;
  kid: string;
  jti: string;
  issuedAt: Date;
  expiresAt: Date;
}

export class SigningError extends Error {
  constructor(
    readonly reason: 'invalid-token' | 'invalid-request',
    message: string,
  ) {
    super(message);
    this.name = 'SigningError';
  }
}

interface Keyring {
  signing: { kid: string; key: CryptoKey } | null;
  verifying: Map<string, { key: CryptoKey; expiresAt: number | null }>;
  jwks: Array<{ jwk: PublicJwk; expiresAt: number | null }>;
  loadedAt: number;
}

/**
 * Per-tenant keys. The first `sign` of a tenant creates its key (under a lock, and a unique index
 * on the tenant's one signing key behind it, so two processes cannot both create one); `rotate`
 * makes a new key sign while the old one keeps verifying, and stays in the key set, until every
 * token it may have signed has expired: the longest lifetime, plus the time another process may
 * still sign with it from its cache. Decrypted keys are cached per process for a minute.
 */
export class Signing {
  readonly #store: Store;
  readonly #options: SigningOptions;
  /** Keyed `<tenantId>:<purpose>`. */
  readonly #rings = new Map<string, Promise<Keyring>>();

  constructor(store: Store, options: SigningOptions) {
    this.#store = store;
    this.#options = options;
  }

  #now(): Date {
    return this.#options.now?.() ?? new Date();
  }

  /** Signs `claims` with the tenant's current key, creating it on first use. */
  async sign(tenant: SigningTenant, claims: Record<string, unknown>, options: SignOptions): Promise<SignedToken> {
    const lifetime = options.expiresInSeconds;
    if (!Number.isInteger(lifetime) || lifetime < 1 || lifetime > MAX_TOKEN_LIFETIME_SECONDS) {
      throw new SigningError('invalid-request', `A token lives 1 to ${MAX_TOKEN_LIFETIME_SECONDS} seconds, not ${lifetime}.`);
    }
    const purpose = options.purpose ?? 'default';
    let ring = await this.#keyring(tenant.id, purpose);
    if (ring.signing === null) {
      await this.#createFirstKey(tenant.id, purpose);
      ring = await this.#keyring(tenant.id, purpose, true);
    }
    const signing = ring.signing;
    if (signing === null) throw new Error(`Tenant ${tenant.id} has no signing key after creating one.`);
    const payload = Object.fromEntries(Object.entries(claims).filter(([name]) => !REGISTERED.includes(name)));
    const issuedAt = Math.floor(this.#now().getTime() / 1000);
    const jti = options.jti ?? randomUUID();
    const builder = new SignJWT(payload)
      .setProtectedHeader({ alg: ALGORITHMS[purpose], kid: signing.kid, typ: options.type ?? 'JWT' })
      .setIssuer(await this.#options.issuerOf(tenant))
      .setAudience(options.audience)
      .setIssuedAt(issuedAt)
      .setExpirationTime(issuedAt + lifetime)
      .setJti(jti);
    if (options.subject !== undefined) builder.setSubject(options.subject);
    const token = await builder.sign(signing.key);
    return { token, kid: signing.kid, jti, issuedAt: new Date(issuedAt * 1000), expiresAt: new Date((issuedAt + lifetime) * 1000) };
  }

  /**
   * The payload of a token this tenant signed for `audience`, with any of its keys that has not
   * expired (so tokens signed before a rotation still verify); throws SigningError otherwise.
   */
  async verify(tenant: SigningTenant, token: string, options: { audience: string; types?: readonly string[]; purpose?: SigningPurpose }): Promise<JWTPayload> {
    const purpose = options.purpose ?? 'default';
    let kid: string | undefined;
    let typ: string | undefined;
    try {
      ({ kid, typ } = decodeProtectedHeader(token));
    } catch {
      throw new SigningError('invalid-token', 'The token is not a JWT.');
    }
    // One kind of token is never taken for another (an embed token is not a data-API token).
    if (options.types !== undefined && (typ === undefined || !options.types.includes(typ)))
      throw new SigningError('invalid-token', 'The token is not of a kind this endpoint accepts.');
    if (kid === undefined) throw new SigningError('invalid-token', 'The token names no key (`kid`).');
    const now = this.#now();
    let ring = await this.#keyring(tenant.id, purpose);
    // A key made by another process since this one read the keyring.
    if (!ring.verifying.has(kid) && now.getTime() - ring.loadedAt > 1_000) ring = await this.#keyring(tenant.id, purpose, true);
    const entry = ring.verifying.get(kid);
    if (entry === undefined || (entry.expiresAt !== null && entry.expiresAt <= now.getTime())) {
      throw new SigningError('invalid-token', 'The token was not signed by a current key of this tenant.');
    }
    try {
      const { payload } = await jwtVerify(token, entry.key, {
        algorithms: [ALGORITHMS[purpose]],
        issuer: await this.#options.issuerOf(tenant),
        audience: options.audience,
        currentDate: now,
      });
      return payload;
    } catch (error) {
      throw new SigningError('invalid-token', `The token does not verify: ${(error as Error).message}`);
    }
  }

  /** The public keys that may still verify a token of the tenant (the key set to publish). */
  async jwks(tenant: SigningTenant, purpose: SigningPurpose = 'default'): Promise<{ keys: PublicJwk[] }> {
    const ring = await this.#keyring(tenant.id, purpose);
    const now = this.#now().getTime();
    return { keys: ring.jwks.filter((k) => k.expiresAt === null || k.expiresAt > now).map((k) => ({ ...k.jwk })) };
  }

  /**
   * The private JWKs of the tenant's keys of `purpose` that may still verify, the signing one
   * first (made on first use), for a signer that must hold them itself: oidc-provider signs ID
   * tokens with the first key of its `jwks` and publishes the public halves of all of them.
   */
  async privateJwks(tenant: SigningTenant, purpose: SigningPurpose): Promise<JWK[]> {
    const read = () => liveKeys(this.#store.db, tenant.id, purpose, this.#now().toISOString());
    let rows = await read();
    if (!rows.some((k) => k.retired_at === null)) {
      await this.#createFirstKey(tenant.id, purpose);
      rows = await read();
    }
    return rows.map((row) => ({
      ...(JSON.parse(this.#options.secrets.open(row.private_key, signingKeyContext(tenant.id, row.kid))) as JWK),
      kid: row.kid,
      alg: ALGORITHMS[purpose],
      use: 'sig',
    }));
  }

  /**
   * Takes a key made outside this module into the tenant's keyring of `purpose`, with its own
   * `kid`, as its signing key, so what it signed keeps verifying: for keys kept elsewhere before
   * this module held every signing key (the OAuth provider's ID-token key). Nothing is done when
   * the keyring already has a key (another process adopted it first). Answers whether the keyring
   * holds the key now, so the caller may drop its own copy.
   */
  async adopt(tenant: SigningTenant, purpose: SigningPurpose, privateJwk: JWK & { kid: string }): Promise<boolean> {
    const algorithm = ALGORITHMS[purpose];
    // The key must be one of the purpose's algorithm: a key that does not import is refused here.
    await importJWK({ ...privateJwk, alg: algorithm }, algorithm);
    const publicJwk = createPublicKey({ key: privateJwk as JsonWebKey, format: 'jwk' }).export({ format: 'jwk' });
    const at = this.#now().toISOString();
    const row = {
      kid: privateJwk.kid,
      tenant_id: tenant.id,
      purpose,
      algorithm,
      public_jwk: JSON.stringify({ ...publicJwk, kid: privateJwk.kid, alg: algorithm, use: 'sig' }),
      private_key: this.#options.secrets.seal(JSON.stringify({ ...privateJwk, alg: algorithm }), signingKeyContext(tenant.id, privateJwk.kid)),
      created_at: at,
      activated_at: at,
      retired_at: null,
      expires_at: null,
    };
    try {
      await serialized(this.#store, lockKey.signingKeys(tenant.id), async (trx) => {
        if ((await liveKeys(trx, tenant.id, purpose, at)).length > 0) return;
        await insertKey(trx, row);
      });
    } catch (error) {
      // Another process adopted it first (the unique indexes on kid and on the signing key).
      if (!isUniqueViolation(error)) throw error;
    }
    this.#rings.delete(`${tenant.id}:${purpose}`);
    return (await liveKeys(this.#store.db, tenant.id, purpose, at)).some((k) => k.kid === privateJwk.kid);
  }

  /**
   * A new key signs from now on; the previous one keeps verifying until every token it signed has
   * expired. Keys past that are deleted. Answers the new key's id and the retired one's.
   */
  async rotate(tenant: SigningTenant, purpose: SigningPurpose = 'default'): Promise<{ kid: string; retiredKid: string | null }> {
    const made = await this.#newKey(tenant.id, purpose);
    const now = this.#now();
    const overlapUntil = new Date(now.getTime() + MAX_TOKEN_LIFETIME_SECONDS * 1000 + CACHE_MS).toISOString();
    const retiredKid = await serialized(this.#store, lockKey.signingKeys(tenant.id), async (trx) => {
      await deleteExpiredKeys(trx, tenant.id, purpose, now.toISOString());
      const retired = await retireKey(trx, tenant.id, purpose, now.toISOString(), overlapUntil);
      await insertKey(trx, made);
      return retired ?? null;
    });
    this.#rings.delete(`${tenant.id}:${purpose}`);
    return { kid: made.kid, retiredKid };
  }

  async #createFirstKey(tenantId: number, purpose: SigningPurpose): Promise<void> {
    const made = await this.#newKey(tenantId, purpose);
    try {
      await serialized(this.#store, lockKey.signingKeys(tenantId), async (trx) => {
        const existing = await liveKeys(trx, tenantId, purpose, this.#now().toISOString());
        if (existing.some((k) => k.retired_at === null)) return;
        await insertKey(trx, made);
      });
    } catch (error) {
      // Another process created it first (the unique index on the tenant's signing key).
      if (!isUniqueViolation(error)) throw error;
    }
  }

  async #newKey(tenantId: number, purpose: SigningPurpose) {
    const algorithm = ALGORITHMS[purpose];
    const { publicKey, privateKey } = await generateKeyPair(algorithm, { extractable: true, ...(algorithm === 'RS256' ? { modulusLength: 2048 } : {}) });
    const publicJwk = await exportJWK(publicKey);
    const kid = await calculateJwkThumbprint(publicJwk);
    const privateJwk = await exportJWK(privateKey);
    const at = this.#now().toISOString();
    return {
      kid,
      tenant_id: tenantId,
      purpose,
      algorithm,
      public_jwk: JSON.stringify({ ...publicJwk, kid, alg: algorithm, use: 'sig' }),
      private_key: this.#options.secrets.seal(JSON.stringify({ ...privateJwk, kid, alg: algorithm }), signingKeyContext(tenantId, kid)),
      created_at: at,
      activated_at: at,
      retired_at: null,
      expires_at: null,
    };
  }

  #keyring(tenantId: number, purpose: SigningPurpose, reload = false): Promise<Keyring> {
    const name = `${tenantId}:${purpose}`;
    const cached = this.#rings.get(name);
    if (cached !== undefined && !reload) {
      return cached.then((ring) => (this.#now().getTime() - ring.loadedAt < CACHE_MS ? ring : this.#keyring(tenantId, purpose, true)));
    }
    const loading = this.#load(tenantId, purpose);
    this.#rings.set(name, loading);
    loading.catch(() => this.#rings.delete(name));
    return loading;
  }

  async #load(tenantId: number, purpose: SigningPurpose): Promise<Keyring> {
    const algorithm = ALGORITHMS[purpose];
    const now = this.#now();
    const rows = await liveKeys(this.#store.db, tenantId, purpose, now.toISOString());
    const ring: Keyring = { signing: null, verifying: new Map(), jwks: [], loadedAt: now.getTime() };
    for (const row of rows) {
      const jwk = JSON.parse(row.public_jwk) as PublicJwk;
      const expiresAt = row.expires_at === null ? null : Date.parse(row.expires_at);
      ring.verifying.set(row.kid, { key: (await importJWK(jwk, algorithm)) as CryptoKey, expiresAt });
      ring.jwks.push({ jwk, expiresAt });
      if (row.retired_at === null && ring.signing === null) {
        const privateJwk = JSON.parse(this.#options.secrets.open(row.private_key, signingKeyContext(tenantId, row.kid))) as JWK;
        ring.signing = { kid: row.kid, key: (await importJWK(privateJwk, algorithm)) as CryptoKey };
      }
    }
    return ring;
  }
}

function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE';
}
