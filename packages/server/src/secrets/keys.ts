import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { inspect } from 'node:util';

/**
 * Secret keys: 32 bytes each, named by an id that every value sealed with it carries. A key is
 * written as 64 hex digits or as base64/base64url of its 32 bytes, optionally preceded by its id
 * (`id:key`); a bare key's id is its fingerprint, `k` and the first 12 hex digits of its SHA-256.
 * A list is comma- or line-separated; the first key seals new values, the others only open.
 */

export const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;

/** A key's material stays inside: printing, logging or serialising a key shows its id only. */
export class SecretKey {
  readonly #material: Buffer;
  constructor(
    readonly id: string,
    material: Buffer,
  ) {
    this.#material = Buffer.from(material);
  }
  /** The 32 bytes, for the cipher alone. */
  material(): Buffer {
    return this.#material;
  }
  toJSON(): { id: string } {
    return { id: this.id };
  }
  [inspect.custom](): string {
    return `SecretKey(${this.id})`;
  }
}

/** The fingerprint id of a key given without one. */
export function fingerprintOf(material: Buffer): string {
  return `k${createHash('sha256').update(material).digest('hex').slice(0, 12)}`;
}

function decodeKey(text: string): Buffer | null {
  if (/^[0-9a-fA-F]{64}$/.test(text)) return Buffer.from(text, 'hex');
  if (!/^[A-Za-z0-9+/_-]{43}=?$/.test(text)) return null;
  const bytes = Buffer.from(text.replaceAll('-', '+').replaceAll('_', '/'), 'base64');
  return bytes.length === 32 ? bytes : null;
}

/**
 * Parses a key list; each problem names the entry by position, never by its text, so a message
 * about a malformed key shows nothing of it.
 *
 * @example
 *   parseSecretKeys('k2:' + newKey + ',k1:' + oldKey, 'MAPI_SECRET_KEY') // { keys: [k2, k1], problems: [] }
 */
export function parseSecretKeys(text: string, source: string): { keys: SecretKey[]; problems: string[] } {
  const entries = text
    .split(/[,\n]/)
    .map((e) => e.trim())
    .filter((e) => e !== '' && !e.startsWith('#'));
  const keys: SecretKey[] = [];
  const problems: string[] = [];
  if (entries.length === 0) problems.push(`${source} holds no key`);
  entries.forEach((entry, i) => {
    const colon = entry.indexOf(':');
    const id = colon === -1 ? null : entry.slice(0, colon);
    const material = decodeKey(colon === -1 ? entry : entry.slice(colon + 1));
    const which = `${source} entry ${i + 1}`;
    if (id !== null && !KEY_ID.test(id)) problems.push(`${which}: a key id is 1 to 32 letters, digits, "-" or "_"`);
    else if (material === null)
      problems.push(`${which}: a key is 32 bytes written as 64 hex digits or in base64 (generate one with \`npm run admin -- secrets generate-key\`)`);
    else {
      const key = new SecretKey(id ?? fingerprintOf(material), material);
      if (keys.some((k) => k.id === key.id)) problems.push(`${which}: key id "${key.id}" is given twice`);
      else keys.push(key);
    }
  });
  return { keys, problems };
}

/** A new key, written as the key file and `generate-key` write it. */
export function generateKeyText(): string {
  return randomBytes(32).toString('base64');
}

/** Where the keys come from (config.ts decides; loadSecretKeys reads). */
export type SecretKeySource =
  | { from: 'MAPI_SECRET_KEY'; keys: SecretKey[] }
  | { from: 'MAPI_SECRET_KEY_FILE'; file: string }
  /** Outside production with neither set: made once in DATA_DIR and kept. */
  | { from: 'generated'; file: string };

export interface LoadedKeys {
  keys: SecretKey[];
  /** Where they came from, for messages: `MAPI_SECRET_KEY`, or the file's path and variable. */
  origin: string;
}

export class SecretKeyError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'SecretKeyError';
  }
}

const FILE_MODE = 0o600;
const DIR_MODE = 0o700;

/** Reads (or, for `generated`, makes once) the keys a source names. */
export async function loadSecretKeys(source: SecretKeySource): Promise<LoadedKeys> {
  if (source.from === 'MAPI_SECRET_KEY') return { keys: source.keys, origin: 'MAPI_SECRET_KEY' };
  const origin = source.from === 'generated' ? `the generated key file ${source.file}` : `MAPI_SECRET_KEY_FILE (${source.file})`;
  if (source.from === 'generated') await ensureKeyFile(source.file);
  let text: string;
  try {
    text = await fs.readFile(source.file, 'utf8');
  } catch (error) {
    throw new SecretKeyError(`${origin} could not be read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, { cause: error });
  }
  const { keys, problems } = parseSecretKeys(text, origin);
  if (problems.length > 0) throw new SecretKeyError(problems.join('; '));
  return { keys, origin };
}

/**
 * Makes the key file unless it exists, readable by the server's user alone. Written beside and
 * linked into place, which fails if another process made it first: then that one is kept.
 */
async function ensureKeyFile(file: string): Promise<void> {
  const dir = path.dirname(file);
  await fs.mkdir(dir, { recursive: true, mode: DIR_MODE });
  const kept = await fs.stat(file).catch(() => null);
  if (kept) {
    if ((kept.mode & 0o777) !== FILE_MODE) await fs.chmod(file, FILE_MODE);
    return;
  }
  // Unique per call, not per process: two starts in one process must not share (and delete) one file.
  const temporary = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  await fs.writeFile(temporary, `${generateKeyText()}\n`, { mode: FILE_MODE });
  await fs.chmod(temporary, FILE_MODE);
  try {
    await fs.link(temporary, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    await fs.rm(temporary, { force: true });
  }
}
