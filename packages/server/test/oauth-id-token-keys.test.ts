import { SignJWT, createLocalJWKSet, exportJWK, generateKeyPair, importJWK, jwtVerify, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashOf, oauthSecretContext } from '../src/areas/oauth/oauth.adapter.js';
import { DIALECTS, TestApp } from './harness.js';

const ISSUER = 'https://localhost/oauth';

/*
 * The authorization server's ID-token key is the tenant's `oauth-id-token` keyring of signing/.
 * A tenant whose provider made its own key before kept it with its cookie keys ("provider-keys"):
 * on the first read after an upgrade the keyring takes it, under the same `kid`, so ID tokens it
 * signed still verify against the published key set, and it is no longer kept beside the cookie keys.
 */
describe.each(DIALECTS)('OAuth ID-token keys in the keyring (%s)', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await TestApp.create(dialect);
  });
  afterAll(async () => t?.close());

  const jwks = async () => {
    const res = await t.app.inject({ method: 'GET', url: '/oauth/jwks' });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as { keys: JWK[] };
  };

  it('adopts the key a tenant kept before, with its kid: an ID token signed before the upgrade still verifies against the published key set', async () => {
    const keyHash = hashOf('provider-keys');
    const context = oauthSecretContext(t.tenantId, keyHash);
    // What the provider stored before signing/ held its key.
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    const legacy = { ...(await exportJWK(privateKey)), alg: 'ES256', use: 'sig', kid: '0123456789abcdef' };
    const cookieKeys = ['cookie-key-of-before'];
    await t.store.db
      .insertInto('oauth_models')
      .values({
        tenant_id: t.tenantId,
        model: 'ProviderKeys',
        key_hash: keyHash,
        payload: '{}',
        secret: t.app.services.secrets.seal(JSON.stringify({ cookieKeys, jwk: legacy }), context),
        created_at: new Date().toISOString(),
        expires_at: null,
        grant_hash: null,
        user_code_hash: null,
        uid: null,
      })
      .execute();
    const before = await new SignJWT({ sub: String(t.admin.userId) })
      .setProtectedHeader({ alg: 'ES256', kid: legacy.kid })
      .setIssuer(ISSUER)
      .setAudience('mapi-cli')
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(await importJWK(legacy, 'ES256'));

    const published = await jwks();
    expect(published.keys.map((k) => k.kid)).toEqual([legacy.kid]);
    expect(published.keys[0]).not.toHaveProperty('d');
    const keySet = createLocalJWKSet(published);
    expect((await jwtVerify(before, keySet, { issuer: ISSUER, audience: 'mapi-cli' })).payload.sub).toBe(String(t.admin.userId));

    // The keyring holds it now; the provider's own secret keeps its copy for processes of the
    // previous version during a rolling upgrade.
    const rows = await t.store.db.selectFrom('signing_keys').select(['kid', 'purpose', 'retired_at']).where('tenant_id', '=', t.tenantId).execute();
    expect(rows.filter((r) => r.purpose === 'oauth-id-token')).toEqual([{ kid: legacy.kid, purpose: 'oauth-id-token', retired_at: null }]);
    const stored = await t.store.db
      .selectFrom('oauth_models')
      .select('secret')
      .where('tenant_id', '=', t.tenantId)
      .where('model', '=', 'ProviderKeys')
      .executeTakeFirstOrThrow();
    expect(JSON.parse(t.app.services.secrets.open(stored.secret!, context))).toEqual({ cookieKeys, jwk: legacy });
  });

  it('a tenant with no key of before gets one from the keyring, published under its thumbprint', async () => {
    const other = await t.tenant('fresh-oauth', ['fresh-oauth.example.com']);
    const res = await t.app.inject({ method: 'GET', url: '/oauth/jwks', headers: { host: 'fresh-oauth.example.com' } });
    expect(res.statusCode, res.body).toBe(200);
    const { keys } = res.json() as { keys: JWK[] };
    const rows = await t.store.db
      .selectFrom('signing_keys')
      .select('kid')
      .where('tenant_id', '=', other.tenantId)
      .where('purpose', '=', 'oauth-id-token')
      .execute();
    expect(rows).toHaveLength(1);
    expect(keys.map((k) => k.kid)).toEqual([rows[0]!.kid]);
    expect(keys[0]).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
  });
});
