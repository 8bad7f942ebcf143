import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { TLSSocket } from 'node:tls';
import { PassThrough, type Readable } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError, PROBLEMS, problemType, type ProblemCode } from '../shared/problems.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * How long this route waits for a request body after its headers (ms), instead of the
     * server's BODY_TIMEOUT_MS: upload routes declare a longer one, `config: { bodyTimeoutMs: 600_000 }`.
     */
    bodyTimeoutMs?: number;
  }
}

/** How long a client may take to send a request, and to keep an idle connection. */
export interface Timeouts {
  /** The TLS handshake and the whole header block must arrive within this (ms). */
  headersMs: number;
  /** The body must arrive within this after the headers (ms), unless the route declares its own. */
  bodyMs: number;
  /** An idle keep-alive connection is closed after this (ms). */
  keepAliveMs: number;
  /**
   * On close (SIGTERM), how long requests in flight may go on before every connection still open
   * is closed (ms): a client trickling a request in, or a handler still waiting, cannot hold a
   * stop past it.
   */
  drainMs: number;
}

export const DEFAULT_TIMEOUTS: Timeouts = { headersMs: 10_000, bodyMs: 30_000, keepAliveMs: 72_000, drainMs: 10_000 };

/** What Fastify is told at construction; the rest is set on the server by `installTimeouts`. */
export function fastifyTimeoutOptions(timeouts: Timeouts) {
  return {
    keepAliveTimeout: timeouts.keepAliveMs,
    // Node's own whole-request limit is only a backstop (see installTimeouts); the body timer decides.
    requestTimeout: timeouts.headersMs + timeouts.bodyMs,
    clientErrorHandler: answerClientError,
  };
}

/**
 * Headers are timed by Node (`headersTimeout`, checked every `connectionsCheckingInterval`), the
 * body by a timer per request that knows the route, so an upload route can wait longer than the
 * rest. Node's whole-request limit stays as a backstop above the longest route's.
 */
export function installTimeouts(app: FastifyInstance, timeouts: Timeouts): void {
  let longestBodyMs = timeouts.bodyMs;
  app.addHook('onRoute', (route) => {
    longestBodyMs = Math.max(longestBodyMs, route.config?.bodyTimeoutMs ?? 0);
  });
  app.server.headersTimeout = timeouts.headersMs;
  // Node checks its header timeout this often (30 s by default, which would let a slow client
  // hold a connection for up to headersTimeout + 30 s).
  // (Read when the server starts listening; Node's types leave the property out.)
  (app.server as { connectionsCheckingInterval?: number }).connectionsCheckingInterval = Math.min(1_000, Math.max(100, Math.floor(timeouts.headersMs / 4)));
  app.addHook('onReady', async () => {
    app.server.requestTimeout = timeouts.headersMs + longestBodyMs;
  });
  // Closing waits for requests in flight, and Node counts a request still arriving (a slow body,
  // slow headers) as one: without a bound, such clients would hold a stop for up to the body
  // timeout. After the drain, whatever is still open is closed.
  app.addHook('preClose', async () => {
    const drain = setTimeout(() => app.server.closeAllConnections(), timeouts.drainMs);
    drain.unref();
    app.server.once('close', () => clearTimeout(drain));
  });

  app.addHook('preParsing', async (request, reply, payload) => {
    // A body that has already arrived whole (most JSON bodies come in the headers' packet) has nothing left to time.
    if (!hasBody(request.raw) || request.raw.complete) return payload;
    return timedBody(request, reply.raw, payload, request.routeOptions.config?.bodyTimeoutMs ?? timeouts.bodyMs);
  });
}

/** Fastify reads no body for GET and HEAD, so there is none to time. */
function hasBody(raw: IncomingMessage): boolean {
  if (raw.method === 'GET' || raw.method === 'HEAD') return false;
  return raw.headers['transfer-encoding'] !== undefined || Number(raw.headers['content-length'] ?? 0) > 0;
}

/**
 * The body as Fastify's parsers read it, failing with 408 once `ms` have passed. The error goes
 * through the parser, so the client gets problem details and Fastify closes the connection after
 * them (it does so for every body error, as the rest of the body may still be on its way).
 */
function timedBody(request: FastifyRequest, response: ServerResponse, raw: Readable, ms: number): Readable {
  const body = new PassThrough() as PassThrough & { receivedEncodedLength: number };
  body.receivedEncodedLength = 0;
  raw.on('data', (chunk: Buffer) => {
    body.receivedEncodedLength += chunk.length;
  });
  raw.pipe(body);
  raw.once('error', (error) => body.destroy(error));
  // A client that goes away mid-body: the parser must hear of it, as it would reading `raw`.
  raw.once('close', () => {
    if (!request.raw.complete)
      body.destroy(Object.assign(new Error('The client closed the connection before sending the whole body.'), { code: 'ECONNRESET' }));
  });
  const timer = setTimeout(() => {
    raw.unpipe(body);
    body.destroy(new ApiError('REQUEST_TIMEOUT', `The request body did not arrive within ${seconds(ms)}; the connection is closed.`));
  }, ms);
  body.once('end', () => clearTimeout(timer));
  body.once('close', () => clearTimeout(timer));
  // Answered without reading the body (a 415, say): discard the rest as Node would, so a
  // keep-alive connection can carry its next request.
  response.once('finish', () => {
    clearTimeout(timer);
    if (request.raw.complete) return;
    raw.unpipe(body);
    raw.resume();
  });
  return body;
}

const seconds = (ms: number) => (ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`);

/**
 * Errors Node raises before a request reaches Fastify (headers too slow, too large, unparsable):
 * the same problem details as every other error, then the connection closes.
 */
function answerClientError(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  // A TLS connection whose handshake never finished (silent, or a partial ClientHello, past the
  // handshake timeout; or a failed handshake) has no channel to answer on: a write to it never
  // flushes, so end()'s callback would never destroy it and its descriptor would leak in CLOSE-WAIT
  // once the client went away. It is destroyed at once, unanswered.
  if (handshakeUnfinished(socket)) {
    socket.destroy();
    return;
  }
  const [code, detail]: [ProblemCode, string] =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? ['REQUEST_TIMEOUT', 'The request headers did not arrive in time; the connection is closed.']
      : error.code === 'HPE_HEADER_OVERFLOW'
        ? ['HEADERS_TOO_LARGE', 'The request headers are too large.']
        : ['VALIDATION_FAILED', 'The request is not valid HTTP.'];
  const { status, title } = PROBLEMS[code];
  const problem = JSON.stringify({ type: problemType(code), title, status, detail, code, message: detail });
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  // end() flushes the answer first; the client may still be sending, so the socket is then destroyed.
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\nContent-Type: application/problem+json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(problem)}\r\nConnection: close\r\n\r\n${problem}`,
    () => socket.destroy(),
  );
}

/** A TLS socket that has not completed its handshake (Node sets `_secureEstablished` once it has). */
function handshakeUnfinished(socket: Socket): boolean {
  return socket instanceof TLSSocket && (socket as TLSSocket & { _secureEstablished?: boolean })._secureEstablished !== true;
}
