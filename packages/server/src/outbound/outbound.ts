import dns from 'node:dns';
import fs from 'node:fs';
import net from 'node:net';
import tls from 'node:tls';
import { setTimeout as delay } from 'node:timers/promises';
import { Agent, fetch as undiciFetch, request as undiciRequest } from 'undici';
import { AllowList, mayConnect } from './address-guard.js';

export interface OutboundOptions {
  /** Private ranges and host names the server may still reach (OUTBOUND_ALLOW_PRIVATE). */
  allowPrivate?: readonly string[];
  /** A PEM file of certificate authorities trusted besides the usual ones (OUTBOUND_CA_FILE): hosts with a private CA. */
  caFile?: string;
  /** The longest one attempt may take, connection to last byte (OUTBOUND_TIMEOUT_MS; default 10 s). */
  timeoutMs?: number;
  /** Extra attempts of an idempotent call after a network failure, a timeout, 429 or 502-504 (default 2). */
  retries?: number;
  /** The first wait between attempts (ms; doubles each time, with jitter; default 250). */
  retryBaseMs?: number;
  /** The largest response body read (bytes; default 1 MiB). */
  maxResponseBytes?: number;
  /** Where each call is recorded (method, origin and path, status, time): never a query string, header or body. */
  log?: OutboundLog;
}

export interface OutboundLog {
  debug(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
}

export interface OutboundRequest {
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'HEAD';
  headers?: Record<string, string>;
  body?: string;
  /**
   * Whether repeating the call is harmless (GET, HEAD, PUT, DELETE are; a POST is only when the
   * caller says so, e.g. a token revocation). Only such calls are retried.
   */
  idempotent?: boolean;
  /** Redirects to follow (GET and HEAD only; each hop passes the same guard). Default 0: a 3xx is answered as it is. */
  maxRedirects?: number;
}

export interface OutboundResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The URL that answered (after redirects), without its query string. */
  url: string;
}

export type OutboundFailure = 'refused' | 'timeout' | 'network' | 'too-large' | 'bad-url';

/** A call that got no usable answer; its message names the origin and path, never a query, header or body. */
export class OutboundError extends Error {
  constructor(
    readonly kind: OutboundFailure,
    message: string,
  ) {
    super(message);
    this.name = 'OutboundError';
  }
}

const RETRIED_STATUS = new Set([429, 502, 503, 504]);
const IDEMPOTENT_METHODS = new Set(['GET', 'HEAD', 'PUT', 'DELETE']);

/** `https://host/path`: what logs and errors may show of a URL (queries carry codes and tokens). */
export function describeUrl(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}`;
}

/** A private address the guard refused; raised inside the connection so DNS answers are checked as used. */
class RefusedAddress extends Error {
  readonly code = 'EOUTBOUNDREFUSED';
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

/**
 * Every HTTP call the server makes to others: OAuth providers now, git hosts, mail and webhooks
 * later. Its guard runs where the connection is made: the host name is resolved once, by the
 * lookup the socket then connects with, and every address it resolved to is checked, so a
 * name that resolves to a public address when validated and a private one when used (DNS
 * rebinding) cannot get through. IP literals, which sockets never look up, are checked before.
 */
export class Outbound {
  private readonly allow: AllowList;
  private readonly agent: Agent;
  private readonly retries: number;
  private readonly retryBaseMs: number;
  private readonly maxResponseBytes: number;
  private readonly log: OutboundLog | undefined;
  /** Every authority this server trusts for outbound TLS, as PEM; null: Node's own list, unchanged. */
  readonly trustedCertificates: string | null;
  /** The longest one attempt may take (for clients of others that honour the same limit, such as git). */
  readonly timeoutMs: number;

  constructor(options: OutboundOptions = {}) {
    this.allow = new AllowList(options.allowPrivate ?? []);
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.trustedCertificates = options.caFile === undefined ? null : [...tls.rootCertificates, fs.readFileSync(options.caFile, 'utf8')].join('\n');
    this.retries = options.retries ?? 2;
    this.retryBaseMs = options.retryBaseMs ?? 250;
    this.maxResponseBytes = options.maxResponseBytes ?? 1_048_576;
    this.log = options.log;
    const allow = this.allow;
    const lookup = (hostname: string, opts: dns.LookupOptions, callback: LookupCallback): void => {
      dns.lookup(hostname, { ...opts, all: true }, (error, addresses) => {
        if (error) return callback(error, []);
        const refused = addresses.find((a) => !mayConnect(allow, hostname, a.address));
        if (refused !== undefined) {
          return callback(
            new RefusedAddress(`${hostname} resolves to ${refused.address}, a private address this server does not call (OUTBOUND_ALLOW_PRIVATE allows one)`),
            [],
          );
        }
        if (opts.all) return callback(null, addresses);
        const first = addresses[0];
        if (first === undefined) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), []);
        callback(null, first.address, first.family);
      });
    };
    this.agent = new Agent({
      connect: { lookup: lookup as never, timeout: this.timeoutMs, ...(this.trustedCertificates === null ? {} : { ca: this.trustedCertificates }) },
      headersTimeout: this.timeoutMs,
      bodyTimeout: this.timeoutMs,
      // A provider's keep-alive connection is reused for a short while only.
      keepAliveTimeout: 4_000,
    });
  }

  /**
   * The address a client other than this one (git) must connect to for `url`, checked by the
   * guard as a call would be: the host name is resolved once, every address it resolves to must
   * pass, and the caller pins the connection to the one answered so nothing is looked up again.
   * Throws OutboundError ('refused', 'bad-url', 'network').
   */
  async pinnedAddress(url: URL): Promise<string> {
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (net.isIP(host) !== 0) {
      if (!mayConnect(this.allow, host, host))
        throw new OutboundError('refused', `${describeUrl(url)} is a private address this server does not call (OUTBOUND_ALLOW_PRIVATE allows one)`);
      return host;
    }
    let addresses: dns.LookupAddress[];
    try {
      addresses = await dns.promises.lookup(host, { all: true });
    } catch (error) {
      throw new OutboundError('network', `${describeUrl(url)}: the host name does not resolve (${errorCode(error)})`);
    }
    const refused = addresses.find((a) => !mayConnect(this.allow, host, a.address));
    if (refused !== undefined)
      throw new OutboundError(
        'refused',
        `${describeUrl(url)}: ${host} resolves to ${refused.address}, a private address this server does not call (OUTBOUND_ALLOW_PRIVATE allows one)`,
      );
    const first = addresses[0];
    if (first === undefined) throw new OutboundError('network', `${describeUrl(url)}: ${host} has no address`);
    return first.address;
  }

  /**
   * Calls `url`; answers whatever status came back (the caller judges it), or throws
   * OutboundError when there was no answer: refused by the guard, timed out, unreachable.
   */
  async request(url: string | URL, init: OutboundRequest = {}): Promise<OutboundResponse> {
    const method = init.method ?? 'GET';
    const idempotent = init.idempotent ?? IDEMPOTENT_METHODS.has(method);
    const attempts = idempotent ? 1 + this.retries : 1;
    let target = typeof url === 'string' ? parseUrl(url) : url;
    let redirectsLeft = method === 'GET' || method === 'HEAD' ? (init.maxRedirects ?? 0) : 0;
    let headers = init.headers ?? {};
    for (;;) {
      const response = await this.withRetries(target, method, headers, init.body, attempts);
      const location = response.headers.location;
      if (response.status < 300 || response.status >= 400 || location === undefined || redirectsLeft === 0) return response;
      redirectsLeft -= 1;
      const next = parseUrl(new URL(location, target).toString());
      // Credentials are for the origin they were given for, never another the redirect names.
      if (next.origin !== target.origin) headers = Object.fromEntries(Object.entries(headers).filter(([name]) => name.toLowerCase() !== 'authorization'));
      target = next;
    }
  }

  private async withRetries(url: URL, method: string, headers: Record<string, string>, body: string | undefined, attempts: number): Promise<OutboundResponse> {
    for (let attempt = 1; ; attempt++) {
      const started = performance.now();
      try {
        const response = await this.once(url, method, headers, body);
        const fields = { method, url: describeUrl(url), status: response.status, ms: Math.round(performance.now() - started), attempt };
        if (attempt < attempts && RETRIED_STATUS.has(response.status)) {
          this.log?.warn(fields, 'outbound call answered a retryable status; retrying');
          await delay(this.backoff(attempt, response.headers['retry-after']));
          continue;
        }
        this.log?.debug(fields, 'outbound call');
        return response;
      } catch (error) {
        const failure = error instanceof OutboundError ? error : new OutboundError('network', `${method} ${describeUrl(url)} failed`);
        const fields = { method, url: describeUrl(url), failure: failure.kind, ms: Math.round(performance.now() - started), attempt };
        if (failure.kind === 'refused' || failure.kind === 'bad-url' || failure.kind === 'too-large' || attempt >= attempts) {
          this.log?.warn(fields, failure.message);
          throw failure;
        }
        this.log?.warn(fields, 'outbound call failed; retrying');
        await delay(this.backoff(attempt, undefined));
      }
    }
  }

  private backoff(attempt: number, retryAfter: string | undefined): number {
    const asked = retryAfter !== undefined && /^\d{1,4}$/.test(retryAfter) ? Number(retryAfter) * 1000 : 0;
    const exponential = this.retryBaseMs * 2 ** (attempt - 1);
    // Jitter, so callers failed by the same outage do not come back in step; never above 10 s.
    return Math.min(10_000, Math.max(asked, exponential / 2 + Math.random() * (exponential / 2)));
  }

  private async once(url: URL, method: string, headers: Record<string, string>, body: string | undefined): Promise<OutboundResponse> {
    const host = url.hostname.replace(/^\[|\]$/g, '');
    // An IP literal is connected to as it is, without the lookup that checks names.
    if (net.isIP(host) !== 0 && !mayConnect(this.allow, host, host)) {
      throw new OutboundError('refused', `${describeUrl(url)} is a private address this server does not call (OUTBOUND_ALLOW_PRIVATE allows one)`);
    }
    const signal = AbortSignal.timeout(this.timeoutMs);
    try {
      const response = await undiciRequest(url, { method: method as 'GET', headers, body: body ?? null, dispatcher: this.agent, signal });
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of response.body as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > this.maxResponseBytes) {
          response.body.destroy();
          throw new OutboundError('too-large', `${describeUrl(url)} answered more than ${this.maxResponseBytes} bytes`);
        }
        chunks.push(chunk);
      }
      const flat: Record<string, string> = {};
      for (const [name, value] of Object.entries(response.headers)) if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
      return { status: response.statusCode, headers: flat, body: Buffer.concat(chunks).toString('utf8'), url: describeUrl(url) };
    } catch (error) {
      if (error instanceof OutboundError) throw error;
      if (refusedIn(error)) throw new OutboundError('refused', `${describeUrl(url)}: ${refusedIn(error)?.message ?? 'a private address'}`);
      if (signal.aborted || isTimeout(error)) throw new OutboundError('timeout', `${method} ${describeUrl(url)} did not answer within ${this.timeoutMs} ms`);
      throw new OutboundError('network', `${method} ${describeUrl(url)} failed: ${errorCode(error)}`);
    }
  }

  /**
   * A WHATWG `fetch` through the same guarded agent, for clients built on fetch that read their
   * answer as a stream (server-sent events from a model provider). Nothing is buffered or retried
   * here: the caller owns the body and its retries. The agent's timeouts hold (connection, first
   * header, and the longest pause between two chunks of the body); a refused address throws
   * OutboundError('refused'), no answer within the timeout OutboundError('timeout'), any other
   * failure OutboundError('network'); an abort by the caller's signal is rethrown as it is.
   */
  readonly fetch = async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const url = parseUrl(typeof input === 'string' ? input : input instanceof URL ? input.toString() : input.url);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (net.isIP(host) !== 0 && !mayConnect(this.allow, host, host)) {
      throw new OutboundError('refused', `${describeUrl(url)} is a private address this server does not call (OUTBOUND_ALLOW_PRIVATE allows one)`);
    }
    const method = init.method ?? (input instanceof Request ? input.method : 'GET');
    const started = performance.now();
    try {
      const response = await undiciFetch(input as never, { ...(init as object), dispatcher: this.agent } as never);
      this.log?.debug({ method, url: describeUrl(url), status: response.status, ms: Math.round(performance.now() - started) }, 'outbound call');
      return response as unknown as Response;
    } catch (error) {
      if (init.signal?.aborted) throw error;
      const refused = refusedIn(error);
      const failure = refused
        ? new OutboundError('refused', `${describeUrl(url)}: ${refused.message}`)
        : isTimeout(error) || isTimeout((error as Error).cause)
          ? new OutboundError('timeout', `${method} ${describeUrl(url)} did not answer within ${this.timeoutMs} ms`)
          : new OutboundError('network', `${method} ${describeUrl(url)} failed: ${errorCode(error)}`);
      this.log?.warn({ method, url: describeUrl(url), failure: failure.kind, ms: Math.round(performance.now() - started) }, failure.message);
      throw failure;
    }
  };

  async close(): Promise<void> {
    await this.agent.close();
  }
}

function parseUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new OutboundError('bad-url', 'not a URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new OutboundError('bad-url', `${url.protocol} URLs are not called`);
  if (url.username !== '' || url.password !== '') throw new OutboundError('bad-url', 'URLs with credentials in them are not called');
  return url;
}

function refusedIn(error: unknown): RefusedAddress | undefined {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) if (e instanceof RefusedAddress) return e;
  return undefined;
}

function isTimeout(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: string }).code ?? '';
  return code.includes('TIMEOUT') || (error as Error).name === 'TimeoutError' || (error as Error).name === 'AbortError';
}

/** The error's code (ECONNREFUSED), never its message, which may quote a URL. */
function errorCode(error: unknown): string {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return 'unreachable';
}
