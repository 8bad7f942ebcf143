import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DIALECTS, TestApp, problem } from './harness.js';
import { FAST_RUNTIME } from './runtime-support.js';

/*
 * Issue 17, "Account": `POST /api/v1/usage-analytics/token` (reference 5.4): admins only (403
 * first), 404 while the account's usage analytics is off, otherwise a one-hour token for the data
 * API of the account's system usage deployment, whose data source holds that account's audit
 * events and nobody else's.
 */

type Json = Record<string, any>;

for (const dialect of DIALECTS) {
  describe(`usage analytics (${dialect})`, () => {
    let t: TestApp;
    let dataSources: string;
    const OTHER_HOST = 'usage-other.example.com';
    let other: { tenantId: number; admin: { key: string } };

    const mint = (key?: string, host?: string) =>
      t.request({ method: 'POST', url: '/api/v1/usage-analytics/token', ...(key === undefined ? {} : { key }), ...(host === undefined ? {} : { host }) });
    const setUsage = async (enabled: boolean | null, key?: string, host?: string) => {
      const res = await t.request({
        method: 'PUT',
        url: '/api/v1/tenant/usage-analytics',
        body: { enabled },
        ...(key === undefined ? {} : { key }),
        ...(host === undefined ? {} : { host }),
      });
      expect(res.statusCode, res.body).toBe(200);
      return res.json() as Json;
    };
    /** A query on the usage data API with the token, as a client would send it (the URL's path on this test host). */
    const load = (apiUrl: string, token: string, query: Json, host?: string) =>
      t.request({
        method: 'POST',
        url: `${new URL(apiUrl).pathname}/load`,
        key: null,
        headers: { authorization: `Bearer ${token}` },
        body: { query },
        ...(host === undefined ? {} : { host }),
      });
    /** Rows of `query`, once the usage deployment's runtime answers. */
    const rowsOf = (apiUrl: string, token: string, query: Json, host?: string) =>
      vi.waitFor(
        async () => {
          const res = await load(apiUrl, token, query, host);
          expect(res.statusCode, res.body).toBe(200);
          return (res.json() as Json).data as Json[];
        },
        { timeout: 60_000, interval: 200 },
      );
    const byRoute = {
      measures: ['audit_events.count'],
      dimensions: ['audit_events.route'],
      filters: [{ member: 'audit_events.route', operator: 'equals', values: ['/api/v1/groups'] }],
    };

    beforeAll(async () => {
      dataSources = fs.mkdtempSync(path.join(os.tmpdir(), 'mapi-usage-'));
      t = await TestApp.create(dialect, { runtime: { ...FAST_RUNTIME, dataSourcesDir: dataSources } });
      other = await t.tenant('usage-other', [OTHER_HOST]);
      for (const [key, host] of [
        [undefined, undefined],
        [other.admin.key, OTHER_HOST],
      ] as const) {
        const res = await t.request({
          method: 'PUT',
          url: '/api/v1/tenant/settings',
          body: { auditLogEnabled: true },
          ...(key === undefined ? {} : { key }),
          ...(host === undefined ? {} : { host }),
        });
        expect(res.statusCode, res.body).toBe(200);
      }
      // Three groups made here, five in the other account: the same route in both audit logs.
      for (let i = 0; i < 3; i++) expect((await t.request({ method: 'POST', url: '/api/v1/groups', body: { name: `usage ${i}` } })).statusCode).toBe(201);
      for (let i = 0; i < 5; i++)
        expect(
          (await t.request({ method: 'POST', url: '/api/v1/groups', body: { name: `other ${i}` }, key: other.admin.key, host: OTHER_HOST })).statusCode,
        ).toBe(201);
    });
    afterAll(async () => {
      await t?.close();
      fs.rmSync(dataSources, { recursive: true, force: true });
    });

    it('admins only, checked first (403 to others, on or off); 404 while usage analytics is off', async () => {
      const explorer = await t.user('EXPLORER');
      problem(await mint(explorer.key), 403, 'FORBIDDEN');
      problem(await mint(), 404, 'USAGE_ANALYTICS_DISABLED');
      expect(await setUsage(true)).toEqual({ enabled: true, deploymentId: null });
      problem(await mint(explorer.key), 403, 'FORBIDDEN');
      problem(await t.request({ method: 'PUT', url: '/api/v1/tenant/usage-analytics', body: { enabled: false }, key: explorer.key }), 403, 'FORBIDDEN');
      expect(await setUsage(null)).toMatchObject({ enabled: false });
      problem(await mint(), 404, 'USAGE_ANALYTICS_DISABLED');
    });

    it('a one-hour token whose data API counts this account’s audit events only, up to date at each token', async () => {
      await setUsage(true);
      const res = await mint();
      expect(res.statusCode, res.body).toBe(200);
      const answer = res.json() as Json;
      expect(Object.keys(answer).sort()).toEqual(['apiUrl', 'deploymentId', 'expiresAt', 'token']);
      expect(answer.apiUrl).toBe(`https://localhost/deployments/${answer.deploymentId}/data-api/v1`);
      const claims = JSON.parse(Buffer.from(String(answer.token).split('.')[1]!, 'base64url').toString()) as Json;
      expect(claims.exp - claims.iat).toBe(3600);
      expect(Date.parse(answer.expiresAt)).toBe(claims.exp * 1000);
      expect(claims.security_context).toEqual({ tenant_id: t.tenantId });
      expect((await t.request({ url: '/api/v1/tenant/usage-analytics' })).json()).toEqual({ enabled: true, deploymentId: answer.deploymentId });

      // The three groups of this account, never the other account's five.
      expect(await rowsOf(answer.apiUrl, answer.token, byRoute)).toEqual([{ 'audit_events.route': '/api/v1/groups', 'audit_events.count': 3 }]);
      const all = await rowsOf(answer.apiUrl, answer.token, { measures: ['audit_events.count'] });
      const mine = await t.store.db.selectFrom('audit_events').select('id').where('tenant_id', '=', t.tenantId).execute();
      expect(all[0]!['audit_events.count']).toBeLessThanOrEqual(mine.length);
      expect(all[0]!['audit_events.count']).toBeGreaterThanOrEqual(4);

      // Later events are there with the next token; the same deployment serves them.
      expect((await t.request({ method: 'POST', url: '/api/v1/groups', body: { name: 'usage later' } })).statusCode).toBe(201);
      const next = (await mint()).json() as Json;
      expect(next.deploymentId).toBe(answer.deploymentId);
      // (A query asked before may be answered from the runtime's result cache for QUERY_CACHE_MS: this one is new.)
      expect(await rowsOf(next.apiUrl, next.token, { ...byRoute, limit: 50 })).toEqual([{ 'audit_events.route': '/api/v1/groups', 'audit_events.count': 4 }]);
      const issued = await rowsOf(next.apiUrl, next.token, {
        measures: ['audit_events.count'],
        filters: [{ member: 'audit_events.action', operator: 'equals', values: ['token.issued'] }],
      });
      expect(issued[0]!['audit_events.count']).toBeGreaterThanOrEqual(1);

      // A token is for its own data API only: not a REST credential, and nothing without it.
      problem(await t.request({ url: '/api/v1/groups', key: null, headers: { authorization: `Bearer ${next.token}` } }), 401);
      problem(await load(next.apiUrl, 'not.a.token', byRoute), 401, 'UNAUTHENTICATED');
    });

    it('no deployment’s DB_URL may name a file of the usage data directory (each account’s file is the server’s to name)', async () => {
      const d = await t.deployment('snooping');
      for (const value of ['usage-analytics/1-abc.sqlite', './usage-analytics/x.sqlite', 'other/../usage-analytics/x.sqlite', 'usage-analytics']) {
        const res = await t.request({ method: 'PUT', url: `/api/v1/deployments/${d}/env-vars`, body: { env_variables: [{ name: 'DB_URL', value }] } });
        expect(problem(res, 400, 'VALIDATION_FAILED').detail, value).toContain('usage-analytics/');
      }
      expect(
        (
          await t.request({
            method: 'PUT',
            url: `/api/v1/deployments/${d}/env-vars`,
            body: { env_variables: [{ name: 'DB_URL', value: 'usage-analytics-copy.sqlite' }] },
          })
        ).statusCode,
      ).toBe(200);
    });

    it('the other account’s token opens its own usage deployment, holding its own events only', async () => {
      await setUsage(true, other.admin.key, OTHER_HOST);
      const res = await mint(other.admin.key, OTHER_HOST);
      expect(res.statusCode, res.body).toBe(200);
      const answer = res.json() as Json;
      const mine = (await t.request({ url: '/api/v1/tenant/usage-analytics' })).json() as Json;
      expect(answer.deploymentId).not.toBe(mine.deploymentId);
      expect(await rowsOf(answer.apiUrl, answer.token, byRoute, OTHER_HOST)).toEqual([{ 'audit_events.route': '/api/v1/groups', 'audit_events.count': 5 }]);
      // Its token on this account's usage data API: refused.
      const here = `https://localhost/deployments/${mine.deploymentId}/data-api/v1`;
      problem(await load(here, answer.token, byRoute), 401, 'UNAUTHENTICATED');
      problem(await load(here, answer.token, byRoute, OTHER_HOST), 401, 'UNAUTHENTICATED');
    });
  });
}
