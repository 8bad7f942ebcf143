import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, TestApp, problem } from './harness.js';
import { oauthPost } from './oauth-harness.js';

interface Created {
  id: number;
  clientId: string;
  clientSecret: string;
  userId: number;
  deploymentIds: number[] | null;
}

/*
 * Machine clients (extension): registered by admins, they get tokens by the client credentials
 * grant; a token acts as the client's user within the client's deployments, as a key would.
 */
describe.each(DIALECTS)('OAuth machine clients, client credentials grant (%s)', (dialect) => {
  let t: TestApp;
  let deploymentA: number;
  let deploymentB: number;
  const logged: string[] = [];

  beforeAll(async () => {
    t = await TestApp.create(dialect, { logger: { level: 'info', stream: { write: (line: string) => void logged.push(line) } } });
    deploymentA = await t.deployment('a');
    deploymentB = await t.deployment('b');
  });
  afterAll(async () => t?.close());

  async function register(body: Record<string, unknown>, key?: string): Promise<Created> {
    const res = await t.request({ method: 'POST', url: '/api/v1/oauth-clients', body, ...(key ? { key } : {}) });
    expect(res.statusCode, res.body).toBe(201);
    return res.json();
  }

  function clientToken(client: { clientId: string; clientSecret: string }) {
    return oauthPost(
      t,
      '/oauth/token',
      { grant_type: 'client_credentials' },
      { headers: { authorization: `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}` } },
    );
  }

  it('an admin registers a client scoped to deployments; its token reaches those and gets 403 KEY_SCOPE_FORBIDDEN elsewhere', async () => {
    const client = await register({ name: 'ci', deploymentIds: [deploymentA] });
    expect(client).toMatchObject({ name: 'ci', userId: t.admin.userId, deploymentIds: [deploymentA] });
    const res = await clientToken(client);
    expect(res.statusCode, res.body).toBe(200);
    const { access_token, expires_in, refresh_token } = res.json() as { access_token: string; expires_in: number; refresh_token?: string };
    expect(expires_in).toBe(3600);
    expect(refresh_token).toBeUndefined();
    expect((await t.request({ url: `/api/v1/deployments/${deploymentA}`, key: access_token })).statusCode).toBe(200);
    problem(await t.request({ url: `/api/v1/deployments/${deploymentB}`, key: access_token }), 403, 'KEY_SCOPE_FORBIDDEN');
    expect((await t.request({ url: '/api/v1/users/me', key: access_token })).json()).toMatchObject({ id: t.admin.userId });
  });

  it('a client acts as the user chosen at registration, with that user’s permissions', async () => {
    const explorer = await t.user('EXPLORER');
    const client = await register({ name: 'reporting', userId: explorer.userId });
    const { access_token } = (await clientToken(client)).json() as { access_token: string };
    expect((await t.request({ url: '/api/v1/users/me', key: access_token })).json()).toMatchObject({ id: explorer.userId });
    problem(await t.request({ method: 'POST', url: '/api/v1/users', key: access_token, body: { email: 'x@example.com' } }), 403, 'FORBIDDEN');
  });

  it('a wrong secret gets no token; the secret is shown once and never listed', async () => {
    const client = await register({ name: 'once' });
    const wrong = await clientToken({ clientId: client.clientId, clientSecret: 'nope' });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json()).toMatchObject({ error: 'invalid_client' });
    const list = await t.request({ url: '/api/v1/oauth-clients' });
    expect(list.statusCode).toBe(200);
    expect(list.body).not.toContain(client.clientSecret);
    expect((list.json() as { items: Array<{ id: number }> }).items.map((c) => c.id)).toContain(client.id);
    expect(logged.join('\n')).not.toContain(client.clientSecret);
    const rows = JSON.stringify(await t.store.db.selectFrom('oauth_models').selectAll().execute());
    expect(rows).not.toContain(client.clientSecret);
  });

  it('deleting a client ends its tokens on the next request', async () => {
    const client = await register({ name: 'short-lived' });
    const { access_token } = (await clientToken(client)).json() as { access_token: string };
    expect((await t.request({ url: '/api/v1/users/me', key: access_token })).statusCode).toBe(200);
    expect((await t.request({ method: 'DELETE', url: `/api/v1/oauth-clients/${client.id}` })).statusCode).toBe(204);
    problem(await t.request({ url: '/api/v1/users/me', key: access_token }), 401, 'UNAUTHENTICATED');
    problem(await t.request({ method: 'DELETE', url: `/api/v1/oauth-clients/${client.id}` }), 404, 'OAUTH_CLIENT_NOT_FOUND');
  });

  it('the user a client acts as, once deactivated, makes its tokens 401', async () => {
    const user = await t.user('DEVELOPER');
    const client = await register({ name: 'deactivated', userId: user.userId });
    const { access_token } = (await clientToken(client)).json() as { access_token: string };
    expect((await t.request({ url: '/api/v1/users/me', key: access_token })).statusCode).toBe(200);
    await t.store.db.updateTable('users').set({ deactivated_at: new Date().toISOString() }).where('id', '=', user.userId).execute();
    problem(await t.request({ url: '/api/v1/users/me', key: access_token }), 401, 'UNAUTHENTICATED');
  });

  it('registering: admins only, with an unscoped credential; unknown users and deployments are 404', async () => {
    const developer = await t.user('DEVELOPER');
    problem(await t.request({ method: 'POST', url: '/api/v1/oauth-clients', key: developer.key, body: { name: 'x' } }), 403, 'FORBIDDEN');
    problem(await t.request({ url: '/api/v1/oauth-clients', key: developer.key }), 403, 'FORBIDDEN');
    const scoped = await t.key(t.admin.userId, { deploymentIds: [deploymentA] });
    problem(await t.request({ method: 'POST', url: '/api/v1/oauth-clients', key: scoped, body: { name: 'x' } }), 403, 'KEY_SCOPE_FORBIDDEN');
    problem(await t.request({ method: 'POST', url: '/api/v1/oauth-clients', body: { name: 'x', userId: 999_999 } }), 404, 'USER_NOT_FOUND');
    problem(await t.request({ method: 'POST', url: '/api/v1/oauth-clients', body: { name: 'x', deploymentIds: [999_999] } }), 404, 'DEPLOYMENT_NOT_FOUND');
    problem(await t.request({ method: 'POST', url: '/api/v1/oauth-clients', body: { name: '' } }), 400, 'VALIDATION_FAILED');
  });

  it("another tenant's client is unknown here: its id is 404 and its credentials get no token on this host", async () => {
    const other = await t.tenant('clients-other', ['clients-other.example.com']);
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/oauth-clients',
      key: other.admin.key,
      host: 'clients-other.example.com',
      body: { name: 'theirs' },
    });
    const theirs = res.json() as Created;
    problem(await t.request({ method: 'DELETE', url: `/api/v1/oauth-clients/${theirs.id}` }), 404, 'OAUTH_CLIENT_NOT_FOUND');
    expect((await clientToken(theirs)).statusCode).toBe(401);
  });
});
