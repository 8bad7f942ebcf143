import fs from 'node:fs';
import type { Command } from 'commander';
import { ApiError, type MapiClient } from '@mapi/client';
import { fieldsToObject, fieldsToQuery, type Field } from '../api-fields.js';
import { run } from '../context.js';
import { EXIT, UsageError } from '../errors.js';
import { readStdin } from '../items.js';

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'];

const HELP = `
Sends one request to any path of the API with the profile's credentials, for what no other
command covers: PATH is taken as-is and starts with /, as the paths in the API reference do
(/api/v1/..., /build/api/v1/...). Requests are retried as every command's are (GET, PUT and DELETE
on a lost connection, 429 or 503).

The body: --input FILE (- for stdin) sends that JSON as it is; -f key=value (a string) and
-F key=value (typed: true, false, null, numbers, @file for a file's text) build a JSON object,
with key[sub]=... for nested objects and key[]=... to append to a list. For GET and HEAD, and
beside --input, the fields are query parameters instead.

The answer's body goes to stdout: JSON indented on a terminal, byte for byte otherwise (pipe it
to jq). --include prints the status line and the headers first. An answer of 400 or above prints
its problem details on stderr, as other commands do, and exits 1.
Exit codes: 0 a 1xx-3xx answer, 1 an answer of 400 or above, the server unreachable, or a usage error.

Examples:
  $ mapi api GET /api/v1/users/me
  $ mapi api GET /build/api/v1/deployments/1/commits -F first=5
  $ mapi api POST /api/v1/deployments/1/folders -f name=Finance -F parentId=null
  $ mapi api PUT /api/v1/deployments/1 --input settings.json
  $ mapi api DELETE /api/v1/api-keys/7 --include
`;

interface ApiOptions {
  input?: string;
  rawField: string[];
  field: string[];
  header: string[];
  include?: boolean;
}

const collect = (value: string, previous: string[]) => [...previous, value];

function parseHeaders(specs: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const spec of specs) {
    const at = spec.indexOf(':');
    const name = spec.slice(0, at).trim();
    if (at <= 0 || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) throw new UsageError(`Header "${spec}" is not "Name: value".`, "Write -H 'Accept: text/csv'.");
    headers[name] = spec.slice(at + 1).trim();
  }
  return headers;
}

/** The JSON of --input, checked before anything is sent. */
async function readInput(file: string): Promise<string> {
  let text: string;
  try {
    text = file === '-' ? await readStdin() : fs.readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(`Cannot read ${file}: ${(error as Error).message}`);
  }
  try {
    JSON.parse(text);
  } catch (error) {
    throw new UsageError(
      `${file === '-' ? 'stdin' : file} is not JSON: ${(error as Error).message}`,
      '--input sends a JSON body; use -f/-F to build one from fields.',
    );
  }
  return text;
}

/** The path with the query parameters added to any it already has. */
function withQuery(path: string, pairs: readonly [string, string][]): string {
  if (pairs.length === 0) return path;
  const url = new URL(path, 'https://host.invalid');
  for (const [key, value] of pairs) url.searchParams.append(key, value);
  return `${path.split('?')[0]}${url.search}`;
}

/** The raw call: openapi-fetch's request, through the client's auth and retries, with the body as a stream. */
type RawRequest = (
  method: string,
  path: string,
  init: { body?: string; bodySerializer?: (body: string) => string; headers?: Record<string, string>; parseAs: 'stream' },
) => Promise<{ data?: ReadableStream<Uint8Array> | null; error?: unknown; response: Response }>;

function rawRequest(client: MapiClient): RawRequest {
  return client.request as unknown as RawRequest;
}

function writeHead(response: Response): void {
  const lines = [`HTTP ${response.status} ${response.statusText}`.trimEnd()];
  response.headers.forEach((value, name) => lines.push(`${name}: ${value}`));
  process.stdout.write(`${lines.join('\n')}\n\n`);
}

async function writeBody(response: Response, body: ReadableStream<Uint8Array> | null | undefined): Promise<void> {
  if (!body) return;
  const chunks: Uint8Array[] = [];
  for await (const chunk of body) chunks.push(chunk);
  const bytes = Buffer.concat(chunks);
  const json = /^application\/([a-z0-9.+-]*\+)?json\b/i.test(response.headers.get('content-type') ?? '');
  if (json && process.stdout.isTTY) {
    try {
      process.stdout.write(`${JSON.stringify(JSON.parse(bytes.toString('utf8')), null, 2)}\n`);
      return;
    } catch {
      // Not JSON after all: shown as it came.
    }
  }
  process.stdout.write(bytes);
  // A text answer ends its line, so the shell prompt or the next command's output starts on its
  // own; binary answers stay byte for byte.
  const text = json || /^text\//i.test(response.headers.get('content-type') ?? '');
  if (text && bytes.length > 0 && bytes[bytes.length - 1] !== 0x0a) process.stdout.write('\n');
}

export function registerApi(program: Command): void {
  program
    .command('api')
    .argument('<method>', `HTTP method: ${METHODS.join(', ')}`)
    .argument('<path>', 'request path with its query, starting with /, e.g. /api/v1/users/me')
    .option('--input <file>', 'send the JSON in FILE (- for stdin) as the body')
    .option('-f, --raw-field <key=value>', 'a string field of the JSON body (query parameter for GET)', collect, [])
    .option('-F, --field <key=value>', 'a typed field: true, false, null, a number, or @file (query parameter for GET)', collect, [])
    .option('-H, --header <header>', "an extra request header, 'Name: value'", collect, [])
    .option('-i, --include', 'print the status line and response headers before the body')
    .description('Send a request to any API path with the profile credentials, and print the answer')
    .addHelpText('after', HELP)
    .action(
      run(async (context, methodArg: string, path: string, options: ApiOptions) => {
        const method = methodArg.toUpperCase();
        if (!METHODS.includes(method)) throw new UsageError(`Unknown method "${methodArg}".`, `Use one of ${METHODS.join(', ')}.`);
        if (!path.startsWith('/') || path.startsWith('//'))
          throw new UsageError(`The path "${path}" does not start with /.`, 'Give the path as the API reference spells it, e.g. /api/v1/users/me.');
        const fields: Field[] = [...options.rawField.map((spec) => ({ spec, typed: false })), ...options.field.map((spec) => ({ spec, typed: true }))];
        const headers = parseHeaders(options.header);
        const inQuery = method === 'GET' || method === 'HEAD' || options.input !== undefined;
        if ((method === 'GET' || method === 'HEAD') && options.input !== undefined) throw new UsageError(`--input sends a body, which ${method} has none of.`);
        const body =
          options.input !== undefined ? await readInput(options.input) : !inQuery && fields.length > 0 ? JSON.stringify(fieldsToObject(fields)) : undefined;
        const target = withQuery(path, inQuery ? fieldsToQuery(fields) : []);
        const answer = await rawRequest(context.client())(method, target, {
          ...(body !== undefined ? { body, bodySerializer: (text: string) => text } : {}),
          headers,
          parseAs: 'stream',
        });
        if (options.include) writeHead(answer.response);
        if (!answer.response.ok) throw ApiError.from(answer.response, answer.error);
        await writeBody(answer.response, answer.data);
        return EXIT.OK;
      }),
    );
}
