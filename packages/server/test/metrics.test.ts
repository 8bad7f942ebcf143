import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../src/areas/api-keys/key-format.js';
import { ConfigError, loadConfig } from '../src/config.js';
import { Metrics, type StatementCounter } from '../src/metrics/metrics.js';
import { startServer, type RunningServer } from '../src/server.js';
import { DIALECTS } from './harness.js';
import { serverEnv, type ServerEnv } from './server-env.js';

interface Answer {
  status: number;
  contentType: string;
  text: string;
}

function collect(resolve: (answer: Answer) => void, reject: (error: Error) => void) {
  return (res: http.IncomingMessage) => {
    let text = '';
    res.setEncoding('utf8');
    res.on('data', (d: string) => (text += d));
    res.once('error', reject);
    res.once('end', () => resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type'] ?? ''), text }));
  };
}

/** Plain HTTP, as Prometheus scrapes. */
function plain(url: string, method = 'GET'): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, agent: false }, collect(resolve, reject));
    req.once('error', reject);
    req.end();
  });
}

/** A sample's value in Prometheus text, or undefined when the series is absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const present = (match[2] ?? '').split(/,(?=[a-zA-Z_]+=")/).filter((l) => l !== '');
    if (wanted.every((w) => present.includes(w))) return Number(match[3]);
  }
  return undefined;
}

describe('configuration', () => {
  it('serves no metrics unless METRICS_PORT is set; METRICS_HOST defaults to the loopback address', () => {
    expect(loadConfig({}).metrics).toBeNull();
    expect(loadConfig({ METRICS_PORT: '9464' }).metrics).toEqual({ port: 9464, host: '127.0.0.1' });
    expect(loadConfig({ METRICS_PORT: '0', METRICS_HOST: '0.0.0.0' }).metrics).toEqual({ port: 0, host: '0.0.0.0' });
  });

  it('names a bad METRICS_PORT, a METRICS_HOST without a port, and the API port reused', () => {
    const problems = (env: Record<string, string>) => {
      try {
        loadConfig(env);
      } catch (error) {
        if (error instanceof ConfigError) return error.problems.join('\n');
        throw error;
      }
      return '';
    };
    expect(problems({ METRICS_PORT: '70000' })).toMatch(/METRICS_PORT must be an integer from 0 to 65535.*"70000"/);
    expect(problems({ METRICS_PORT: 'nine' })).toMatch(/METRICS_PORT must be/);
    expect(problems({ METRICS_HOST: '0.0.0.0' })).toMatch(/METRICS_HOST is set but METRICS_PORT is not/);
    expect(problems({ PORT: '8443', METRICS_PORT: '8443' })).toMatch(/METRICS_PORT must differ from PORT/);
    expect(problems({ PORT: '8443', METRICS_PORT: '8443', METRICS_HOST: '10.0.0.1' })).toBe('');
  });
});

describe('statements per request', () => {
  const statement = () => undefined as never;

  it("counts the statements run anywhere down a request's async chain, and none outside requests", async () => {
    const metrics = new Metrics({ defaultMetrics: false });
    const request: StatementCounter = { dbStatements: null };
    const response = new EventEmitter();
    metrics.queryLog(statement());
    await new Promise<void>((resolve) => {
      metrics.startRequest(request, response, () => {
        metrics.queryLog(statement());
        void Promise.resolve()
          .then(() => new Promise((r) => setTimeout(r, 1)))
          .then(() => {
            metrics.queryLog(statement());
            resolve();
          });
      });
    });
    expect(request.dbStatements).toBe(2);
    response.emit('close');
    metrics.queryLog(statement());
    expect(request.dbStatements).toBe(2);
  });

  it('tracks at most the budget of requests a second, the rest left out of the histogram', async () => {
    const metrics = new Metrics({ defaultMetrics: false, statementSamplesPerSecond: 2 });
    const requests: StatementCounter[] = [{ dbStatements: null }, { dbStatements: null }, { dbStatements: null }];
    const responses = requests.map(() => new EventEmitter());
    requests.forEach((request, i) => metrics.startRequest(request, responses[i] as EventEmitter, () => metrics.queryLog(statement())));
    expect(requests.map((r) => r.dbStatements)).toEqual([1, 1, null]);
    for (const [i, request] of requests.entries()) {
      metrics.observeRequest('GET', '/x', 200, 0.001, request.dbStatements);
      responses[i]?.emit('close');
    }
    const text = await metrics.registry.metrics();
    expect(sample(text, 'mapi_http_requests_total', { route: '/x' })).toBe(3);
    expect(sample(text, 'mapi_db_statements_per_request_count')).toBe(2);
    expect(sample(text, 'mapi_db_statements_per_request_sum')).toBe(2);
  });
});

describe.each(DIALECTS)('metrics endpoint (%s)', (dialect) => {
  let env: ServerEnv;
  let server: RunningServer;
  let ca: string;
  const key = generateApiKey();

  beforeAll(async () => {
    env = await serverEnv(dialect);
    server = await startServer(env.config({ METRICS_PORT: '0', ADMIN_API_KEY: key }), () => undefined);
    ca = fs.readFileSync(path.join(env.dataDir, 'tls', 'localhost.crt'), 'utf8');
  });

  afterAll(async () => {
    await server?.close();
    await env?.destroy();
  });

  /** `lateBody`: the body follows the headers after a pause, so the server reads it in a later event. */
  function api(pathname: string, options: { method?: string; body?: unknown; key?: string | null; lateBody?: boolean } = {}): Promise<Answer> {
    const payload = options.body === undefined ? '' : JSON.stringify(options.body);
    const credential = options.key === undefined ? key : options.key;
    const headers: Record<string, string> = {};
    if (credential !== null) headers.authorization = `Bearer ${credential}`;
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    return new Promise((resolve, reject) => {
      const req = https.request(
        new URL(pathname, server.url),
        { method: options.method ?? 'GET', ca, servername: 'localhost', agent: false, headers },
        collect(resolve, reject),
      );
      req.once('error', reject);
      if (!options.lateBody) {
        req.end(payload);
        return;
      }
      req.flushHeaders();
      setTimeout(() => req.end(payload), 50);
    });
  }

  const scrape = async () => {
    const answer = await plain(server.metricsUrl as string);
    expect(answer.status).toBe(200);
    return answer.text;
  };

  it('listens on a plain-HTTP port of its own, and says where', () => {
    expect(server.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    expect(new URL(server.metricsUrl as string).port).not.toBe(new URL(server.url).port);
  });

  it('counts requests per method, route template and status, with durations and statements', async () => {
    const before = await scrape();
    const requestsBefore = sample(before, 'mapi_db_statements_per_request_count') ?? 0;

    expect((await api('/api/v1/deployments')).status).toBe(200);
    expect((await api('/api/v1/deployments')).status).toBe(200);
    expect((await api('/api/v1/deployments/987654')).status).toBe(404);
    expect((await api('/api/v1/deployments', { key: null })).status).toBe(401);
    expect((await api('/no/such/path?x=1')).status).toBe(404);

    const answer = await plain(server.metricsUrl as string);
    expect(answer.contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = answer.text;
    const total = (labels: Record<string, string>) => sample(text, 'mapi_http_requests_total', labels);
    expect(total({ method: 'GET', route: '/api/v1/deployments', status: '200' })).toBe(2);
    expect(total({ method: 'GET', route: '/api/v1/deployments', status: '401' })).toBe(1);
    expect(total({ method: 'GET', route: '/api/v1/deployments/:deploymentId', status: '404' })).toBe(1);
    // A path no route matches is one fixed label, whatever the path was.
    expect(total({ method: 'GET', route: 'unmatched', status: '404' })).toBe(1);
    expect(text).not.toContain('/no/such/path');

    const ok = { method: 'GET', route: '/api/v1/deployments', status: '200' };
    const buckets = text
      .split('\n')
      .filter((l) => l.startsWith('mapi_http_request_duration_seconds_bucket{') && l.includes('route="/api/v1/deployments"') && l.includes('status="200"'));
    expect(buckets.length).toBeGreaterThan(5);
    expect(sample(text, 'mapi_http_request_duration_seconds_bucket', { ...ok, le: '+Inf' })).toBe(2);
    expect(sample(text, 'mapi_http_request_duration_seconds_count', ok)).toBe(2);
    expect(sample(text, 'mapi_http_request_duration_seconds_sum', ok)).toBeGreaterThan(0);

    // One observation per request answered; listing deployments reads the database.
    expect(text).toContain('# TYPE mapi_db_statements_per_request histogram');
    expect(sample(text, 'mapi_db_statements_per_request_count')).toBe(requestsBefore + 5);
    expect(sample(text, 'mapi_db_statements_per_request_sum')).toBeGreaterThan(0);
  });

  it("attributes a write's statements to its request, body and all, and times its wait for the deployment lock", async () => {
    const made = await api('/build/api/v1/deployments/', { method: 'POST', body: { name: 'metrics' } });
    expect(made.status).toBe(200);
    const deploymentId = (JSON.parse(made.text) as { id: number }).id;

    const before = await scrape();
    const created = await api(`/api/v1/deployments/${deploymentId}/folders`, { method: 'POST', body: { name: 'counted' }, lateBody: true });
    expect(created.status).toBe(201);
    const after = await scrape();

    const delta = (name: string) => (sample(after, name) ?? 0) - (sample(before, name) ?? 0);
    expect(delta('mapi_db_statements_per_request_count')).toBe(1);
    // The folder is written after the body is read (from a later packet, outside the context the
    // request started in), in a transaction of several statements.
    expect(delta('mapi_db_statements_per_request_sum')).toBeGreaterThanOrEqual(3);
    expect(delta('mapi_lock_wait_seconds_count')).toBe(1);
    expect(sample(after, 'mapi_lock_wait_seconds_bucket', { le: '+Inf' })).toBe(sample(after, 'mapi_lock_wait_seconds_count'));
    expect(sample(after, 'mapi_http_requests_total', { method: 'POST', route: '/api/v1/deployments/:deploymentId/folders', status: '201' })).toBe(1);
  });

  it('reports event-loop lag, process metrics and, on PostgreSQL, the connection pool', async () => {
    const text = await scrape();
    expect(sample(text, 'mapi_nodejs_eventloop_lag_seconds')).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'mapi_nodejs_eventloop_lag_p99_seconds')).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'mapi_process_resident_memory_bytes')).toBeGreaterThan(0);
    if (dialect === 'postgres') {
      expect(sample(text, 'mapi_db_pool_connections')).toBeGreaterThanOrEqual(1);
      expect(sample(text, 'mapi_db_pool_idle_connections')).toBeGreaterThanOrEqual(0);
      expect(sample(text, 'mapi_db_pool_waiting_clients')).toBe(0);
    } else {
      expect(text).not.toContain('mapi_db_pool_');
    }
  });

  it('answers 404 to anything but GET /metrics', async () => {
    const base = server.metricsUrl as string;
    expect((await plain(new URL('/', base).toString())).status).toBe(404);
    expect((await plain(new URL('/api/v1/deployments', base).toString())).status).toBe(404);
    expect((await plain(base, 'POST')).status).toBe(404);
    expect((await plain(`${base}?name[]=x`)).status).toBe(200);
  });

  it('is not served on the API port, with or without a key', async () => {
    for (const credential of [key, null]) {
      const answer = await api('/metrics', { key: credential });
      expect(answer.status).toBe(404);
      expect(answer.contentType).toMatch(/^application\/problem\+json/);
      expect(answer.text).not.toContain('mapi_');
    }
  });
});

describe('lifecycle', () => {
  // Two server starts (the first makes the TLS certificate): slow on a busy machine.
  it('refuses a METRICS_PORT in use by name, and closes the listener with the server', { timeout: 90_000 }, async () => {
    const env = await serverEnv('sqlite');
    try {
      const server = await startServer(env.config({ METRICS_PORT: '0' }), () => undefined);
      const url = server.metricsUrl as string;
      try {
        await expect(startServer(env.config({ METRICS_PORT: new URL(url).port }), () => undefined)).rejects.toThrow(/METRICS_PORT\) is already in use/);
        expect((await plain(url)).status).toBe(200);
      } finally {
        await server.close();
      }
      await expect(plain(url)).rejects.toThrow(/ECONNREFUSED/);
    } finally {
      await env.destroy();
    }
  });
});
