import fs from 'node:fs';
import tls from 'node:tls';
import { Agent, fetch as undiciFetch } from 'undici';
import { createClient as createUniversalClient, type ClientOptions, type MapiClient } from './client.js';

export * from './index.js';

export interface NodeClientOptions extends ClientOptions {
  /**
   * PEM of a CA to trust, for a server with a self-signed or private certificate: trusted besides
   * what Node trusts by default (its bundled Mozilla roots and NODE_EXTRA_CA_CERTS).
   */
  ca?: string | Uint8Array;
}

/** createClient for Node: the same client, plus `ca`. */
export function createClient(options: NodeClientOptions): MapiClient {
  const { ca, ...rest } = options;
  if (ca === undefined) return createUniversalClient(rest);
  if (rest.fetch) throw new TypeError('Pass either `ca` or `fetch`, not both: `ca` works by supplying its own fetch.');
  return createUniversalClient({ ...rest, fetch: fetchTrusting(ca) });
}

/**
 * undici's own fetch with undici's own Agent: Node's global fetch bundles another undici
 * version, whose dispatcher interface an Agent from this package does not match.
 */
export function fetchTrusting(ca: string | Uint8Array): typeof globalThis.fetch {
  // A `ca` given to TLS replaces the default trust store; keeping Node's defaults beside it lets
  // one client reach both the private server and public ones.
  const pem = typeof ca === 'string' ? ca : new TextDecoder().decode(ca);
  const dispatcher = new Agent({ connect: { ca: [...defaultCertificates(), pem] } });
  return async (input, init) => {
    const request = input instanceof Request && init === undefined ? input : new Request(input, init);
    const body = request.body === null ? undefined : await request.arrayBuffer();
    const response = await undiciFetch(request.url, {
      method: request.method,
      headers: [...request.headers],
      body,
      signal: request.signal,
      redirect: request.redirect,
      dispatcher,
    });
    return response as unknown as Response;
  };
}

/**
 * The CAs Node's own TLS clients trust. Node 22.15+ reports them (including the system store under
 * --use-system-ca); before that, tls.rootCertificates lacks NODE_EXTRA_CA_CERTS, so that file is
 * read here, as Node reads it at startup: a file it cannot read adds nothing.
 */
function defaultCertificates(): string[] {
  const getCACertificates = (tls as { getCACertificates?: (type: 'default') => string[] }).getCACertificates;
  if (getCACertificates) return getCACertificates('default');
  const extra = process.env.NODE_EXTRA_CA_CERTS;
  if (!extra) return [...tls.rootCertificates];
  try {
    return [...tls.rootCertificates, fs.readFileSync(extra, 'utf8')];
  } catch {
    return [...tls.rootCertificates];
  }
}
