import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_INDEPENDENT } from '../../server/test/harness.js';
import { ApiError, exchangeEmbedSession, type MapiClient } from '../src/node.js';
import { createDeployment, startTestServer, type TestServer } from './support.js';

/** embed.generateSession, embed.exchange, embed.revoke and the keyless exchange of an embedding page. */
describe.each(STORE_INDEPENDENT)('embed sessions through the client (%s)', (dialect) => {
  let server: TestServer;
  let admin: MapiClient;
  let deploymentId: number;

  beforeAll(async () => {
    server = await startTestServer(dialect);
    admin = server.client();
    deploymentId = await createDeployment(admin);
  });
  afterAll(async () => server?.close());

  it('generates a session, exchanges it once for a token a backend verifies with the embed key set, and revokes', async () => {
    const sessionId = await admin.embed.generateSession({ deploymentId, externalId: 'client-user', securityContext: { customer: 7 } });
    expect(sessionId).toMatch(/^[0-9a-f]{32}$/);
    const token = await admin.embed.exchange(sessionId);
    const keys = (await admin.GET('/api/v1/embed/jwks.json')).data as JSONWebKeySet;
    const { payload } = await jwtVerify(token, createLocalJWKSet(keys), { typ: 'embed+jwt' });
    // The audience is the tenant's embed API at its public origin.
    expect(String(payload.aud)).toMatch(/^https:\/\/[^/]+\/api\/v1\/embed$/);
    expect(payload).toMatchObject({ deployment_id: deploymentId, embed_user: { external_id: 'client-user' }, security_context: { customer: 7 } });
    const again = await admin.embed.exchange(sessionId).catch((e: unknown) => e);
    expect(again).toBeInstanceOf(ApiError);
    expect(again).toMatchObject({ status: 401, code: 'UNAUTHENTICATED' });
    await admin.embed.revoke(sessionId);
    await admin.embed.revoke(sessionId);
  });

  it('an embedding page exchanges without a key; a revoked id is refused with its status', async () => {
    const ca = server.ca;
    const { Agent, fetch: undiciFetch } = await import('undici');
    const dispatcher = new Agent({ connect: { ca } });
    const fetchWithCa = ((input: RequestInfo | URL, init?: RequestInit) =>
      undiciFetch(input as never, { ...(init as object), dispatcher } as never)) as unknown as typeof globalThis.fetch;
    const live = await admin.embed.generateSession({ deploymentId, externalId: 'page-user' });
    expect(await exchangeEmbedSession(server.url, live, { fetch: fetchWithCa })).toMatch(/^ey/);
    const revoked = await admin.embed.generateSession({ deploymentId, externalId: 'page-user' });
    await admin.embed.revoke(revoked);
    await expect(exchangeEmbedSession(server.url, revoked, { fetch: fetchWithCa })).rejects.toMatchObject({ status: 401 });
    await dispatcher.close();
  });
});
