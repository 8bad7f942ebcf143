/**
 * The runtime: the program each environment of a deployment runs, as a child process of the
 * server process that owns it (runtime/process-driver.ts). It serves the data API of one build
 * (`GET /v1/meta`, queries by `/v1/load` and `POST /v1/sql`) on a loopback port, behind the
 * server's proxy, and answers the owner's health checks: `/healthz` while the process is
 * responsive, `/readyz` while its data source answers too.
 *
 * It exits when its server goes away (the IPC channel closes), so a server killed with kill -9
 * leaves no runtime behind. Everything it prints is its log.
 */
import { timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { ModelArtifact } from '../areas/data-model/validator/artifact.js';
import { openDataSource, type DataSource } from './data-source.js';
import { metaOf } from './meta.js';
import { QueryError } from './query/errors.js';
import { QueryEngine } from './query/load.js';
import { PRIVATE_META_HEADER, SECRET_HEADER, SECURITY_HEADER, type ListeningMessage, type StartMessage } from './protocol.js';
import { NOBODY, type SecurityContext } from './query/access.js';

process.on('disconnect', () => process.exit(0));
if (!process.send) {
  console.error('The runtime is started by a server process, over an IPC channel.');
  process.exit(2);
}

process.once('message', (message: StartMessage) => {
  start(message).catch((error: Error) => {
    console.error(`Runtime failed to start: ${error.message}`);
    process.exit(1);
  });
});

function send(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function authorised(req: http.IncomingMessage, secret: Buffer): boolean {
  const given = req.headers[SECRET_HEADER];
  if (typeof given !== 'string') return false;
  const bytes = Buffer.from(given);
  return bytes.length === secret.length && timingSafeEqual(bytes, secret);
}

class BodyError extends Error {}

/** The caller's context as the proxy sends it; none (no groups, no attributes) when it is missing or unreadable. */
function securityOf(req: http.IncomingMessage): SecurityContext {
  const header = req.headers[SECURITY_HEADER];
  if (typeof header !== 'string') return NOBODY;
  try {
    const value = JSON.parse(Buffer.from(header, 'base64url').toString('utf8')) as SecurityContext;
    return { userId: value.userId ?? null, groups: Array.isArray(value.groups) ? value.groups : [], userAttributes: value.userAttributes ?? {}, securityContext: value.securityContext ?? {} };
  } catch {
    return NOBODY;
  }
}
const MAX_BODY = 1024 * 1024;

/** The query of a `/v1/load` request (`/v1/sql`: the SQL text): `?query=<JSON>` on GET, `{query}` (or the query itself) as the POST body. */
async function queryOf(req: http.IncomingMessage): Promise<unknown> {
  if (req.method === 'GET') {
    const text = new URL(req.url ?? '/', 'http://runtime').searchParams.get('query');
    if (text === null) throw new BodyError('GET /v1/load needs ?query= with the query as JSON.');
    return parse(text);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY) throw new BodyError('The query is larger than 1 MiB.');
    chunks.push(chunk);
  }
  const body = parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown> | null;
  return body !== null && typeof body === 'object' && 'query' in body ? body.query : body;
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new BodyError('The query is not valid JSON.');
  }
}

async function start(message: StartMessage): Promise<void> {
  const artifact = JSON.parse(message.artifact) as ModelArtifact;
  const secret = Buffer.from(message.secret);
  console.log(
    `Runtime ${message.version} starting pod ${message.pod}: build ${message.build.id} of ${message.build.branch} at ${message.build.commit.slice(0, 12)}, ` +
      `${artifact.cubes.length} cube${artifact.cubes.length === 1 ? '' : 's'} and ${artifact.views.length} view${artifact.views.length === 1 ? '' : 's'}`,
  );
  const dataSource: DataSource = openDataSource(process.env, message.dataSourcesDir, message.queries.timeoutMs);
  console.log(`Data source: ${dataSource.describe}`);
  const { maxRows, maxResultBytes, cacheTtlMs } = message.queries;
  const engine = new QueryEngine(artifact, dataSource, { defaultLimit: Math.min(10_000, maxRows), maxLimit: maxRows, maxResultBytes, cacheTtlMs });
  let readyOnce = false;

  const server = http.createServer((req, res) => {
    const started = performance.now();
    if (!authorised(req, secret)) return send(res, 401, { error: 'Call the data API through the deployment URL.' });
    const path = (req.url ?? '/').split('?')[0];
    const done = (status: number, body: unknown, quiet = false) => {
      send(res, status, body);
      if (!quiet) console.log(`${req.method} ${path} ${status} ${Math.round(performance.now() - started)} ms`);
    };
    if (path === '/healthz') return done(200, { status: 'ok' }, true);
    if (path === '/readyz') {
      dataSource.check().then(
        () => {
          if (!readyOnce) console.log('Ready: the data source answers');
          readyOnce = true;
          done(200, { status: 'ready' }, true);
        },
        (error: Error) => {
          console.error(`Not ready: the data source does not answer: ${error.message}`);
          done(503, { error: `The data source does not answer: ${error.message}` }, true);
        },
      );
      return;
    }
    const security = securityOf(req);
    if (req.method === 'GET' && path === '/v1/meta') return done(200, metaOf(artifact, req.headers[PRIVATE_META_HEADER] === '1', security));
    const answer = (work: Promise<unknown>) =>
      void work.then(
        (result) => done(200, result),
        (error: Error) => {
          if (error instanceof QueryError) return done(error.status, { error: error.message });
          if (error instanceof BodyError) return done(400, { error: error.message });
          // The data source refused the compiled statement (a table the model names is missing, a timeout).
          done(400, { error: `The data source refused the query: ${error.message}` });
        },
      );
    if (path === '/v1/load' && (req.method === 'GET' || req.method === 'POST')) return answer(queryOf(req).then((query) => engine.load(query, security)));
    // `{query: "<SQL>"}`: one SELECT over a cube or a view, translated into a query like the above (query/sql-api.ts).
    if (path === '/v1/sql' && req.method === 'POST') return answer(queryOf(req).then((sql) => engine.sql(sql, security)));
    return done(404, { error: `${req.method} ${path} is not part of this runtime's data API.` });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, message.host, () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('The runtime has no TCP address');
  console.log(`Listening on ${message.host}:${address.port}`);
  process.send?.({ type: 'listening', port: address.port } satisfies ListeningMessage);

  process.on('SIGTERM', () => {
    console.log('Stopping (SIGTERM)');
    server.close();
    void dataSource.close().finally(() => process.exit(0));
  });
}
