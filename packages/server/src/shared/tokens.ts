import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Secrets the server hands out (API keys' bodies aside, which have their own alphabet): session
 * ids, client secrets, OAuth states, pod secrets. One place for how they are drawn, stored and
 * compared, so every area does it the same way: random bytes from the OS, stored only as their
 * SHA-256, compared in constant time.
 */

/** `bytes` random bytes as text (URL-safe base64, or hex where a stored format says so). */
export function randomToken(bytes = 32, encoding: 'base64url' | 'hex' = 'base64url'): string {
  return randomBytes(bytes).toString(encoding);
}

/** The SHA-256 of a token, as it is stored and looked up (hex, or URL-safe base64 where a stored format says so). */
export function tokenHash(token: string, encoding: 'hex' | 'base64url' = 'hex'): string {
  return createHash('sha256').update(token, 'utf8').digest(encoding);
}

/** Whether two secrets (or their hashes) are equal, in time that does not depend on where they differ. */
export function sameSecret(a: string | Buffer, b: string | Buffer): boolean {
  const left = typeof a === 'string' ? Buffer.from(a, 'utf8') : a;
  const right = typeof b === 'string' ? Buffer.from(b, 'utf8') : b;
  return left.length === right.length && timingSafeEqual(left, right);
}
