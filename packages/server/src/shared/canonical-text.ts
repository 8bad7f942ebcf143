import { createHash } from 'node:crypto';
import { Type, type Static } from 'typebox';
import { nestsDeeperThan } from './json-depth.js';
import { ApiError, type FieldError } from './problems.js';

/**
 * Canonical text of a stored document (a report, a dashboard draft): the form clients read and
 * edit as text with exact search-and-replace. It is JSON with object keys sorted at every level,
 * two-space indentation and one trailing newline, so the same value always gives the same text
 * (and hash), and any text that parses to the value round-trips to it. Array order is kept.
 */

const HASH = Type.String({ pattern: '^[0-9a-f]{64}$', description: 'SHA-256 (hex, lower case) of `content`, as UTF-8.' });

export const TextFileSchema = Type.Object(
  {
    content: Type.String({ description: 'The canonical text: JSON with object keys sorted at every level, two-space indentation and a trailing newline.' }),
    hash: HASH,
  },
  { description: 'A document as canonical text, with the hash an edit names.' },
);
export type TextFile = Static<typeof TextFileSchema>;

/** An edit's texts are bounded by the body limit (1 MiB) anyway; these bounds name the field that is too long. */
const MAX_EDIT_TEXT = 1_000_000;
export const MAX_EDITS = 100;

export const TextEditBody = Type.Object(
  {
    hash: {
      ...HASH,
      description: 'The `hash` of the text the edits were made against (from the GET, or the previous PATCH). Another hash is a 409 and writes nothing.',
    },
    edits: Type.Array(
      Type.Object(
        {
          oldText: Type.String({
            minLength: 1,
            maxLength: MAX_EDIT_TEXT,
            description: 'Exact text to replace (whitespace and line breaks included); it must occur exactly once in the text as the earlier edits left it.',
          }),
          newText: Type.String({ maxLength: MAX_EDIT_TEXT, description: 'What replaces it; empty deletes it.' }),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: MAX_EDITS, description: 'Applied in order, each to the result of the one before; all apply or none does.' },
    ),
  },
  { additionalProperties: false, description: 'Exact-text edits of a canonical text, made against the text of `hash`.' },
);
export type TextEditInput = Static<typeof TextEditBody>;

function sorted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sorted);
  if (value !== null && typeof value === 'object') {
    // fromEntries defines own properties: a `__proto__` key stays a key, never a prototype.
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>)
        .filter(([, v]) => v !== undefined)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([k, v]) => [k, sorted(v)]),
    );
  }
  return value;
}

export function canonicalText(value: unknown): string {
  return `${JSON.stringify(sorted(value), null, 2)}\n`;
}

export function textHash(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

export function textFileOf(value: unknown): TextFile {
  const content = canonicalText(value);
  return { content, hash: textHash(content) };
}

/**
 * 409 unless `sent` is the hash of the current text. The detail names the current hash, which the
 * answer's ETag carries too, so a client can read the text again and redo its edits.
 */
export function requireCurrentHash(current: TextFile, sent: string, what: string): void {
  if (current.hash === sent) return;
  throw new ApiError(
    'FILE_HASH_MISMATCH',
    `${what} changed since the text with hash ${sent} was read; its current hash is ${current.hash}. Nothing was written: read it again and redo the edits.`,
    { headers: { etag: `"${current.hash}"` } },
  );
}

function occurrences(text: string, part: string, stopAt: number): number[] {
  const found: number[] = [];
  for (let at = text.indexOf(part); at >= 0 && found.length < stopAt; at = text.indexOf(part, at + 1)) found.push(at);
  return found;
}

/** Line and column (1-based) of `offset` in `text`. */
function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return { line, column: offset - before.lastIndexOf('\n') };
}

/**
 * The text after the edits, each applied to the result of the one before. An `oldText` that occurs
 * nowhere, or more than once, is a 400 naming that edit: an edit must say exactly what it replaces.
 */
export function applyEdits(text: string, edits: TextEditInput['edits']): string {
  let result = text;
  for (const [i, { oldText, newText }] of edits.entries()) {
    const found = occurrences(result, oldText, 2);
    if (found.length !== 1) {
      const pointer = `/body/edits/${i}/oldText`;
      const message = found.length === 0 ? 'occurs nowhere in the text' : 'occurs more than once in the text; include more of the surrounding text';
      const where = found.length === 0 ? '' : ` (at line ${lineAndColumn(result, found[0]!).line} and line ${lineAndColumn(result, found[1]!).line})`;
      throw new ApiError('VALIDATION_FAILED', `Edit ${i}: oldText ${message}${where}${i > 0 ? ', as the edits before it left it' : ''}. Nothing was written.`, {
        errors: [{ pointer, message }],
      });
    }
    result = result.slice(0, found[0]!) + newText + result.slice(found[0]! + oldText.length);
  }
  return result;
}

function invalidText(detail: string, errors: FieldError[] = [{ pointer: '/body/edits', message: 'leave text that is not valid JSON' }]): ApiError {
  return new ApiError('VALIDATION_FAILED', `${detail} Nothing was written.`, { errors });
}

/**
 * The edited text as a value: JSON (400 with line and column when it is not), without `__proto__`
 * or `constructor.prototype` keys (refused in any request body too), nesting at most `maxDepth`.
 */
export function parseEditedText(text: string, maxDepth: number): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text, (key, inner: unknown) => {
      if (key === '__proto__' || (key === 'constructor' && inner !== null && typeof inner === 'object' && Object.hasOwn(inner, 'prototype'))) {
        throw new ProtoKey(key);
      }
      return inner;
    });
  } catch (error) {
    if (error instanceof ProtoKey) throw invalidText(`The edited text holds a "${error.key}" key, which no request may send.`);
    const message = error instanceof Error ? error.message : String(error);
    const position = /position (\d+)/.exec(message);
    const at = position ? lineAndColumn(text, Number(position[1])) : null;
    throw invalidText(`The edited text is not valid JSON${at ? ` at line ${at.line}, column ${at.column}` : ''}: ${message}.`);
  }
  if (nestsDeeperThan(value, maxDepth)) throw invalidText(`The edited text nests deeper than ${maxDepth} levels.`);
  return value;
}

class ProtoKey extends Error {
  constructor(readonly key: string) {
    super(key);
  }
}

/**
 * Ajv's errors against the edited document as field errors: each pointer is `/content` followed by
 * the JSON pointer into the document, so it names the part of the text that is wrong.
 */
export function documentErrors(
  errors: ReadonlyArray<{ instancePath: string; message?: string | undefined; keyword: string; params: Record<string, unknown> }>,
): FieldError[] {
  const out = new Map<string, string[]>();
  for (const error of errors) {
    if (error.keyword === 'anyOf' || error.keyword === 'oneOf') continue;
    let pointer = `/content${error.instancePath}`;
    let message = error.message ?? 'is invalid';
    if (error.keyword === 'required') {
      pointer += `/${escapePointer(String(error.params.missingProperty))}`;
      message = 'is required';
    } else if (error.keyword === 'additionalProperties') {
      pointer += `/${escapePointer(String(error.params.additionalProperty))}`;
      message = 'is not a known field';
    } else if (error.keyword === 'enum') {
      message = `must be one of ${(error.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    }
    const list = out.get(pointer) ?? [];
    if (!list.includes(message)) list.push(message);
    out.set(pointer, list);
  }
  // "must be null" beside a deeper error of the same value says nothing the deeper one does not.
  const pointers = [...out.keys()];
  return [...out]
    .filter(([pointer, messages]) => !(messages.every((m) => m.startsWith('must be ')) && pointers.some((p) => p.startsWith(`${pointer}/`))))
    .map(([pointer, messages]) => ({ pointer, message: messages.join('; ') }));
}

function escapePointer(segment: string): string {
  return segment.replaceAll('~', '~0').replaceAll('/', '~1');
}
