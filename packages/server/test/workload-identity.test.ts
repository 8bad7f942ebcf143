import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, TestApp, problem } from './harness.js';

/*
 * Issue 17, "OIDC token configs: workload identity" (reference 5.14-5.18): the tenant's configs,
 * one per well-known cloud and any number of Custom, with the reference's rules on audiences,
 * names, subjects, claims and target variables; admin only.
 */
describe.each(DIALECTS)('OIDC token configs (%s)', (dialect) => {
  let t: TestApp;
  const create = (body: unknown, key?: string) => t.request({ method: 'POST', url: '/api/v1/oidc-token-configs', body, ...(key ? { key } : {}) });
  beforeAll(async () => {
    t = await TestApp.create(dialect);
  });
  afterAll(async () => t?.close());

  it('fills in the well-known audiences (AWS, Azure), takes GCP’s provider and a Custom audience, and lists them oldest first as a bare array', async () => {
    const aws = await create({ audienceType: 'AWS' });
    expect(aws.statusCode).toBe(200);
    expect(aws.json()).toMatchObject({
      audienceType: 'AWS',
      audience: 'sts.amazonaws.com',
      name: 'aws',
      isEnabled: true,
      subFormat: null,
      customClaims: null,
      targetEnvVar: null,
    });
    expect((await create({ audienceType: 'Azure', name: 'azure-prod' })).json()).toMatchObject({ audience: 'api://AzureADTokenExchange', name: 'azure-prod' });
    const provider = '//iam.googleapis.com/projects/123456/locations/global/workloadIdentityPools/mapi/providers/mapi-oidc';
    expect((await create({ audienceType: 'GCP', customAudience: provider })).json()).toMatchObject({ audience: provider, name: 'gcp' });
    const custom = (
      await create({
        audienceType: 'Custom',
        customAudience: 'https://vault.example.com',
        targetEnvVar: 'VAULT_JWT_FILE',
        customClaims: { team: 'data', roles: ['read'] },
      })
    ).json();
    expect(custom).toMatchObject({
      audienceType: 'Custom',
      audience: 'https://vault.example.com',
      name: `custom-${custom.id}`,
      targetEnvVar: 'VAULT_JWT_FILE',
      customClaims: { team: 'data', roles: ['read'] },
    });
    const list = await t.request({ url: '/api/v1/oidc-token-configs' });
    expect(Array.isArray(list.json())).toBe(true);
    expect(list.json().map((c: { name: string }) => c.name)).toEqual(['aws', 'azure-prod', 'gcp', `custom-${custom.id}`]);
    expect((await t.request({ url: `/api/v1/oidc-token-configs/${aws.json().id}` })).json()).toEqual(aws.json());
  });

  it('one config per well-known cloud (409), any number of Custom; names unique (409)', async () => {
    problem(await create({ audienceType: 'AWS', name: 'aws-two' }), 409, 'OIDC_TOKEN_CONFIG_EXISTS');
    for (const audience of ['https://a.example.com', 'https://b.example.com'])
      expect((await create({ audienceType: 'Custom', customAudience: audience })).statusCode).toBe(200);
    problem(await create({ audienceType: 'Custom', customAudience: 'https://c.example.com', name: 'aws' }), 409, 'OIDC_TOKEN_CONFIG_EXISTS');
    // Concurrent creates of one cloud: exactly one wins.
    const ours = await t.tenant('racing', ['racing.example.com']);
    const answers = await Promise.all(
      Array.from({ length: 6 }, () =>
        t.request({ method: 'POST', url: '/api/v1/oidc-token-configs', key: ours.admin.key, host: 'racing.example.com', body: { audienceType: 'Azure' } }),
      ),
    );
    expect(answers.map((a) => a.statusCode).sort()).toEqual([200, 409, 409, 409, 409, 409]);
  });

  it('refuses what the reference rules out: unknown types, an audience for AWS or Azure, none for GCP or Custom, a GCP audience that is no provider, bad names, subjects, variables and claims', async () => {
    const refused = async (body: unknown, pointer: RegExp) => {
      const p = problem(await create(body), 400, 'VALIDATION_FAILED');
      expect(JSON.stringify(p.errors ?? p.detail)).toMatch(pointer);
    };
    await refused({ audienceType: 'Oracle' }, /audienceType/);
    await refused({ audienceType: 'AWS', customAudience: 'https://x.example.com' }, /customAudience/);
    await refused({ audienceType: 'GCP' }, /customAudience/);
    await refused({ audienceType: 'GCP', customAudience: 'https://example.com' }, /customAudience/);
    await refused({ audienceType: 'Custom' }, /customAudience/);
    await refused({ audienceType: 'Custom', customAudience: 'x', name: 'Bad_Name' }, /name/);
    await refused({ audienceType: 'Custom', customAudience: 'x', name: '-edge' }, /name/);
    await refused({ audienceType: 'Custom', customAudience: 'x', subFormat: 'mapi:{user_email}' }, /subFormat/);
    await refused({ audienceType: 'Custom', customAudience: 'x', subFormat: 'a b' }, /subFormat/);
    await refused({ audienceType: 'Custom', customAudience: 'x', targetEnvVar: 'lower' }, /targetEnvVar/);
    await refused({ audienceType: 'Custom', customAudience: 'x', targetEnvVar: 'AWS_WEB_IDENTITY_TOKEN_FILE' }, /targetEnvVar/);
    await refused({ audienceType: 'Custom', customAudience: 'x', customClaims: { sub: 'me' } }, /customClaims\/sub/);
    await refused({ audienceType: 'Custom', customAudience: 'x', customClaims: { 'mapi:deployment_id': '1' } }, /customClaims/);
    await refused({ audienceType: 'Custom', customAudience: 'x', customClaims: { n: 5 } }, /customClaims/);
    const target = await t.request({
      method: 'POST',
      url: '/api/v1/oidc-token-configs',
      body: { audienceType: 'Custom', customAudience: 'x', targetEnvVar: 'X', name: 'later' },
    });
    expect(target.statusCode).toBe(200);
    // targetEnvVar is for Custom configs only.
    const aws = (await t.request({ url: '/api/v1/oidc-token-configs' })).json().find((c: { audienceType: string }) => c.audienceType === 'AWS');
    problem(await t.request({ method: 'PUT', url: `/api/v1/oidc-token-configs/${aws.id}`, body: { targetEnvVar: 'AWS_FILE' } }), 400, 'VALIDATION_FAILED');
    // Nothing refused was stored.
    const names = (await t.request({ url: '/api/v1/oidc-token-configs' })).json().map((c: { name: string }) => c.name);
    expect(names).not.toContain('-edge');
  });

  it('PUT changes the fields given and never the type; DELETE answers {} and the config is gone (404 after)', async () => {
    const id = (await create({ audienceType: 'Custom', customAudience: 'https://api.example.com', name: 'changing' })).json().id;
    const updated = await t.request({
      method: 'PUT',
      url: `/api/v1/oidc-token-configs/${id}`,
      body: { subFormat: 'acme:{deployment_id}:{region}', isEnabled: false, customClaims: { env: 'prod' } },
    });
    expect(updated.json()).toMatchObject({
      id,
      audience: 'https://api.example.com',
      name: 'changing',
      subFormat: 'acme:{deployment_id}:{region}',
      isEnabled: false,
      customClaims: { env: 'prod' },
    });
    problem(await t.request({ method: 'PUT', url: `/api/v1/oidc-token-configs/${id}`, body: { audienceType: 'AWS' } }), 400, 'VALIDATION_FAILED');
    expect((await t.request({ url: `/api/v1/oidc-token-configs/${id}` })).json().audienceType).toBe('Custom');
    const removed = await t.request({ method: 'DELETE', url: `/api/v1/oidc-token-configs/${id}` });
    expect(removed.statusCode).toBe(200);
    expect(removed.json()).toEqual({});
    problem(await t.request({ url: `/api/v1/oidc-token-configs/${id}` }), 404, 'OIDC_TOKEN_CONFIG_NOT_FOUND');
    problem(await t.request({ method: 'DELETE', url: `/api/v1/oidc-token-configs/${id}` }), 404, 'OIDC_TOKEN_CONFIG_NOT_FOUND');
  });

  it('admins only (403 to others), writes need an unscoped key, and another tenant’s configs are 404', async () => {
    const developer = await t.user('DEVELOPER');
    problem(await t.request({ url: '/api/v1/oidc-token-configs', key: developer.key }), 403, 'FORBIDDEN');
    problem(await create({ audienceType: 'Custom', customAudience: 'x' }, developer.key), 403, 'FORBIDDEN');
    const admin = await t.user('ADMIN');
    const deployment = await t.deployment('scoped');
    const scoped = await t.key(admin.userId, { deploymentIds: [deployment] });
    expect((await t.request({ url: '/api/v1/oidc-token-configs', key: scoped })).statusCode).toBe(200);
    problem(await create({ audienceType: 'Custom', customAudience: 'x' }, scoped), 403);
    const other = await t.tenant('elsewhere', ['elsewhere.example.com']);
    const theirs = (
      await t.request({ method: 'POST', url: '/api/v1/oidc-token-configs', key: other.admin.key, host: 'elsewhere.example.com', body: { audienceType: 'AWS' } })
    ).json();
    problem(await t.request({ url: `/api/v1/oidc-token-configs/${theirs.id}` }), 404, 'OIDC_TOKEN_CONFIG_NOT_FOUND');
    problem(await t.request({ method: 'DELETE', url: `/api/v1/oidc-token-configs/${theirs.id}` }), 404, 'OIDC_TOKEN_CONFIG_NOT_FOUND');
  });
});
