import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envVarContext } from '../src/areas/env-vars/env-vars.store.js';
import { ConfigError, loadConfig } from '../src/config.js';
import { checkSecretKeys, loadSecretKeys, parseSecretKeys, reencryptAll, SecretKeyError, Secrets, SecretsError } from '../src/secrets/index.js';
import { startServer, StartupError } from '../src/server.js';
import { SECRET_COLUMNS } from '../src/stored-secrets.js';
import { DIALECTS, TestApp } from './harness.js';
import { runTs, serverEnv } from './server-env.js';

const keyText = () => randomBytes(32).toString('base64');
const keysOf = (text: string) => {
  const parsed = parseSecretKeys(text, 'test');
  expect(parsed.problems).toEqual([]);
  return parsed.keys;
};
const secretsOf = (text: string) => new Secrets(keysOf(text), 'MAPI_SECRET_KEY');

/** The stored form with one base64url part changed by one bit. */
function flip(stored: string, part: 2 | 3, at: 'start' | 'end'): string {
  const parts = stored.split(':');
  const bytes = Buffer.from(parts[part] ?? '', 'base64url');
  const i = at === 'start' ? 0 : bytes.length - 1;
  bytes[i] = (bytes[i] ?? 0) ^ 1;
  parts[part] = bytes.toString('base64url');
  return parts.join(':');
}

describe('secrets: the cipher', () => {
  const secrets = secretsOf(`k1:${keyText()}`);

  it('seals and opens text of any kind; the stored form names its key and shows nothing of the value', () => {
    for (const plain of ['', 'hunter2', 'ünïcødé ✓ 🔑', 'x'.repeat(40_000)]) {
      const stored = secrets.seal(plain, 'ctx');
      expect(stored).toMatch(/^v1:k1:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]+$/);
      if (plain.length > 3) expect(stored).not.toContain(plain);
      expect(secrets.open(stored, 'ctx')).toBe(plain);
      expect(secrets.keyIdOf(stored)).toBe('k1');
    }
  });

  it('a fresh nonce per value: the same text sealed twice gives two different stored forms', () => {
    const a = secrets.seal('same', 'ctx');
    const b = secrets.seal('same', 'ctx');
    expect(a).not.toBe(b);
    expect(a.split(':')[2]).not.toBe(b.split(':')[2]);
  });

  it('tampering with the ciphertext, the tag, the nonce, the key id or the context fails, and the error shows no value', () => {
    const stored = secrets.seal('top secret value', 'env-var:1:DB_PASSWORD');
    const other = secretsOf(`k1:${keyText()},k2:${keyText()}`);
    const attempts: Array<[string, () => string]> = [
      ['ciphertext', () => secrets.open(flip(stored, 3, 'start'), 'env-var:1:DB_PASSWORD')],
      ['tag', () => secrets.open(flip(stored, 3, 'end'), 'env-var:1:DB_PASSWORD')],
      ['nonce', () => secrets.open(flip(stored, 2, 'start'), 'env-var:1:DB_PASSWORD')],
      ['context: another row', () => secrets.open(stored, 'env-var:2:DB_PASSWORD')],
      ['context: none', () => secrets.open(stored)],
      ['key id relabelled to another configured key', () => other.open(stored.replace('v1:k1:', 'v1:k2:'), 'env-var:1:DB_PASSWORD')],
      ['same id, another key', () => other.open(stored, 'env-var:1:DB_PASSWORD')],
      ['truncated', () => secrets.open(stored.slice(0, 30), 'env-var:1:DB_PASSWORD')],
      ['not sealed at all', () => secrets.open('top secret value', 'env-var:1:DB_PASSWORD')],
    ];
    for (const [what, attempt] of attempts) {
      let error: unknown;
      try {
        attempt();
      } catch (e) {
        error = e;
      }
      expect(error, what).toBeInstanceOf(SecretsError);
      expect((error as Error).message, what).not.toContain('top secret');
    }
  });

  it('a value under a key that is not configured fails with a clear error naming the key', () => {
    const stored = secretsOf(`gone:${keyText()}`).seal('value', 'ctx');
    expect(() => secrets.open(stored, 'ctx')).toThrow(
      /encrypted with key "gone", which is not configured \(MAPI_SECRET_KEY\); add that key after the current one/,
    );
  });

  it('keys: hex, base64 and base64url, with or without an id (a bare key is named by its fingerprint); bad entries are named by position only', () => {
    const bytes = randomBytes(32);
    const [hex, b64, url, bare] = keysOf(
      `h:${bytes.toString('hex')}, b:${bytes.toString('base64')}\nu:${bytes.toString('base64url')},${bytes.toString('base64')}`,
    );
    expect([hex?.id, b64?.id, url?.id]).toEqual(['h', 'b', 'u']);
    expect(bare?.id).toMatch(/^k[0-9a-f]{12}$/);
    expect(hex?.material()).toEqual(bytes);
    expect(url?.material()).toEqual(bytes);
    // The material never shows when a key is printed, logged or serialised.
    expect(inspect(hex)).toBe('SecretKey(h)');
    expect(JSON.stringify({ key: hex })).toBe('{"key":{"id":"h"}}');

    const short = randomBytes(16).toString('base64');
    const { problems } = parseSecretKeys(`a:${short},bad id:${keyText()},c:${bytes.toString('hex')},c:${keyText()}`, 'MAPI_SECRET_KEY');
    expect(problems).toEqual([
      expect.stringMatching(/^MAPI_SECRET_KEY entry 1: a key is 32 bytes/),
      expect.stringMatching(/^MAPI_SECRET_KEY entry 2: a key id is/),
      'MAPI_SECRET_KEY entry 4: key id "c" is given twice',
    ]);
    expect(problems.join()).not.toContain(short);
  });
});

describe('secrets: configuration and the key file', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mapi-secrets-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('NODE_ENV=production without MAPI_SECRET_KEY or MAPI_SECRET_KEY_FILE is a configuration error; elsewhere a key file in DATA_DIR', () => {
    expect(() => loadConfig({ NODE_ENV: 'production', DATA_DIR: dir })).toThrow(ConfigError);
    expect(() => loadConfig({ NODE_ENV: 'production', DATA_DIR: dir })).toThrow(/MAPI_SECRET_KEY or MAPI_SECRET_KEY_FILE is required when NODE_ENV=production/);
    expect(loadConfig({ NODE_ENV: 'production', MAPI_SECRET_KEY: keyText() }).secretKeys.from).toBe('MAPI_SECRET_KEY');
    expect(loadConfig({ NODE_ENV: 'production', MAPI_SECRET_KEY_FILE: path.join(dir, 'k') }).secretKeys).toEqual({
      from: 'MAPI_SECRET_KEY_FILE',
      file: path.join(dir, 'k'),
    });
    expect(loadConfig({ DATA_DIR: dir }).secretKeys).toEqual({ from: 'generated', file: path.join(dir, 'secret.key') });
    expect(() => loadConfig({ MAPI_SECRET_KEY: keyText(), MAPI_SECRET_KEY_FILE: '/k' })).toThrow(/MAPI_SECRET_KEY and MAPI_SECRET_KEY_FILE are both set/);
    const bad = 'not-a-key-at-all';
    try {
      loadConfig({ MAPI_SECRET_KEY: bad });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toMatch(/MAPI_SECRET_KEY entry 1: a key is 32 bytes/);
      expect((error as Error).message).not.toContain(bad);
    }
  });

  it('the generated key file is made once with mode 0600 in a 0700 directory, reused, and tightened if loosened', async () => {
    const file = path.join(dir, 'fresh-data', 'secret.key');
    const first = await loadSecretKeys({ from: 'generated', file });
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
    const again = await loadSecretKeys({ from: 'generated', file });
    expect(again.keys.map((k) => k.id)).toEqual(first.keys.map((k) => k.id));
    expect(again.keys[0]?.material()).toEqual(first.keys[0]?.material());
    fs.chmodSync(file, 0o644);
    await loadSecretKeys({ from: 'generated', file });
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    // Started together on a new DATA_DIR, processes agree on one key.
    const together = path.join(dir, 'together', 'secret.key');
    const loaded = await Promise.all(Array.from({ length: 5 }, () => loadSecretKeys({ from: 'generated', file: together })));
    expect(new Set(loaded.map((l) => l.keys[0]?.id)).size).toBe(1);
  });

  it('MAPI_SECRET_KEY_FILE holds the same list; an unreadable or malformed file is a clear error', async () => {
    const file = path.join(dir, 'keys');
    const [a, b] = [keyText(), keyText()];
    fs.writeFileSync(file, `# current first\nnew:${a}\nold:${b}\n`);
    expect((await loadSecretKeys({ from: 'MAPI_SECRET_KEY_FILE', file })).keys.map((k) => k.id)).toEqual(['new', 'old']);
    await expect(loadSecretKeys({ from: 'MAPI_SECRET_KEY_FILE', file: path.join(dir, 'missing') })).rejects.toThrow(
      /MAPI_SECRET_KEY_FILE \(.*missing\) could not be read: ENOENT/,
    );
    fs.writeFileSync(file, 'garbage');
    await expect(loadSecretKeys({ from: 'MAPI_SECRET_KEY_FILE', file })).rejects.toThrow(SecretKeyError);
  });
});

describe.each(DIALECTS)('secrets over a store (%s)', (dialect) => {
  const [one, two] = [keyText(), keyText()];
  const k1 = secretsOf(`k1:${one}`);
  let t: TestApp;
  let deploymentId: number;
  beforeAll(async () => {
    t = await TestApp.create(dialect, { secrets: k1 });
    await checkSecretKeys(t.store.db, k1, SECRET_COLUMNS);
    deploymentId = await t.deployment('rotation');
    const res = await t.request({
      method: 'PUT',
      url: `/api/v1/deployments/${deploymentId}/env-vars`,
      body: {
        env_variables: [
          { name: 'A_PASSWORD', value: 'pa' },
          { name: 'B', value: 'b' },
          { name: 'C', value: 'c' },
        ],
      },
    });
    expect(res.statusCode, res.body).toBe(200);
  });
  afterAll(async () => t?.close());

  const values = async () => t.store.db.selectFrom('env_vars').select(['name', 'value']).where('deployment_id', '=', deploymentId).orderBy('name').execute();
  const opened = async (secrets: Secrets) => (await values()).map((r) => secrets.open(r.value, envVarContext(deploymentId, r.name)));

  it('the start-up check records the current key with a check value, and refuses a different key under the same id', async () => {
    const rows = await t.store.db.selectFrom('secret_keys').selectAll().execute();
    expect(rows.map((r) => r.id)).toEqual(['k1']);
    expect(rows[0]?.check_value).toMatch(/^v1:k1:/);
    await expect(checkSecretKeys(t.store.db, secretsOf(`k1:${keyText()}`), SECRET_COLUMNS)).rejects.toThrow(
      /^Secret key "k1" \(MAPI_SECRET_KEY\) is not the key this database's values were encrypted with under that id: its check value does not decrypt/,
    );
  });

  it('rotation: with the new key first and the old after it, old values still open; re-encryption moves them all; then the old key may go', async () => {
    const both = secretsOf(`k2:${two},k1:${one}`);
    const onlyNew = secretsOf(`k2:${two}`);
    await expect(checkSecretKeys(t.store.db, onlyNew, SECRET_COLUMNS)).rejects.toThrow(
      /^The database holds 3 value\(s\) encrypted with secret key "k1", which is not configured \(MAPI_SECRET_KEY has "k2"\)/,
    );
    await checkSecretKeys(t.store.db, both, SECRET_COLUMNS);
    expect(await opened(both)).toEqual(['pa', 'b', 'c']);

    const report = await reencryptAll(t.store.db, both, SECRET_COLUMNS, 2);
    expect(report).toEqual({
      currentKeyId: 'k2',
      columns: [
        { column: 'env_vars.value', total: 3, reencrypted: 3, alreadyCurrent: 0, changedMeanwhile: 0 },
        { column: 'signing_keys.private_key', total: 0, reencrypted: 0, alreadyCurrent: 0, changedMeanwhile: 0 },
        { column: 'environment_tokens.token', total: 0, reencrypted: 0, alreadyCurrent: 0, changedMeanwhile: 0 },
        { column: 'runtimes.secret', total: 0, reencrypted: 0, alreadyCurrent: 0, changedMeanwhile: 0 },
        { column: 'oauth_integrations.client_secret', total: 0, reencrypted: 0, alreadyCurrent: 0, changedMeanwhile: 0 },
        { column: 'user_oauth_tokens.access_token', total: 0, reencrypted: 0, alreadyCurrent: 0, changedMeanwhile: 0 },
        { column: 'user_oauth_tokens.refresh_token', total: 0, reencrypted: 0, alreadyCurrent: 0, changedMeanwhile: 0 },
        { column: 'oauth_states.code_verifier', total: 0, reencrypted: 0, alreadyCurrent: 0, changedMeanwhile: 0 },
        { column: 'oauth_models.secret', total: 0, reencrypted: 0, alreadyCurrent: 0, changedMeanwhile: 0 },
        { column: 'identity_providers.client_secret', total: 0, reencrypted: 0, alreadyCurrent: 0, changedMeanwhile: 0 },
        { column: 'idp_sign_ins.code_verifier', total: 0, reencrypted: 0, alreadyCurrent: 0, changedMeanwhile: 0 },
        { column: 'dbt_sync_settings.repository_token', total: 0, reencrypted: 0, alreadyCurrent: 0, changedMeanwhile: 0 },
        { column: 'git_host_apps.client_secret', total: 0, reencrypted: 0, alreadyCurrent: 0, changedMeanwhile: 0 },
        { column: 'git_host_apps.private_key', total: 0, reencrypted: 0, alreadyCurrent: 0, changedMeanwhile: 0 },
        { column: 'git_host_links.access_token', total: 0, reencrypted: 0, alreadyCurrent: 0, changedMeanwhile: 0 },
        { column: 'git_host_links.refresh_token', total: 0, reencrypted: 0, alreadyCurrent: 0, changedMeanwhile: 0 },
        { column: 'ai_settings.provider_api_key', total: 0, reencrypted: 0, alreadyCurrent: 0, changedMeanwhile: 0 },
      ],
      retired: ['k1'],
      remaining: [],
    });
    expect((await values()).every((r) => r.value.startsWith('v1:k2:'))).toBe(true);
    // Idempotent.
    const again = await reencryptAll(t.store.db, both, SECRET_COLUMNS);
    expect(again.columns[0]).toEqual({ column: 'env_vars.value', total: 3, reencrypted: 0, alreadyCurrent: 3, changedMeanwhile: 0 });

    await checkSecretKeys(t.store.db, onlyNew, SECRET_COLUMNS);
    expect(await opened(onlyNew)).toEqual(['pa', 'b', 'c']);
    expect((await t.store.db.selectFrom('secret_keys').select('id').execute()).map((r) => r.id)).toEqual(['k2']);
  });

  it('a key the database knows but no value uses any more is forgotten at start, not required', async () => {
    // A server that started with `lonely` as its key and sealed nothing.
    const lonely = secretsOf(`lonely:${keyText()}`);
    await t.store.db
      .insertInto('secret_keys')
      .values({ id: 'lonely', check_value: lonely.seal('mapi secret key check', 'secret-key-check'), created_at: new Date().toISOString() })
      .execute();
    // k2 still holds values, so a server with only `lonely` is refused...
    await expect(checkSecretKeys(t.store.db, lonely, SECRET_COLUMNS)).rejects.toThrow(/encrypted with secret key "k2"/);
    // ...but a server with k2 forgets `lonely`, which sealed nothing.
    await checkSecretKeys(t.store.db, secretsOf(`k2:${two}`), SECRET_COLUMNS);
    expect((await t.store.db.selectFrom('secret_keys').select('id').orderBy('id').execute()).map((r) => r.id)).toEqual(['k2']);
  });
});

describe.each(DIALECTS)('secret keys at start-up and the re-encrypt command (%s)', (dialect) => {
  it('a wrong key or a missing one stops the start with a message naming what to fix; `secrets re-encrypt` rotates; a generated key is reused', async () => {
    const env = await serverEnv(dialect);
    const [one, two] = [keyText(), keyText()];
    try {
      // First start without a key: one is generated in DATA_DIR and kept.
      let printed = '';
      let server = await startServer(env.config(), (l) => (printed += l));
      const adminKey = /mapi_[A-Za-z0-9]{40}/.exec(printed)?.[0] ?? '';
      const keyFile = path.join(env.dataDir, 'secret.key');
      expect(fs.statSync(keyFile).mode & 0o777).toBe(0o600);
      const generated = fs.readFileSync(keyFile, 'utf8');
      const at = new Date().toISOString();
      const tenant = await server.store.db.selectFrom('tenants').select('id').executeTakeFirstOrThrow();
      const { id: deploymentId } = await server.store.db
        .insertInto('deployments')
        .values({ tenant_id: tenant.id, name: 'keys', settings: '{}', created_by: null, created_at: at, updated_at: at })
        .returning('id')
        .executeTakeFirstOrThrow();
      const url = `/api/v1/deployments/${deploymentId}/env-vars`;
      const put = await server.app.inject({
        method: 'PUT',
        url,
        headers: { authorization: `Bearer ${adminKey}` },
        payload: { env_variables: [{ name: 'PLAIN', value: 'kept' }] },
      });
      expect(put.statusCode, put.body).toBe(200);
      await server.close();

      server = await startServer(env.config(), () => undefined);
      const read = await server.app.inject({ url, headers: { authorization: `Bearer ${adminKey}` } });
      expect(read.json()).toMatchObject({ items: [{ name: 'PLAIN', value: 'kept' }] });
      await server.close();
      expect(fs.readFileSync(keyFile, 'utf8')).toBe(generated);

      // The key file lost: a new one would not read the database's values.
      fs.rmSync(keyFile);
      const lost = startServer(env.config(), () => undefined);
      await expect(lost).rejects.toBeInstanceOf(StartupError);
      await expect(lost).rejects.toThrow(
        /^The database holds 1 value\(s\) encrypted with secret key "k[0-9a-f]{12}", which is not configured \(the generated key file .*secret\.key has "k[0-9a-f]{12}"\)\. Add that key after the current one/,
      );
      fs.writeFileSync(keyFile, generated, { mode: 0o600 });

      // Rotation to explicit keys: the generated key goes second, re-encrypt, then it goes.
      const oldEntry = generated.trim();
      const rotate = await runTs('packages/server/src/admin.ts', ['secrets', 're-encrypt'], { ...env.env, MAPI_SECRET_KEY: `k1:${one},${oldEntry}` });
      expect(rotate.code, rotate.stderr).toBe(0);
      expect(rotate.stdout).toContain('env_vars.value: 1 value(s); 1 re-encrypted under key "k1", 0 already under it');
      expect(rotate.stdout).toMatch(/No value is left under key\(s\) "k[0-9a-f]{12}": the database forgot them\./);
      expect(rotate.stdout).toContain('Every stored secret is under key "k1"');
      const twice = await runTs('packages/server/src/admin.ts', ['secrets', 're-encrypt'], { ...env.env, MAPI_SECRET_KEY: `k1:${one}` });
      expect(twice.stdout).toContain('env_vars.value: 1 value(s); 0 re-encrypted under key "k1", 1 already under it');

      server = await startServer(env.config({ MAPI_SECRET_KEY: `k1:${one}` }), () => undefined);
      expect((await server.app.inject({ url, headers: { authorization: `Bearer ${adminKey}` } })).json()).toMatchObject({
        items: [{ name: 'PLAIN', value: 'kept' }],
      });
      await server.close();

      // The wrong key under the right id.
      await expect(startServer(env.config({ MAPI_SECRET_KEY: `k1:${two}` }), () => undefined)).rejects.toThrow(
        /^Secret key "k1" \(MAPI_SECRET_KEY\) is not the key this database's values were encrypted with under that id: its check value does not decrypt\. Configure the key that was in use under "k1"/,
      );
      // The same, as main.ts reports it: one line, exit 1, the key itself nowhere.
      const main = await runTs('packages/server/src/main.ts', [], { ...env.env, PORT: '0', MAPI_SECRET_KEY: `k1:${two}` });
      expect(main.code).toBe(1);
      expect(main.stderr.trimEnd().split('\n')).toEqual([expect.stringMatching(/^mapi failed to start: Secret key "k1" \(MAPI_SECRET_KEY\) is not the key/)]);
      expect(main.stderr).not.toContain(two);
      // And the admin command: exit 2, one line.
      const admin = await runTs('packages/server/src/admin.ts', ['secrets', 're-encrypt'], { ...env.env, MAPI_SECRET_KEY: `k2:${two}` });
      expect(admin.code).toBe(2);
      expect(admin.stderr.trimEnd().split('\n')).toEqual([
        expect.stringMatching(/^The database holds 1 value\(s\) encrypted with secret key "k1", which is not configured/),
      ]);
      // Production without a key: a configuration error before anything opens.
      const production = await runTs('packages/server/src/main.ts', [], { ...env.env, PORT: '0', NODE_ENV: 'production' });
      expect(production.code).toBe(2);
      expect(production.stderr).toContain('MAPI_SECRET_KEY or MAPI_SECRET_KEY_FILE is required when NODE_ENV=production');
    } finally {
      await env.destroy();
    }
  }, 120_000);
});
