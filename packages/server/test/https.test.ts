import { execFileSync } from 'node:child_process';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../src/areas/api-keys/key-format.js';
import { createTenant } from '../src/areas/tenants/tenants.service.js';
import { loadConfig } from '../src/config.js';
import { startServer, type RunningServer } from '../src/server.js';
import { systemClock } from '../src/time.js';
import { loadTls } from '../src/tls.js';
import { DIALECTS } from './harness.js';
import { exited, keyIn, REPO_ROOT, serverEnv, spawnTs, type ServerEnv } from './server-env.js';

/* Spec, Authentication 2: only HTTPS is accepted. These tests talk to a real listening server. */

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** The certificate the server presented, DER. */
  certificate: Buffer;
}

interface Call {
  path?: string;
  method?: string;
  host?: string;
  key?: string;
  body?: unknown;
}

/** Starts an HTTPS request that trusts only `ca`; the caller writes the body and ends it. */
function open(url: string, ca: string, { path: p = '/api/v1/api-keys', method = 'GET', host, key, body }: Call) {
  const target = new URL(url);
  const headers: Record<string, string> = {};
  if (host) headers.host = host;
  if (key) headers.authorization = `Bearer ${key}`;
  const payload = body === undefined ? undefined : JSON.stringify(body);
  if (payload !== undefined) {
    headers['content-type'] = 'application/json';
    headers['content-length'] = String(Buffer.byteLength(payload));
  }
  // servername: the certificate names localhost whatever Host header a test sends.
  const req = https.request({ hostname: target.hostname, port: target.port, path: p, method, headers, ca, servername: 'localhost', agent: false });
  const answer = new Promise<Answer>((resolve, reject) => {
    req.once('error', reject);
    req.once('response', (res) => {
      const certificate = (res.socket as TLSSocket).getPeerCertificate().raw;
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.once('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text, certificate }));
      res.once('error', reject);
    });
  });
  return { req, payload, answer };
}

function call(url: string, ca: string, options: Call = {}): Promise<Answer> {
  const { req, payload, answer } = open(url, ca, options);
  req.end(payload);
  return answer;
}

const der = (pem: string) => new X509Certificate(pem).raw;

describe.each(DIALECTS)('HTTPS server (%s)', (dialect) => {
  const adminKey = generateApiKey();
  let env: ServerEnv;
  let server: RunningServer;
  let ca: string;
  const start = () => startServer(env.config({ ADMIN_API_KEY: adminKey, BASE_DOMAIN: 'mapi.test' }), () => undefined);

  beforeAll(async () => {
    env = await serverEnv(dialect);
    server = await start();
    ca = fs.readFileSync(path.join(env.dataDir, 'tls', 'localhost.crt'), 'utf8');
  });
  afterAll(async () => {
    await server?.close();
    await env?.destroy();
  });

  it('answers over HTTPS with the self-signed certificate it keeps in DATA_DIR/tls', async () => {
    expect(server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const res = await call(server.url, ca, { host: 'default.mapi.test', key: adminKey });
    expect(res.status, res.body).toBe(200);
    expect(res.certificate.equals(der(ca))).toBe(true);
    expect(fs.statSync(path.join(env.dataDir, 'tls', 'localhost.key')).mode & 0o777).toBe(0o600);
  });

  it('presents the same certificate after a restart', async () => {
    const again = await start();
    try {
      expect(fs.readFileSync(path.join(env.dataDir, 'tls', 'localhost.crt'), 'utf8')).toBe(ca);
      const res = await call(again.url, ca, { host: 'default.mapi.test', key: adminKey });
      expect(res.status).toBe(200);
      expect(res.certificate.equals(der(ca))).toBe(true);
    } finally {
      await again.close();
    }
  });

  it('never answers plain HTTP with an HTTP response', async () => {
    const { port } = new URL(server.url);
    const received = await new Promise<Buffer>((resolve, reject) => {
      const chunks: Buffer[] = [];
      const socket = net.connect(Number(port), '127.0.0.1', () => {
        socket.write(`GET /api/v1/api-keys HTTP/1.1\r\nHost: default.mapi.test\r\nAuthorization: Bearer ${adminKey}\r\n\r\n`);
      });
      socket.on('data', (d: Buffer) => chunks.push(d));
      socket.once('error', reject);
      socket.once('close', () => resolve(Buffer.concat(chunks)));
    });
    expect(received.toString('latin1')).not.toContain('HTTP/');

    const viaHttp = new Promise<number | undefined>((resolve, reject) => {
      http.get({ host: '127.0.0.1', port, path: '/api/v1/api-keys', agent: false }, (res) => resolve(res.statusCode)).once('error', reject);
    });
    await expect(viaHttp).rejects.toThrow();
  });

  it('picks the tenant from the Host header over the socket', async () => {
    const acme = await createTenant(server.store, systemClock, { slug: 'acme', domains: ['analytics.acme.com'], adminEmail: 'admin@acme.example' });
    expect((await call(server.url, ca, { host: 'acme.mapi.test', key: acme.key })).status).toBe(200);
    expect((await call(server.url, ca, { host: 'analytics.acme.com:8443', key: acme.key })).status).toBe(200);
    expect((await call(server.url, ca, { host: 'default.mapi.test', key: acme.key })).status).toBe(401);

    const unknown = await call(server.url, ca, { host: 'unknown.mapi.test', key: acme.key });
    expect(unknown.status).toBe(404);
    expect(unknown.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(JSON.parse(unknown.body)).toMatchObject({ status: 404, code: 'TENANT_NOT_FOUND' });
  });

  it('on close, finishes the request in flight, then refuses new connections', async () => {
    const closing = await start();
    // The request is in flight once the server has its headers; its body is still to come.
    const received = new Promise<void>((resolve) => closing.app.server.once('request', () => resolve()));
    const { req, payload, answer } = open(closing.url, ca, { method: 'POST', host: 'default.mapi.test', key: adminKey, body: { name: 'in flight' } });
    const half = Math.floor((payload ?? '').length / 2);
    req.write(payload?.slice(0, half));
    await received;

    const closed = closing.close();
    req.end(payload?.slice(half));
    const res = await answer;
    expect(res.status, res.body).toBe(201);
    expect(JSON.parse(res.body)).toMatchObject({ name: 'in flight', key: expect.stringMatching(/^mapi_/) });
    await closed;

    await expect(call(closing.url, ca, { host: 'default.mapi.test', key: adminKey })).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    // The store is closed too: its connections are gone, so nothing more can be written.
    await expect(closing.store.db.selectFrom('tenants').selectAll().execute()).rejects.toThrow();
  });
});

describe.each(DIALECTS)('npm start: main.ts (%s)', (dialect) => {
  let env: ServerEnv;
  beforeAll(async () => {
    env = await serverEnv(dialect);
  });
  afterAll(async () => env?.destroy());

  it('logs where it listens, serves, and exits 0 on SIGTERM after finishing', async () => {
    const child = spawnTs('packages/server/src/main.ts', [], { ...env.env, PORT: '0', LOG_LEVEL: 'info' });
    try {
      let stdout = '';
      const url = await new Promise<string>((resolve, reject) => {
        child.stdout?.setEncoding('utf8').on('data', (d: string) => {
          stdout += d;
          const line = stdout.split('\n').find((l) => l.includes('"mapi listening on '));
          if (line) resolve((JSON.parse(line) as { msg: string }).msg.replace('mapi listening on ', ''));
        });
        child.once('exit', (code) => reject(new Error(`main.ts exited (${code}) before listening:\n${stdout}`)));
      });
      expect(url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);

      // The generated admin key is printed once, before the log line.
      const ca = fs.readFileSync(path.join(env.dataDir, 'tls', 'localhost.crt'), 'utf8');
      const res = await call(url, ca, { key: keyIn(stdout) });
      expect(res.status).toBe(200);

      child.kill('SIGTERM');
      const [code, signal] = await exited(child);
      expect({ code, signal }).toEqual({ code: 0, signal: null });
      expect(stdout).toContain('SIGTERM received');
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });
});

describe('TLS material', () => {
  let dataDir: string;
  beforeAll(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mapi-tls-'));
  });
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it('servers starting together on a new DATA_DIR agree on one certificate and its key', async () => {
    const config = loadConfig({ DATA_DIR: path.join(dataDir, 'fresh') });
    const made = await Promise.all([loadTls(config), loadTls(config), loadTls(config)]);
    const onDisk = {
      cert: fs.readFileSync(path.join(dataDir, 'fresh', 'tls', 'localhost.crt'), 'utf8'),
      key: fs.readFileSync(path.join(dataDir, 'fresh', 'tls', 'localhost.key'), 'utf8'),
    };
    for (const tls of made) expect({ cert: tls.cert, key: tls.key }).toEqual(onDisk);
    const certificate = new X509Certificate(onDisk.cert);
    expect(certificate.checkPrivateKey(createPrivateKey(onDisk.key))).toBe(true);
    expect(certificate.checkHost('localhost')).toBe('localhost');
    expect(certificate.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(fs.readdirSync(path.join(dataDir, 'fresh', 'tls')).sort()).toEqual(['localhost.crt', 'localhost.key']);
  });

  it('the generated private key is 0600 in a 0700 directory, tightened again if loosened, in a path git ignores', async () => {
    const dir = path.join(dataDir, 'modes');
    const mode = (file: string) => fs.statSync(file).mode & 0o777;
    const tlsDir = path.join(dir, 'tls');
    const keyFile = path.join(tlsDir, 'localhost.key');
    await loadTls(loadConfig({ DATA_DIR: dir }));
    expect({ dataDir: mode(dir), tls: mode(tlsDir), key: mode(keyFile) }).toEqual({ dataDir: 0o700, tls: 0o700, key: 0o600 });

    fs.chmodSync(keyFile, 0o644);
    fs.chmodSync(tlsDir, 0o755);
    await loadTls(loadConfig({ DATA_DIR: dir }));
    expect({ tls: mode(tlsDir), key: mode(keyFile) }).toEqual({ tls: 0o700, key: 0o600 });

    // The default DATA_DIR, and key files a script writes beside the repository's files, stay out of commits.
    for (const file of ['data/tls/localhost.key', 'data/mapi.sqlite', 'script.key', 'packages/cli/some.key']) {
      expect(execFileSync('git', ['check-ignore', '--no-index', file], { cwd: REPO_ROOT, encoding: 'utf8' }).trim()).toBe(file);
    }
  });

  it('uses TLS_CERT and TLS_KEY when given, and names the variable when one cannot be read', async () => {
    const own = await loadTls(loadConfig({ DATA_DIR: path.join(dataDir, 'fresh') }));
    fs.writeFileSync(path.join(dataDir, 'own.crt'), own.cert);
    fs.writeFileSync(path.join(dataDir, 'own.key'), own.key);
    const given = await loadTls(
      loadConfig({ DATA_DIR: path.join(dataDir, 'other'), TLS_CERT: path.join(dataDir, 'own.crt'), TLS_KEY: path.join(dataDir, 'own.key') }),
    );
    expect(given).toMatchObject({ cert: own.cert, key: own.key, source: path.join(dataDir, 'own.crt') });
    expect(fs.existsSync(path.join(dataDir, 'other', 'tls'))).toBe(false);

    const missing = loadConfig({ TLS_CERT: path.join(dataDir, 'nope.crt'), TLS_KEY: path.join(dataDir, 'own.key') });
    await expect(loadTls(missing)).rejects.toThrow(/^TLS_CERT \(.*nope\.crt\) could not be read as a PEM file/);
    fs.writeFileSync(path.join(dataDir, 'plain.txt'), 'not a key');
    const notPem = loadConfig({ TLS_CERT: path.join(dataDir, 'own.crt'), TLS_KEY: path.join(dataDir, 'plain.txt') });
    await expect(loadTls(notPem)).rejects.toThrow(/^TLS_KEY .* could not be read as a PEM file/);
  });
});
