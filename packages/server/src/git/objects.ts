import { createHash } from 'node:crypto';

/** Git's name for "no object": the old value of a ref being created, the new value of one being deleted. */
export const NO_OBJECT = '0'.repeat(40);

/** Git's blob id of `content` (SHA-1 over "blob <size>\0" and the bytes): what `git hash-object` prints. */
export function blobSha(content: string | Buffer): string {
  const bytes = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
  return createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex');
}

/** Who made a change, as git records it. */
export interface Signature {
  name: string;
  email: string;
  /** Defaults to now. */
  at?: Date;
}

/** `Name <email> <seconds> +0000`: angle brackets and line breaks cannot be part of either field. */
export function signatureLine(who: Signature): string {
  const clean = (s: string) => s.replace(/[<>\n\r\0]/g, '').trim();
  const seconds = Math.floor((who.at ?? new Date()).getTime() / 1000);
  return `${clean(who.name) || clean(who.email)} <${clean(who.email)}> ${seconds} +0000`;
}

/** The environment variables that make `commit-tree` record `who` as author and committer. */
export function signatureEnv(who: Signature): Record<string, string> {
  const clean = (s: string) => s.replace(/[<>\n\r\0]/g, '').trim();
  const date = `${Math.floor((who.at ?? new Date()).getTime() / 1000)} +0000`;
  const name = clean(who.name) || clean(who.email);
  const email = clean(who.email);
  return {
    GIT_AUTHOR_NAME: name,
    GIT_AUTHOR_EMAIL: email,
    GIT_AUTHOR_DATE: date,
    GIT_COMMITTER_NAME: name,
    GIT_COMMITTER_EMAIL: email,
    GIT_COMMITTER_DATE: date,
  };
}

/** A path as fast-import reads it: always C-quoted, so spaces and quotes cannot split a command. */
export function quotePath(path: string): string {
  let out = '"';
  for (const ch of path) {
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\t') out += '\\t';
    else out += ch;
  }
  return `${out}"`;
}
