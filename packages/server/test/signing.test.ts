import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdmin } from '../src/admin.js';
import { Signing, SigningError, type SigningTenant } from '../src/signing/index.js';
import { DIALECTS, TestApp } from './harness.js';

const AUDIENCE = 'https://data.example.com/v1';
/** The issuer of the default tenant: PUBLIC_URL's origin (an app that does not listen: https://localhost). */
const ISSUER = 'https://localhost';

describe.each(DIALECTS)('signing/: per-tenant keys, JWKS, rotation (%s)', (dialect) => {
  let t: TestApp;
  let tenant: SigningTenant;
  let other: SigningTenant;

  beforeAll(async () => {
    t = await TestApp.create(dialect);
    tenant = { id: t.tenantId, slug: 'default' };
    other = { id: (await t.tenant('signing-other', ['signing-other.example.com'])).tenantId, slug: 'signing-other' };
  });
  afterAll(async () => t?.close());

  async function keySet(host?: string): Promise<JSONWebKeySet> {
    const res = await t.request({ url: '/api/v1/data-api/jwks.json', key: null, ...(host ? { host } : {}) });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['cache-control']).toBe('public, max-age=300');
    return res.json() as JSONWebKeySet;
  }

  /** A keyring over the same store with a clock the test moves. */
  function clocked(start = Date.now()) {
    const clock = { at: start };
    const signing = new Signing(t.store, { secrets: t.app.services.secrets, issuerOf: async () => ISSUER, now: () => new Date(clock.at) });
    return { signing, clock };
  }

  it('signs a token that a data API verifies with the key set from GET /api/v1/data-api/jwks.json (no credential)', async () => {
    const signed = await t.app.services.signing.sign(
      tenant,
      { deployment_id: 7, iss: 'forged' },
      { audience: AUDIENCE, expiresInSeconds: 600, subject: 'user:1', type: 'test+jwt' },
    );
    const jwks = await keySet();
    expect(jwks.keys).toHaveLength(1);
    expect(jwks.keys[0]).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig', kid: signed.kid });
    expect(jwks.keys[0]).not.toHaveProperty('d');
    const { payload, protectedHeader } = await jwtVerify(signed.token, createLocalJWKSet(jwks), { issuer: ISSUER, audience: AUDIENCE });
    expect(protectedHeader).toMatchObject({ alg: 'ES256', kid: signed.kid, typ: 'test+jwt' });
    expect(payload).toMatchObject({ deployment_id: 7, iss: ISSUER, aud: AUDIENCE, sub: 'user:1', jti: signed.jti });
    expect(payload.exp! - payload.iat!).toBe(600);
    expect(await t.app.services.signing.verify(tenant, signed.token, { audience: AUDIENCE })).toMatchObject({ deployment_id: 7 });
    await expect(t.app.services.signing.verify(tenant, signed.token, { audience: 'https://elsewhere.example.com' })).rejects.toBeInstanceOf(SigningError);
  });

  it('refuses lifetimes outside 1 s to a day', async () => {
    await expect(t.app.services.signing.sign(tenant, {}, { audience: AUDIENCE, expiresInSeconds: 0 })).rejects.toBeInstanceOf(SigningError);
    await expect(t.app.services.signing.sign(tenant, {}, { audience: AUDIENCE, expiresInSeconds: 86_401 })).rejects.toBeInstanceOf(SigningError);
  });

  it("another tenant's token verifies neither with this tenant's keys nor with its key set", async () => {
    const theirs = await t.app.services.signing.sign(other, {}, { audience: AUDIENCE, expiresInSeconds: 600 });
    await expect(t.app.services.signing.verify(tenant, theirs.token, { audience: AUDIENCE })).rejects.toBeInstanceOf(SigningError);
    await expect(jwtVerify(theirs.token, createLocalJWKSet(await keySet()), { audience: AUDIENCE })).rejects.toThrow();
    // Its own host serves its own key set.
    const their = await keySet('signing-other.example.com');
    expect(their.keys.map((k) => k.kid)).toEqual([theirs.kid]);
    expect((await keySet()).keys.map((k) => k.kid)).not.toContain(theirs.kid);
    expect((await t.request({ url: '/api/v1/data-api/jwks.json', key: null, host: 'nobody.example.com' })).statusCode).toBe(200);
  });

  it('an expired token does not verify', async () => {
    const { signing, clock } = clocked();
    const signed = await signing.sign(tenant, {}, { audience: AUDIENCE, expiresInSeconds: 60 });
    expect(await signing.verify(tenant, signed.token, { audience: AUDIENCE })).toBeTruthy();
    clock.at += 61_000;
    await expect(signing.verify(tenant, signed.token, { audience: AUDIENCE })).rejects.toThrow(/exp/);
    await expect(jwtVerify(signed.token, createLocalJWKSet(await keySet()), { audience: AUDIENCE, currentDate: new Date(clock.at) })).rejects.toThrow(/exp/);
  });

  it('rotation: the new key signs, old tokens still verify, the key set lists both until the old tokens have expired', async () => {
    const signing = t.app.services.signing;
    const before = await signing.sign(tenant, { n: 1 }, { audience: AUDIENCE, expiresInSeconds: 86_400 });
    const { kid, retiredKid } = await signing.rotate(tenant);
    expect(retiredKid).toBe(before.kid);
    const after = await signing.sign(tenant, { n: 2 }, { audience: AUDIENCE, expiresInSeconds: 600 });
    expect(after.kid).toBe(kid);
    expect(after.kid).not.toBe(before.kid);
    expect(decodeProtectedHeader(after.token).kid).toBe(kid);
    const jwks = await keySet();
    expect(jwks.keys.map((k) => k.kid).sort()).toEqual([before.kid, kid].sort());
    for (const token of [before.token, after.token]) {
      await jwtVerify(token, createLocalJWKSet(jwks), { issuer: ISSUER, audience: AUDIENCE });
      await signing.verify(tenant, token, { audience: AUDIENCE });
    }
    // A day and a minute later (the longest lifetime, plus a process's cached keyring), the old key is gone.
    const overlap = 86_400_000 + 60_000;
    const almost = clocked(Date.now() + overlap - 5_000).signing;
    expect((await almost.jwks(tenant)).keys.map((k) => k.kid).sort()).toEqual([before.kid, kid].sort());
    const later = clocked(Date.now() + overlap + 1_000).signing;
    expect((await later.jwks(tenant)).keys.map((k) => k.kid)).toEqual([kid]);
  });

  it('private keys are stored sealed by secrets/, never in clear', async () => {
    const rows = await t.store.db.selectFrom('signing_keys').selectAll().execute();
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      expect(row.private_key).toMatch(/^v1:/);
      expect(JSON.parse(row.public_jwk)).not.toHaveProperty('d');
      for (const value of Object.values(row)) expect(String(value)).not.toMatch(/"d"\s*:/);
      // The private JWK's `d` is in no column, and opening needs the key's own context.
      const opened = JSON.parse(t.app.services.secrets.open(row.private_key, `signing-key:${row.tenant_id}:${row.kid}`)) as { d: string };
      expect(JSON.stringify(row)).not.toContain(opened.d);
      expect(() => t.app.services.secrets.open(row.private_key, `signing-key:${row.tenant_id}:another`)).toThrow();
    }
  });

  it('two processes signing the first token of a tenant at once create one key', async () => {
    const fresh = { id: (await t.tenant('signing-race')).tenantId, slug: 'signing-race' };
    const second = t.store.reopen();
    try {
      const a = new Signing(t.store, { secrets: t.app.services.secrets, issuerOf: async () => ISSUER });
      const b = new Signing(second, { secrets: t.app.services.secrets, issuerOf: async () => ISSUER });
      const signed = await Promise.all([a, b, a, b].map((s) => s.sign(fresh, {}, { audience: AUDIENCE, expiresInSeconds: 60 })));
      const rows = await t.store.db.selectFrom('signing_keys').select('kid').where('tenant_id', '=', fresh.id).execute();
      expect(rows).toHaveLength(1);
      expect(new Set(signed.map((s) => s.kid))).toEqual(new Set([rows[0]!.kid]));
    } finally {
      await second.close();
    }
  });
});

describe('npm run admin -- signing rotate', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mapi-signing-admin-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("rotates a tenant's key; the first run makes one, a missing tenant or flag is a usage error", async () => {
    const env = { DATA_DIR: dir };
    const lines: string[] = [];
    const io = { out: (l: string) => lines.push(l), err: (l: string) => lines.push(l) };
    expect(await runAdmin(['tenant', 'create', 'acme'], env, io)).toBe(0);
    expect(await runAdmin(['signing', 'rotate', '--tenant', 'acme'], env, io)).toBe(0);
    expect(lines.join('\n')).toContain('It had no key before.');
    lines.length = 0;
    expect(await runAdmin(['signing', 'rotate', '--tenant', 'acme'], env, io)).toBe(0);
    expect(lines.join('\n')).toMatch(/verifies the tokens it signed until they expire/);
    expect(await runAdmin(['signing', 'rotate', '--tenant', 'nobody'], env, io)).toBe(2);
    expect(await runAdmin(['signing', 'rotate'], env, io)).toBe(2);
  });
});
