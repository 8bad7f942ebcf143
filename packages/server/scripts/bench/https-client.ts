import https from 'node:https';
import net from 'node:net';

/** Helpers the benchmarks that start a real server share: statistics, a free port, waiting, and an HTTPS client. */

export type Json = Record<string, any>;

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Polls `check` until it answers a value (errors count as not yet), or throws after `ms`. */
export async function waitFor<T>(check: () => Promise<T | undefined>, what: string, ms = 120_000, intervalMs = 100): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await sleep(intervalMs);
  }
}

export interface Client {
  /** The answer's body as text: parsing it is the caller's business, not part of a timed request. */
  request(method: 'GET' | 'POST' | 'PUT', url: string, body?: unknown): Promise<{ status: number; text: string }>;
  json(method: 'GET' | 'POST' | 'PUT', url: string, body?: unknown): Promise<{ status: number; body: Json }>;
  close(): void;
}

/** A client of the server at `base` with the API key `key`, trusting `ca`. */
export function client(base: string, ca: string, key: string): Client {
  // One connection, kept alive: a latency sample is one request, not a TLS handshake.
  const agent = new https.Agent({ keepAlive: true, maxSockets: 1, ca });
  const request: Client['request'] = (method, url, body) => {
    const payload = body === undefined ? '' : JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const req = https.request(
        new URL(url, base),
        {
          method,
          agent,
          headers: {
            authorization: `Bearer ${key}`,
            ...(body === undefined ? {} : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) }),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.once('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  };
  return {
    request,
    async json(method, url, body) {
      const { status, text } = await request(method, url, body);
      return { status, body: text ? (JSON.parse(text) as Json) : {} };
    },
    close: () => agent.destroy(),
  };
}
