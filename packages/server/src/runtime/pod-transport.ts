import http from 'node:http';
import { PRIVATE_META_HEADER, SECRET_HEADER, SECURITY_HEADER } from '../semantic-layer/protocol.js';
import type { PodRequest } from './driver.js';

/** A request for an environment's pod: what its IPC channel carries, and the id its log line names over HTTP. */
export type PodCall = PodRequest & { requestId: string };

/** A pod's answer: its status and JSON. */
export interface PodAnswer {
  status: number;
  contentType: string;
  body: Buffer | string;
}

/** What the runtime answers (its JSON text, over the IPC channel). */
const JSON_TYPE = 'application/json; charset=utf-8';

/** How long a pod of another process may take to answer over HTTP. */
const HTTP_TIMEOUT_MS = 120_000;

/**
 * Sends the request to a live pod: over its IPC channel where this process runs it (the body as
 * parsed, no HTTP on either side), else over HTTP to its address, with its secret and the
 * caller's context in headers. Rejects as the channel or the connection does (StatementTimeout
 * included); the caller words the outage.
 */
export async function sendToPod(
  target: { address: string; secret: string; call?: (request: PodRequest) => Promise<{ status: number; body: string }> },
  request: PodCall,
): Promise<PodAnswer> {
  const { requestId, ...message } = request;
  if (target.call) {
    const answer = await target.call(message);
    return { status: answer.status, contentType: JSON_TYPE, body: answer.body };
  }
  const headers: Record<string, string> = {
    [SECRET_HEADER]: target.secret,
    'x-request-id': requestId,
    // The runtime reads it back as base64url JSON (semantic-layer/main.ts).
    [SECURITY_HEADER]: Buffer.from(JSON.stringify(message.security), 'utf8').toString('base64url'),
  };
  if (message.privateMeta) headers[PRIVATE_META_HEADER] = '1';
  const payload = message.body === undefined || message.body === null ? undefined : Buffer.from(JSON.stringify(message.body));
  if (payload) Object.assign(headers, { 'content-type': 'application/json', 'content-length': String(payload.length) });
  return send(`${target.address}${message.path}${message.search ? `?${message.search}` : ''}`, message.method, headers, payload);
}

function send(url: string, method: string, headers: Record<string, string>, payload: Buffer | undefined): Promise<PodAnswer & { body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers, timeout: HTTP_TIMEOUT_MS }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 502, contentType: String(res.headers['content-type'] ?? 'application/json'), body: Buffer.concat(chunks) }),
      );
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('The runtime did not answer in time')));
    req.on('error', reject);
    req.end(payload);
  });
}
