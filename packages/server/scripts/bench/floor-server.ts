/**
 * The read benchmark's floor: a bare Fastify TLS server that answers each benchmarked URL with the
 * very bytes the API answered, held in memory. Whatever the API costs beyond this is its own work:
 * authentication, access, queries, serialisation. Started by bench-read.ts as a process of its own,
 * like the API server, so both get the same share of the machine.
 */
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';

interface FloorRoute {
  url: string;
  contentType: string;
  /** base64 of the response body */
  body: string;
}

const input = process.argv[2];
if (!input) throw new Error('usage: floor-server <routes.json>');
const { cert, key, routes } = JSON.parse(fs.readFileSync(input, 'utf8')) as { cert: string; key: string; routes: FloorRoute[] };
const byUrl = new Map(routes.map((r) => [r.url, { contentType: r.contentType, body: Buffer.from(r.body, 'base64') }]));

const app = Fastify({ https: { key, cert } });
app.get('/*', (request, reply) => {
  const hit = byUrl.get(request.url);
  if (!hit) return reply.code(404).send();
  return reply.header('content-type', hit.contentType).send(hit.body);
});
await app.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(`${(app.server.address() as AddressInfo).port}\n`);
