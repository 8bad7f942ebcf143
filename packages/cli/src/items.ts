import { parseItemRef, type ItemRef, type ItemType } from '@mapi/client';
import { UsageError } from './errors.js';

const TYPES: readonly ItemType[] = ['FOLDER', 'WORKBOOK', 'REPORT'];

/**
 * TYPE:ID as the client reads it, but stricter about the id: the client accepts "folder:01" as
 * folder 1, and an id with a leading zero is far more likely a slip than a way to write 1.
 */
function parseRef(text: string): ItemRef {
  const id = /:([0-9]+)$/.exec(text.trim())?.[1];
  if (id !== undefined && id.startsWith('0')) throw new TypeError(`Invalid item reference "${text}": the id must be a positive integer without leading zeros.`);
  return parseItemRef(text);
}

function refError(where: string, error: unknown): UsageError {
  return new UsageError(`${where}: ${(error as Error).message}`, 'Items are written TYPE:ID, e.g. folder:12, workbook:7, report:3.');
}

/** One `{type, id}` object from a JSON list; the type is accepted in any case, like TYPE:ID arguments. */
function objectRef(value: unknown, where: string): ItemRef {
  const candidate = value as { type?: unknown; id?: unknown } | null;
  const type = typeof candidate?.type === 'string' ? (candidate.type.toUpperCase() as ItemType) : undefined;
  const id = candidate?.id;
  if (!type || !TYPES.includes(type) || typeof id !== 'number' || !Number.isSafeInteger(id) || id < 1) {
    throw new UsageError(`${where}: expected {"type": "FOLDER"|"WORKBOOK"|"REPORT", "id": <positive integer>} or "type:id", got ${JSON.stringify(value)}`);
  }
  return { type, id };
}

/**
 * Items from stdin: a JSON array (of {type, id} objects or "type:id" strings, as `--json` output
 * and scripts produce) when the text starts with "[", else one TYPE:ID per line. Blank lines and
 * lines starting with # are skipped so a hand-written list can carry comments.
 */
export function parseItemList(text: string, source = 'stdin', deploymentId?: number): ItemRef[] {
  // trim() also drops the byte order mark some Windows tools write first; line ends may be CRLF.
  const trimmed = text.trim();
  if (trimmed.startsWith('{')) {
    // Most likely a result object piped on (`mapi move --json`), which lists what was done, not what to do.
    throw new UsageError(
      `${source} holds a JSON object; expected a JSON array of items, or TYPE:ID lines.`,
      `The --json output of move and delete is a result object, not an item list. \`mapi workspace ls ${deploymentId ?? 1} root --refs\` lists the items at the workspace root (a folder id in place of root lists that folder), or pick a list out of a result with \`jq .failed\`.`,
    );
  }
  if (trimmed.startsWith('[')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch (error) {
      throw new UsageError(`${source} is not valid JSON: ${(error as Error).message}`);
    }
    if (!Array.isArray(parsed)) throw new UsageError(`${source}: expected a JSON array of items`);
    return parsed.map((value, index) => {
      const where = `${source} item ${index}`;
      if (typeof value !== 'string') return objectRef(value, where);
      try {
        return parseRef(value);
      } catch (error) {
        throw refError(where, error);
      }
    });
  }
  const refs: ItemRef[] = [];
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    try {
      refs.push(parseRef(line));
    } catch (error) {
      throw refError(`${source} line ${index + 1}`, error);
    }
  });
  return refs;
}

/** Reads stdin to the end (items piped in, or a token for `login --token-stdin`). */
export async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write('Reading from the terminal; end with Ctrl-D.\n');
  let text = '';
  process.stdin.setEncoding('utf8');
  for await (const chunk of process.stdin) text += chunk as string;
  return text;
}

/**
 * ITEM arguments in order: TYPE:ID, or "-" for the list on stdin at that position. Stdin can only
 * be read once, so a second "-" is refused rather than silently contributing nothing.
 */
export async function collectItems(args: string[], deploymentId?: number, stdin: () => Promise<string> = readStdin): Promise<ItemRef[]> {
  const refs: ItemRef[] = [];
  let stdinUsed = false;
  for (const arg of args) {
    if (arg === '-') {
      if (stdinUsed) throw new UsageError('"-" (items from stdin) can be given only once.');
      stdinUsed = true;
      refs.push(...parseItemList(await stdin(), 'stdin', deploymentId));
      continue;
    }
    try {
      refs.push(parseRef(arg));
    } catch (error) {
      throw refError(`item "${arg}"`, error);
    }
  }
  if (refs.length === 0) throw new UsageError('No items given.', 'Pass TYPE:ID arguments (folder:12 workbook:7 report:3) or "-" to read them from stdin.');
  return refs;
}

/** Parses a positive integer id argument (deployment, folder, user, key). */
export function parseId(value: string, what: string): number {
  if (!/^[1-9][0-9]*$/.test(value.trim()) || !Number.isSafeInteger(Number(value))) {
    throw new UsageError(`${what} must be a positive integer, got "${value}".`);
  }
  return Number(value);
}

const SLUG = /^[a-z0-9][a-z0-9-]{0,99}$/;

/** A workbook slug, checked as the server checks it, so a mistake is caught before any request. */
export function parseSlug(value: string): string {
  if (!SLUG.test(value)) {
    throw new UsageError(
      `slug must be 1 to 100 lowercase letters, digits and hyphens, starting with a letter or digit, got "${value}".`,
      'For example: q3-revenue.',
    );
  }
  return value;
}

/** A destination or listing folder: a folder id, folder:ID, or "root" for the workspace root (null). */
export function parseFolder(value: string, what = 'folder'): number | null {
  const text = value.trim();
  if (text.toLowerCase() === 'root') return null;
  const match = /^folder:(.+)$/i.exec(text);
  return parseId(match ? (match[1] as string) : text, `${what} ("root" or a folder id)`);
}

/** A branch name given with --branch: empty is a mistake (an unset shell variable, say), not "the default". */
export function parseBranch(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (value.trim() === '') throw new UsageError('--branch is empty.', 'Leave --branch out for the default branch, or give a branch name such as main.');
  return value;
}
