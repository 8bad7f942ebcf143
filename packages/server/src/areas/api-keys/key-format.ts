import { randomInt } from 'node:crypto';
import { sameSecret, tokenHash } from '../../shared/tokens.js';

/**
 * API keys are `mapi_` + 40 characters of [A-Za-z0-9] (about 238 bits). The fixed prefix lets
 * secret scanners recognise a leaked key; only the SHA-256 hash is ever stored.
 */
export const KEY_PREFIX = 'mapi_';
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const KEY_PATTERN = /^mapi_[A-Za-z0-9]{40}$/;

export function isApiKeyFormat(candidate: string): boolean {
  return KEY_PATTERN.test(candidate);
}

export function generateApiKey(): string {
  let body = '';
  // randomInt draws without modulo bias.
  for (let i = 0; i < 40; i++) body += ALPHABET[randomInt(ALPHABET.length)];
  return KEY_PREFIX + body;
}

export function hashApiKey(key: string): string {
  return tokenHash(key);
}

/** The part of a key that may be shown after creation, so a user can tell keys apart. */
export function displayPrefix(key: string): string {
  return key.slice(0, KEY_PREFIX.length + 4);
}

export function hashesEqual(a: string, b: string): boolean {
  return sameSecret(Buffer.from(a, 'hex'), Buffer.from(b, 'hex'));
}
