import https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestServer } from './support.js';

/**
 * What the proxy does with one request: pass it on, drop the connection, answer itself (problem
 * details with `code`, PROXY_FAULT by default, without the server seeing the request), or pass
 * it on and then answer 502 instead of the server's answer (the server acted; the client cannot know).
 */
export type Fault = 'forward' | 'destroy' | 'forward-then-502' | { status: number; headers?: Record<string, string>; code?: string };

/**
 * Decides per request; `n` counts earlier requests with the same method and path, so
 * "fail the first two" is `n < 2`.
 */
export type Rule = (request: { method: string; path: string }, n: number) => Fault;

/**
 * An HTTPS proxy in front of a real server, presenting the server's own certificate, that fails
 * requests on purpose. Tests see what a client does when the network or a gateway misbehaves.
 */
export class FaultyProxy {
  /** `METHOD /path` of every request that reached the proxy, in order. */
  seen: string[] = [];
  rule: Rule = () => 'forward';

  private constructor(
    private readonly server: https.Server,
    readonly url: string,
  ) {}

  static async start(target: TestServer): Promise<FaultyProxy> {
    const upstream = new URL(target.url);
    const server = https.createServer({ key: target.key, cert: target.ca });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const proxy = new FaultyProxy(server, `https://127.0.0.1:${port}`);
    server.on('request', (req: IncomingMessage, res: ServerResponse) => proxy.handle(req, res, upstream, target.ca));
    return proxy;
  }

  /** Forgets what it saw and forwards everything again. */
  reset(): void {
    this.seen = [];
    this.rule = () => 'forward';
  }

  count(method: string, path: string): number {
    return this.seen.filter((s) => s === `${method} ${path}`).length;
  }

  private handle(req: IncomingMessage, res: ServerResponse, upstream: URL, ca: string): void {
    const method = req.method ?? 'GET';
    const path = new URL(req.url ?? '/', 'https://proxy').pathname;
    const n = this.count(method, path);
    this.seen.push(`${method} ${path}`);
    const fault = this.rule({ method, path }, n);
    if (fault === 'destroy') {
      req.socket.destroy();
      return;
    }
    if (typeof fault === 'object') {
      // Drain the body first: answering before reading it can reset the connection instead.
      req.resume();
      req.once('end', () => {
        const body = JSON.stringify({
          type: 'about:blank',
          title: 'Injected by the test proxy',
          status: fault.status,
          detail: `Proxy answered ${fault.status}.`,
          code: fault.code ?? 'PROXY_FAULT',
        });
        res.writeHead(fault.status, { 'content-type': 'application/problem+json', ...fault.headers }).end(body);
      });
      return;
    }
    const forwarded = https.request(
      { hostname: upstream.hostname, port: upstream.port, path: req.url, method, headers: req.headers, ca, servername: 'localhost' },
      (answer) => {
        if (fault === 'forward-then-502') {
          answer.resume();
          answer.once('end', () => res.writeHead(502, { 'content-type': 'text/plain' }).end('Bad gateway (test proxy)'));
          return;
        }
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forwarded.once('error', () => res.destroy());
    req.pipe(forwarded);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
