import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_INDEPENDENT } from '../../server/test/harness.js';
import { startOAuthProvider, type OAuthProviderFixture } from '../../server/test/oauth-provider-fixture.js';
import { ApiError, unwrap, type MapiClient } from '../src/node.js';
import { startTestServer, type TestServer } from './support.js';

/** oauthIntegrations and userOAuthTokens (reference 5.5-5.13) against a real server and a real OAuth provider. */

const REDIRECT_URI = 'https://mapi.example.test/api/v1/oauth-integrations/callback';

describe.each(STORE_INDEPENDENT)('OAuth integration and token helpers (%s)', (dialect) => {
  let server: TestServer;
  let idp: OAuthProviderFixture;
  let admin: MapiClient;

  beforeAll(async () => {
    idp = await startOAuthProvider({ redirectUri: REDIRECT_URI });
    // The provider listens on loopback, which the server calls only when allowed.
    server = await startTestServer(dialect, { env: { OUTBOUND_ALLOW_PRIVATE: '127.0.0.1/32' } });
    admin = server.client();
  });
  afterAll(async () => {
    await server?.close();
    await idp?.close();
  });

  it('creates, reads, replaces and deletes integrations; never returns the client secret', async () => {
    const input = {
      name: 'Warehouse',
      type: 'generic',
      authUrl: idp.authUrl,
      tokenUrl: idp.tokenUrl,
      clientId: idp.clientId,
      clientSecret: idp.clientSecret,
      redirectUri: REDIRECT_URI,
    };
    const made = await admin.oauthIntegrations.create(input);
    expect(made).toMatchObject({ name: 'Warehouse', scopes: null, config: null });
    expect(JSON.stringify(made)).not.toContain(idp.clientSecret);
    expect(await admin.oauthIntegrations.get(made.id)).toEqual(made);
    expect(await admin.oauthIntegrations.list()).toContainEqual(made);
    const { clientSecret: _kept, ...rest } = input;
    const replaced = await admin.oauthIntegrations.update(made.id, { ...rest, name: 'Renamed', scopes: ['openid'] });
    expect(replaced).toMatchObject({ id: made.id, name: 'Renamed', scopes: ['openid'] });
    await admin.oauthIntegrations.remove(made.id);
    const gone = await admin.oauthIntegrations.get(made.id).catch((e: unknown) => e);
    expect(gone).toBeInstanceOf(ApiError);
    expect(gone).toMatchObject({ status: 404, code: 'OAUTH_INTEGRATION_NOT_FOUND' });
  });

  it('initiate, authorize at the provider, complete the callback, then get, list and remove the token', async () => {
    const integration = await admin.oauthIntegrations.create({
      name: 'Warehouse',
      type: 'generic',
      authUrl: idp.authUrl,
      tokenUrl: idp.tokenUrl,
      clientId: idp.clientId,
      clientSecret: idp.clientSecret,
      redirectUri: REDIRECT_URI,
      scopes: ['openid', 'offline_access'],
      config: { revocationUrl: idp.revocationUrl },
    });
    const url = await admin.userOAuthTokens.initiate(integration.id);
    const returned = await idp.authorize(url, REDIRECT_URI);
    // The browser's return, here sent by the initiating user's own client.
    const done = unwrap(await admin.GET('/api/v1/oauth-integrations/callback', { params: { query: Object.fromEntries(returned.searchParams) } }));
    expect(done).toEqual({ integrationId: integration.id, status: 'ACTIVE' });
    const token = await admin.userOAuthTokens.get(integration.id);
    expect(token).toMatchObject({ integrationId: integration.id, status: 'ACTIVE', lastError: null });
    expect(await admin.userOAuthTokens.list()).toEqual([token]);
    await admin.userOAuthTokens.remove(integration.id);
    await expect(admin.userOAuthTokens.get(integration.id)).rejects.toMatchObject({ status: 404, code: 'USER_OAUTH_TOKEN_NOT_FOUND' });
    expect(await admin.userOAuthTokens.list()).toEqual([]);
  });
});
