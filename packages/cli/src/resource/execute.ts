/**
 * One request for any operation, through the client (its retries, its errors), by method and
 * path: the generated commands need no code of their own per operation.
 */
import fs from 'node:fs';
import path from 'node:path';
import { unwrap, type MapiClient } from '@mapi/client';
import { UsageError } from '../errors.js';
import { formatBytes, note, write, writeJson } from '../output.js';
import { printAnswer } from './render.js';
import type { OperationSpec } from './spec.js';

export interface OperationRequest {
  path: Record<string, string | number>;
  query: Record<string, unknown>;
  body?: unknown;
}

export interface OutputOptions {
  json: boolean;
  /** Follow `pageInfo.endCursor` to the end and print every item. */
  all: boolean;
  /** Where a binary answer goes: a file, or - for stdout. */
  out?: string;
  force: boolean;
}

type Answer = { data?: unknown; error?: unknown; response: Response };
type Send = (method: string, url: string, init: Record<string, unknown>) => Promise<Answer>;

/** The typed client's `request`, untyped: the operation is chosen at run time from the generated table. */
function send(client: MapiClient, spec: OperationSpec, request: OperationRequest, after?: string): Promise<Answer> {
  const query = after === undefined ? request.query : { ...request.query, after };
  return (client.request as unknown as Send)(spec.method, spec.path, {
    params: { path: request.path, query },
    ...(request.body !== undefined ? { body: request.body } : {}),
    parseAs: spec.response === 'binary' ? 'arrayBuffer' : 'json',
  });
}

interface Page {
  items: unknown[];
  pageInfo: { hasNextPage?: boolean; endCursor?: string | null };
}
const isPage = (value: unknown): value is Page =>
  typeof value === 'object' && value !== null && Array.isArray((value as Page).items) && typeof (value as Page).pageInfo === 'object';

/**
 * Checked before any request: a binary answer needs a place to go, and a terminal is not one
 * (bytes would garble it); an existing file is replaced only with --force.
 */
export function checkOut(out: string | undefined, force: boolean): void {
  if (out === undefined || out.trim() === '')
    throw new UsageError('--out is required: this command downloads a file.', 'Give --out FILE, or --out - to write to stdout.');
  if (out === '-') {
    if (process.stdout.isTTY)
      throw new UsageError('--out - would write binary data to the terminal.', 'Redirect stdout (> file) or pipe it, or give a file name.');
    return;
  }
  const dir = path.dirname(path.resolve(out));
  if (!fs.statSync(dir, { throwIfNoEntry: false })?.isDirectory()) throw new UsageError(`--out ${out}: directory ${dir} does not exist.`);
  if (!force && fs.existsSync(out)) throw new UsageError(`${out} already exists.`, 'Pass --force to replace it, or choose another --out.');
}

function save(bytes: Uint8Array, contentType: string, output: OutputOptions): void {
  const out = output.out as string;
  if (out === '-') {
    process.stdout.write(bytes);
    note(`Wrote ${formatBytes(bytes.length)} of ${contentType} to stdout.`);
    return;
  }
  try {
    // `wx`: a file that appeared since the check is not replaced without --force.
    fs.writeFileSync(out, bytes, { flag: output.force ? 'w' : 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST')
      throw new UsageError(`${out} already exists.`, 'Pass --force to replace it, or choose another --out.');
    throw error;
  }
  if (output.json) writeJson({ file: out, bytes: bytes.length, contentType });
  else write(`Wrote ${out} (${formatBytes(bytes.length)}, ${contentType}).`);
}

/** Sends the request and prints the answer as the options ask; errors throw (ApiError, UsageError). */
export async function execute(client: MapiClient, spec: OperationSpec, request: OperationRequest, output: OutputOptions, done: string): Promise<void> {
  const answer = await send(client, spec, request);
  const data = unwrap(answer) as unknown;
  if (spec.response === 'binary' && data instanceof ArrayBuffer) {
    save(new Uint8Array(data), answer.response.headers.get('content-type') ?? 'application/octet-stream', output);
    return;
  }
  if (answer.response.status === 204 || data === undefined) {
    // Nothing to print on stdout, even with --json: there was no answer body.
    note(`${done} (${answer.response.status}).`);
    return;
  }
  if (output.all && isPage(data)) {
    const items = [...data.items];
    for (let page: Page = data; page.pageInfo.hasNextPage && page.pageInfo.endCursor;) {
      const next = unwrap(await send(client, spec, request, page.pageInfo.endCursor)) as unknown;
      if (!isPage(next)) break;
      items.push(...next.items);
      page = next;
    }
    // Every page's items as one array, as the hand-written lists print them.
    if (output.json) writeJson(items);
    else printAnswer(items);
    return;
  }
  if (output.json) writeJson(data);
  else printAnswer(data);
}
