import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { AllowList, isPrivateAddress, Outbound, OutboundError } from '../src/outbound/index.js';
import { selfSignedLocalhost } from '../src/tls.js';

/** A plain HTTP server on loopback whose handler each test sets; it counts the requests it got. */
async function server(handler: http.RequestListener) {
  const hits: string[] = [];
  const srv = http.createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    handler(req, res);
  });
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as AddressInfo).port;
  return { port, hits, url: `http://127.0.0.1:${port}`, close: () => new Promise<void>((resolve) => srv.close(() => resolve())) };
}

async function failure(promise: Promise<unknown>): Promise<OutboundError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OutboundError);
  return error as OutboundError;
}

describe('the outbound SSRF guard', () => {
  let ok: Awaited<ReturnType<typeof server>>;
  const outbounds: Outbound[] = [];
  const make = (options: ConstructorParameters<typeof Outbound>[0] = {}) => {
    const outbound = new Outbound({ retryBaseMs: 1, ...options });
    outbounds.push(outbound);
    return outbound;
  };
  beforeAll(async () => {
    ok = await server((req, res) => {
      if (req.url?.startsWith('/redirect-private')) {
        res.writeHead(302, { location: `http://127.0.0.2:${ok.port}/landed` }).end();
      } else if (req.url?.startsWith('/redirect-same')) {
        res.writeHead(302, { location: '/landed' }).end();
      } else {
        res.writeHead(200, { 'content-type': 'text/plain' }).end('hello');
      }
    });
  });
  afterAll(async () => {
    await Promise.all(outbounds.map((o) => o.close()));
    await ok.close();
  });

  it('classifies loopback, private, link-local, metadata and IPv4-in-IPv6 addresses as private, public ones not', () => {
    for (const a of [
      '127.0.0.1',
      '127.9.9.9',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      '::',
      'fe80::1',
      'fd00:ec2::254',
      'fc00::1',
      '::ffff:127.0.0.1',
      '::ffff:a00:1',
      '64:ff9b::a00:1',
      '224.0.0.1',
      'not-an-ip',
    ]) {
      expect(isPrivateAddress(a), a).toBe(true);
    }
    for (const a of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']) expect(isPrivateAddress(a), a).toBe(false);
  });

  it('refuses a loopback address by default, before connecting', async () => {
    const error = await failure(make().request(`${ok.url}/x`));
    expect(error.kind).toBe('refused');
    expect(ok.hits).toEqual([]);
  });

  it('refuses a host name that resolves to a private address, checking the address the socket connects to', async () => {
    expect((await failure(make().request(`http://localhost:${ok.port}/x`))).kind).toBe('refused');
    expect(ok.hits).toEqual([]);
  });

  it('refuses the cloud metadata address and a private address written as IPv4-mapped IPv6', async () => {
    expect((await failure(make().request('http://169.254.169.254/latest/meta-data/'))).kind).toBe('refused');
    expect((await failure(make().request(`http://[::ffff:127.0.0.1]:${ok.port}/x`))).kind).toBe('refused');
    expect(ok.hits).toEqual([]);
  });

  it('calls a private address the configuration allows, by range or by host name', async () => {
    const byRange = await make({ allowPrivate: ['127.0.0.1/32'] }).request(`${ok.url}/a`);
    expect(byRange).toMatchObject({ status: 200, body: 'hello' });
    const byName = await make({ allowPrivate: ['localhost'] }).request(`http://localhost:${ok.port}/b`);
    expect(byName.status).toBe(200);
  });

  it('answers a redirect as it is unless asked to follow; a followed redirect to a private address not allowed is refused', async () => {
    const outbound = make({ allowPrivate: ['127.0.0.1'] });
    expect((await outbound.request(`${ok.url}/redirect-private`)).status).toBe(302);
    expect((await outbound.request(`${ok.url}/redirect-same`, { maxRedirects: 2 })).status).toBe(200);
    const before = ok.hits.length;
    expect((await failure(outbound.request(`${ok.url}/redirect-private`, { maxRedirects: 2 }))).kind).toBe('refused');
    expect(ok.hits.slice(before)).toEqual(['GET /redirect-private']);
  });

  it('rejects allow-list entries that are neither ranges nor host names', () => {
    expect(AllowList.problemOf('10.0.0.0/8')).toBeNull();
    expect(AllowList.problemOf('fd00::/8')).toBeNull();
    expect(AllowList.problemOf('idp.corp.internal')).toBeNull();
    expect(AllowList.problemOf('10.0.0.0/33')).toMatch(/prefix/);
    expect(AllowList.problemOf('http://x')).toMatch(/neither/);
  });
});

describe('outbound timeouts, retries and logs', () => {
  const outbounds: Outbound[] = [];
  const make = (options: ConstructorParameters<typeof Outbound>[0] = {}) => {
    const outbound = new Outbound({ allowPrivate: ['127.0.0.1/32'], retryBaseMs: 1, ...options });
    outbounds.push(outbound);
    return outbound;
  };
  afterAll(async () => Promise.all(outbounds.map((o) => o.close())));

  it('gives up on a server that never answers after the timeout', async () => {
    const silent = await server(() => undefined);
    const error = await failure(make({ timeoutMs: 200, retries: 0 }).request(`${silent.url}/slow`));
    expect(error.kind).toBe('timeout');
    silent.close().catch(() => undefined);
  });

  it('retries an idempotent call after 503, never a POST', async () => {
    let calls = 0;
    const flaky = await server((_req, res) => {
      calls += 1;
      if (calls % 2 === 1) res.writeHead(503).end();
      else res.writeHead(200).end('ok');
    });
    const outbound = make();
    expect((await outbound.request(`${flaky.url}/get`)).status).toBe(200);
    expect(flaky.hits).toEqual(['GET /get', 'GET /get']);
    expect((await outbound.request(`${flaky.url}/post`, { method: 'POST', body: 'x' })).status).toBe(503);
    expect(flaky.hits.slice(2)).toEqual(['POST /post']);
    // A revocation is a POST that may be repeated: the caller says so.
    expect((await outbound.request(`${flaky.url}/revoke`, { method: 'POST', body: 'x', idempotent: true })).status).toBe(200);
    await flaky.close();
  });

  it('logs the origin and path of each call, never its query, headers or body', async () => {
    const lines: string[] = [];
    const log = {
      debug: (f: object, m: string) => void lines.push(JSON.stringify({ ...f, m })),
      warn: (f: object, m: string) => void lines.push(JSON.stringify({ ...f, m })),
    };
    const echo = await server((_req, res) => res.writeHead(200).end('sensitive-answer'));
    const outbound = make({ log });
    await outbound.request(`${echo.url}/token?code=secret-code-1`, {
      method: 'POST',
      headers: { authorization: 'Basic secret-header-2' },
      body: 'client_secret=secret-body-3',
    });
    await failure(new Outbound({ log }).request(`${echo.url}/x?code=secret-code-4`));
    const text = lines.join('\n');
    expect(text).toContain(`${echo.url}/token`);
    for (const secret of ['secret-code-1', 'secret-header-2', 'secret-body-3', 'sensitive-answer', 'secret-code-4']) expect(text).not.toContain(secret);
    await echo.close();
  });
});

describe('outbound configuration', () => {
  it('OUTBOUND_ALLOW_PRIVATE is off by default, takes ranges and host names, and names a bad entry', () => {
    expect(loadConfig({}).outbound).toEqual({ allowPrivate: [], timeoutMs: 10_000 });
    expect(loadConfig({ OUTBOUND_ALLOW_PRIVATE: '10.0.0.0/8, idp.corp.internal,127.0.0.1', OUTBOUND_TIMEOUT_MS: '2500' }).outbound).toEqual({
      allowPrivate: ['10.0.0.0/8', 'idp.corp.internal', '127.0.0.1'],
      timeoutMs: 2500,
    });
    expect(() => loadConfig({ OUTBOUND_ALLOW_PRIVATE: '10.0.0.0/99' })).toThrow(ConfigError);
    expect(() => loadConfig({ OUTBOUND_ALLOW_PRIVATE: 'https://idp' })).toThrow(/OUTBOUND_ALLOW_PRIVATE: "https:\/\/idp" is neither/);
  });
});

describe('outbound trust and pinning', () => {
  it('OUTBOUND_CA_FILE: a host with a private CA is trusted when its certificate is in the file, and not otherwise', async () => {
    const { key, cert } = await selfSignedLocalhost();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mapi-outbound-ca-'));
    const caFile = path.join(dir, 'ca.pem');
    fs.writeFileSync(caFile, cert);
    const srv = https.createServer({ key, cert }, (_req, res) => res.end('private CA'));
    await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
    const url = `https://127.0.0.1:${(srv.address() as AddressInfo).port}/`;
    const trusting = new Outbound({ allowPrivate: ['127.0.0.1'], caFile, retries: 0 });
    const plain = new Outbound({ allowPrivate: ['127.0.0.1'], retries: 0 });
    try {
      expect((await trusting.request(url)).body).toBe('private CA');
      expect(trusting.trustedCertificates).toContain(cert.trim());
      expect((await failure(plain.request(url))).kind).toBe('network');
      expect(plain.trustedCertificates).toBeNull();
      expect(loadConfig({ OUTBOUND_CA_FILE: caFile }).outbound).toEqual({ allowPrivate: [], timeoutMs: 10_000, caFile });
      fs.writeFileSync(path.join(dir, 'not-pem.txt'), 'hello');
      expect(() => loadConfig({ OUTBOUND_CA_FILE: path.join(dir, 'not-pem.txt') })).toThrow(/OUTBOUND_CA_FILE .* must be a readable PEM file/);
    } finally {
      await trusting.close();
      await plain.close();
      await new Promise<void>((resolve) => srv.close(() => resolve()));
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('pinnedAddress: the address another client must connect to, checked by the guard as a call would be', async () => {
    const guarded = new Outbound();
    const allowing = new Outbound({ allowPrivate: ['127.0.0.1'] });
    try {
      expect((await failure(guarded.pinnedAddress(new URL('https://127.0.0.1/x.git')))).kind).toBe('refused');
      expect((await failure(guarded.pinnedAddress(new URL('https://localhost/x.git')))).kind).toBe('refused');
      expect((await failure(guarded.pinnedAddress(new URL('https://[::ffff:169.254.169.254]/x.git')))).kind).toBe('refused');
      expect(await allowing.pinnedAddress(new URL('https://127.0.0.1:8443/x.git'))).toBe('127.0.0.1');
      expect((await failure(guarded.pinnedAddress(new URL('https://no-such-host.invalid/x.git')))).kind).toBe('network');
    } finally {
      await guarded.close();
      await allowing.close();
    }
  });
});
