import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { describe, expect, it } from 'vitest';

/**
 * The request bodies the docs show are requests the server takes: every example is validated
 * against its operation's request body schema in openapi.json, and every operation with a body has
 * an example (or a reason below). No server: it reads files.
 *
 * An example is a fenced block tagged `http` whose first line is `METHOD /path` and whose rest is
 * the JSON body (docs/api/reference.md#example-bodies), or a `curl -X METHOD <url> … -d '<json>'`
 * command in a `sh` block.
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const DOC_ID = 'https://mapi.invalid/openapi.json';
const WRITES = ['post', 'put', 'patch', 'delete'] as const;

// Reasons an operation has no example (scim.md shows a SCIM user's POST and PATCH).
const SCIM = 'sent by identity providers (RFC 7644), not by hand';
const EMBED_PAGE = 'called by the embedded page, with its embed token';

/** Operations with a request body and no example, each with why. */
const WITHOUT_EXAMPLE: Record<string, string> = {
  'POST /build/api/v1/deployments/{deploymentId}/data-model/upload/file': 'multipart, not JSON; `mapi model push` sends it (client-and-cli.md)',
  'POST /api/scim/v2/.search': SCIM,
  'POST /api/scim/v2/Users/.search': SCIM,
  'POST /api/scim/v2/Groups/.search': SCIM,
  'PUT /api/scim/v2/Users/{userId}': SCIM,
  'PUT /api/scim/v2/Groups/{groupId}': SCIM,
  'POST /api/scim/v2/Groups': SCIM,
  'PATCH /api/scim/v2/Groups/{groupId}': SCIM,
  'POST /api/v1/embed/dashboard/{publicId}/python-run': EMBED_PAGE,
  'POST /api/v1/embed/dashboard/{publicId}/ai-widgets/{widgetId}/summary': EMBED_PAGE,
  'POST /api/v1/embed/dashboard/{publicId}/comments': EMBED_PAGE,
  'PATCH /api/v1/embed/dashboard/{publicId}/comments/{commentId}': EMBED_PAGE,
  'POST /api/v1/embed/dashboard/{publicId}/comments/{commentId}/resolve': EMBED_PAGE,
};

interface Example {
  where: string;
  method: string;
  url: string;
  body: string;
}

interface Operation {
  key: string;
  pattern: RegExp;
  literals: number;
  schema: unknown;
}

function markdownFiles(): string[] {
  const docs = path.join(ROOT, 'docs');
  const out = [path.join(ROOT, 'README.md')];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.md')) out.push(full);
    }
  };
  walk(docs);
  return out;
}

/** Fenced blocks: their info string, the line of their first content line, and their lines. */
function fences(text: string): Array<{ info: string; line: number; lines: string[] }> {
  const out: Array<{ info: string; line: number; lines: string[] }> = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^\s*(`{3,})([^`\s]*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    // A fence closes with at least as many backticks as opened it (CommonMark).
    const close = new RegExp(`^\\s*\`{${open[1]!.length},}\\s*$`);
    const indent = lines[i]!.indexOf('`');
    const start = i + 1;
    let end = start;
    while (end < lines.length && !close.test(lines[end]!)) end++;
    out.push({ info: open[2]!, line: start + 1, lines: lines.slice(start, end).map((l) => l.slice(Math.min(indent, l.length - l.trimStart().length))) });
    i = end;
  }
  return out;
}

function examplesIn(file: string, problems: string[]): Example[] {
  const rel = path.relative(ROOT, file);
  const out: Example[] = [];
  for (const block of fences(fs.readFileSync(file, 'utf8'))) {
    if (block.info === 'http') {
      const request = /^(GET|POST|PUT|PATCH|DELETE) (\/\S*)$/.exec(block.lines[0]!.trim());
      if (!request) {
        problems.push(`${rel}:${block.line}: an http example starts with "METHOD /path", not "${block.lines[0]}"`);
        continue;
      }
      out.push({ where: `${rel}:${block.line}`, method: request[1]!, url: request[2]!, body: block.lines.slice(1).join('\n').trim() });
    } else if (['sh', 'bash', 'shell', 'console'].includes(block.info)) {
      // A command continued with backslashes is one line.
      const commands = block.lines.join('\n').replace(/\\\n/g, ' ').split('\n');
      for (const [i, command] of commands.entries()) {
        const method = /\bcurl\b.*\s-X\s+(POST|PUT|PATCH|DELETE)\b/.exec(command);
        const body = /\s(?:-d|--data(?:-raw)?)\s+'([^']*)'/.exec(command);
        const url = /https?:\/\/[^/\s'"]+(\/[^\s'"]*)/.exec(command);
        if (!method || !body || !url) continue;
        const line = block.line + block.lines.slice(0, i).length;
        out.push({ where: `${rel}:${line}`, method: method[1]!, url: url[1]!, body: body[1]! });
      }
    }
  }
  return out;
}

function operations(document: { paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: unknown }> } }>> }): Operation[] {
  const out: Operation[] = [];
  for (const [template, item] of Object.entries(document.paths)) {
    const segments = template.split('/');
    const pattern = new RegExp(`^${segments.map((s) => (/^\{[^}]+\}$/.test(s) ? '[^/]+' : s.replace(/[.*+?^$()|[\]\\]/g, '\\$&'))).join('/')}$`);
    const literals = segments.filter((s) => s !== '' && !s.startsWith('{')).length;
    for (const [method, operation] of Object.entries(item)) {
      if (!['get', ...WRITES].includes(method)) continue;
      const content = operation.requestBody?.content;
      const schema = content?.['application/json']?.schema ?? content?.['application/scim+json']?.schema;
      out.push({ key: `${method.toUpperCase()} ${template}`, pattern, literals, schema: operation.requestBody ? (schema ?? null) : undefined });
    }
  }
  return out;
}

/** `#/components/...` references point into the document, registered under DOC_ID. */
function rewrite(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(rewrite);
  if (schema === null || typeof schema !== 'object') return schema;
  return Object.fromEntries(
    Object.entries(schema).map(([k, v]) => [k, k === '$ref' && typeof v === 'string' && v.startsWith('#/') ? `${DOC_ID}${v}` : rewrite(v)]),
  );
}

function errorsText(errors: ErrorObject[] | null | undefined): string {
  return (errors ?? []).map((e) => `${e.instancePath || '(body)'} ${e.message ?? ''} ${JSON.stringify(e.params)}`).join('; ');
}

describe('example bodies in the docs', () => {
  const document = JSON.parse(fs.readFileSync(path.join(ROOT, 'packages/server/openapi.json'), 'utf8'));
  const ops = operations(document);
  const problems: string[] = [];
  const examples = markdownFiles().flatMap((file) => examplesIn(file, problems));
  const shown = new Set<string>();

  const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv2020) => void;
  const ajv = new Ajv2020({ strict: false, allErrors: true, unicodeRegExp: true });
  addFormats(ajv);
  ajv.addSchema({ $id: DOC_ID, components: document.components });
  const validators = new Map<string, ValidateFunction>();

  for (const example of examples) {
    const concrete = example.url.split('?')[0]!;
    const matching = ops.filter((o) => o.key.startsWith(`${example.method} `) && o.pattern.test(concrete)).sort((a, b) => b.literals - a.literals);
    const op = matching[0];
    if (!op) {
      problems.push(`${example.where}: ${example.method} ${concrete} is no operation of openapi.json`);
      continue;
    }
    if (op.schema === undefined) {
      if (example.body !== '') problems.push(`${example.where}: ${op.key} takes no request body`);
      continue;
    }
    shown.add(op.key);
    let body: unknown;
    try {
      body = JSON.parse(example.body);
    } catch (error) {
      problems.push(`${example.where}: ${op.key}: the body is not JSON (${(error as Error).message})`);
      continue;
    }
    let validate = validators.get(op.key);
    if (!validate) validators.set(op.key, (validate = ajv.compile(rewrite(op.schema ?? {}) as object)));
    if (!validate(body)) problems.push(`${example.where}: ${op.key}: ${errorsText(validate.errors)}`);
  }

  it('finds the examples (the convention is in use)', () => {
    expect(examples.length).toBeGreaterThan(50);
  });

  it('every example names an operation of openapi.json and its body validates against that operation’s schema', () => {
    expect(problems, `\n${problems.join('\n')}\n`).toEqual([]);
  });

  it('every operation with a request body has an example in the docs, or a reason in WITHOUT_EXAMPLE', () => {
    const missing = ops.filter((o) => o.schema !== undefined && !shown.has(o.key) && !(o.key in WITHOUT_EXAMPLE)).map((o) => o.key);
    expect(missing, `no example of:\n${missing.join('\n')}\n`).toEqual([]);
  });

  it('WITHOUT_EXAMPLE names only operations with a body that have no example', () => {
    const stale = Object.keys(WITHOUT_EXAMPLE).filter((key) => shown.has(key) || !ops.some((o) => o.key === key && o.schema !== undefined));
    expect(stale).toEqual([]);
  });

  it('the README shows the body of POST /api/v1/embed/generate-session', () => {
    expect(examples.some((e) => e.where.startsWith('README.md:') && e.method === 'POST' && e.url === '/api/v1/embed/generate-session')).toBe(true);
  });
});
