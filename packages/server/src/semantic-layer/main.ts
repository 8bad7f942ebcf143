/**
 * The runtime: the program each environment of a deployment runs, as a child process of the
 * server process that owns it (runtime/process-driver.ts). It serves the data API of one build
 * (Cube's REST protocol, rest-api.ts) on a loopback port, behind the
 * server's proxy, and answers the owner's health checks: `/healthz` while the process is
 * responsive, `/readyz` while its data source answers too.
 *
 * It exits when its server goes away (the IPC channel closes), so a server killed with kill -9
 * leaves no runtime behind. Everything it prints is its log.
 */
import http from 'node:http';
import type { ModelArtifact } from '../model/artifact.js';
import { sameSecret } from '../shared/tokens.js';
import { openDataSource, type DataSource, type OwnClusterRefused } from './data-source.js';
import { QueryEngine } from './query/load.js';
import { BodyError, parseJson, restApi } from './rest-api.js';
import { statementWatchdog } from './statement-watchdog.js';
import {
  PRIVATE_META_HEADER,
  SECRET_HEADER,
  SECURITY_HEADER,
  type ListeningMessage,
  type RequestMessage,
  type ResponseMessage,
  type StartMessage,
} from './protocol.js';
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

/** An answer already serialised (rest-api.ts), sent as it is. */
class JsonText {
  constructor(readonly text: string) {}
}

function send(res: http.ServerResponse, status: number, body: unknown): void {
  const text = body instanceof JsonText ? body.text : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function authorised(req: http.IncomingMessage, secret: Buffer): boolean {
  const given = req.headers[SECRET_HEADER];
  if (typeof given !== 'string') return false;
  return sameSecret(Buffer.from(given), secret);
}

/** A context as sent, with its parts defaulted: none (no groups, no attributes) for what is missing. */
function contextOf(value: Partial<SecurityContext> | null | undefined): SecurityContext {
  if (value === null || typeof value !== 'object') return NOBODY;
  return {
    userId: value.userId ?? null,
    groups: Array.isArray(value.groups) ? value.groups : [],
    userAttributes: value.userAttributes ?? {},
    securityContext: value.securityContext ?? {},
  };
}

/** The caller's context as the proxy sends it; none (no groups, no attributes) when it is missing or unreadable. */
function securityOf(req: http.IncomingMessage): SecurityContext {
  const header = req.headers[SECURITY_HEADER];
  if (typeof header !== 'string') return NOBODY;
  try {
    return contextOf(JSON.parse(Buffer.from(header, 'base64url').toString('utf8')) as SecurityContext);
  } catch {
    return NOBODY;
  }
}
const MAX_BODY = 1024 * 1024;

/** A POST's body as JSON, at most 1 MiB. */
async function bodyOf(req: http.IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY) throw new BodyError('The query is larger than 1 MiB.');
    chunks.push(chunk);
  }
  return parseJson(Buffer.concat(chunks).toString('utf8'), 'The body');
}

async function start(message: StartMessage): Promise<void> {
  const artifact = JSON.parse(message.artifact) as ModelArtifact;
  const secret = Buffer.from(message.secret);
  console.log(
    `Runtime ${message.version} starting pod ${message.pod}: build ${message.build.id} of ${message.build.branch} at ${message.build.commit.slice(0, 12)}, ` +
      `${artifact.cubes.length} cube${artifact.cubes.length === 1 ? '' : 's'} and ${artifact.views.length} view${artifact.views.length === 1 ? '' : 's'}`,
  );
  // SQLite statements (the sample dataset's too) are timed by a watchdog thread; PostgreSQL times its own.
  const watchdog = process.env.DB_TYPE === 'postgres' ? undefined : statementWatchdog(message.queries.timeoutMs);
  // A data source found to be the server's own PostgreSQL cluster ends the runtime: its pod shows
  // the reason and restarts with back-off until DB_URL changes.
  const refused = (error: OwnClusterRefused) => {
    console.error(`Runtime refused its data source: ${error.message}`);
    process.exit(1);
  };
  // Absent from a start message (an older server): no own cluster to compare with, no sockets.
  const guard = { ownCluster: message.ownCluster ?? null, allowSockets: message.allowSocketSources === true, refused };
  const dataSource: DataSource = openDataSource(process.env, message.dataSourcesDir, message.queries.timeoutMs, watchdog, guard);
  console.log(`Data source: ${dataSource.describe}`);
  // Compared before the runtime listens. A source that does not answer yet is compared when it first
  // does: until then it is not ready and runs no query (data-source.ts).
  await dataSource.verify?.().catch((error: Error) => console.error(`Data source not checked yet, so no query runs: ${error.message}`));
  const { maxRows, maxResultBytes, cacheTtlMs } = message.queries;
  const engine = new QueryEngine(
    artifact,
    dataSource,
    { defaultLimit: Math.min(10_000, maxRows), maxLimit: maxRows, maxResultBytes, cacheTtlMs },
    Date.now,
    (line) => console.log(line),
  );
  // Cube's scheduled refresh: every pre-aggregation built in UTC from the start, in the background.
  engine.preAggregations.scheduleAll();
  let readyOnce = false;

  const handle = restApi(artifact, engine, {
    continueWaitMs: message.queries.continueWaitMs ?? 5_000,
    dbType: dataSource.dialect.name,
    maxResultBytes,
    timeoutMs: message.queries.timeoutMs,
  });
  const logLine = (method: string, path: string, status: number, started: number) =>
    `${method} ${path} ${status} ${Math.round(performance.now() - started)} ms`;
  const logged = (method: string, path: string, status: number, started: number) => console.log(logLine(method, path, status, started));

  const server = http.createServer((req, res) => {
    const started = performance.now();
    if (!authorised(req, secret)) return send(res, 401, { error: 'Call the data API through the deployment URL.' });
    const url = req.url ?? '/';
    const at = url.indexOf('?');
    const path = at === -1 ? url : url.slice(0, at);
    const quiet = (status: number, body: unknown) => send(res, status, body);
    if (path === '/healthz') return quiet(200, { status: 'ok' });
    if (path === '/readyz') {
      dataSource.check().then(
        () => {
          if (!readyOnce) console.log('Ready: the data source answers');
          readyOnce = true;
          quiet(200, { status: 'ready' });
        },
        (error: Error) => {
          console.error(`Not ready: the data source does not answer: ${error.message}`);
          quiet(503, { error: `The data source does not answer: ${error.message}` });
        },
      );
      return;
    }
    const method = req.method ?? 'GET';
    const request = {
      method,
      path,
      search: at === -1 ? '' : url.slice(at + 1),
      privateMeta: req.headers[PRIVATE_META_HEADER] === '1',
      security: securityOf(req),
      body: () => bodyOf(req),
    };
    void handle(request).then(({ status, text }) => {
      send(res, status, new JsonText(text));
      logged(method, path, status, started);
    });
  });

  // The same requests from the server process that started this runtime, over the IPC channel (protocol.ts).
  process.on('message', (message: RequestMessage) => {
    if (message?.type !== 'request') return;
    const started = performance.now();
    const { id, method, path } = message;
    void handle({
      method,
      path,
      search: message.search ?? '',
      privateMeta: message.privateMeta === true,
      security: contextOf(message.security),
      body: async () => message.body,
    }).then(({ status, text }) => {
      // The log line goes with the answer; the server logs it as if printed (protocol.ts).
      process.send?.({ type: 'response', id, status, body: text, log: logLine(method, path, status, started) } satisfies ResponseMessage);
    });
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
