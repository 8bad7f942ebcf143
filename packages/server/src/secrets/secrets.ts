import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { generateKeyText, parseSecretKeys, SecretKey } from './keys.js';

/**
 * Values at rest, sealed with AES-256-GCM. The stored form is
 *
 *   v1:<key id>:<nonce, base64url>:<ciphertext and 16-byte tag, base64url>
 *
 * with a fresh 96-bit nonce per value. The version, the key id and the caller's context (say
 * `env-var:12:DB_PASSWORD`) are authenticated data: a value whose key id was edited, or that was
 * copied to another row, does not open. Errors name key ids and contexts, never a value.
 */

const VERSION = 'v1';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const STORED = /^v1:([A-Za-z0-9_-]{1,32}):([A-Za-z0-9_-]{16}):([A-Za-z0-9_-]{22,})$/;

export class SecretsError extends Error {
  constructor(
    readonly reason: 'unknown-key' | 'malformed' | 'undecryptable',
    message: string,
  ) {
    super(message);
    this.name = 'SecretsError';
  }
}

function additionalData(keyId: string, context: string): Buffer {
  return Buffer.from(`${VERSION}\0${keyId}\0${context}`, 'utf8');
}

export class Secrets {
  readonly #keys: Map<string, SecretKey>;
  readonly #current: SecretKey;

  /** `keys[0]` seals new values; every key opens the values made with it. */
  constructor(
    keys: readonly SecretKey[],
    /** Where the keys came from, for messages (`MAPI_SECRET_KEY`, a file). */
    readonly origin = 'the configured keys',
  ) {
    const current = keys[0];
    if (current === undefined) throw new SecretsError('unknown-key', `${origin} holds no key`);
    this.#current = current;
    this.#keys = new Map(keys.map((k) => [k.id, k]));
  }

  /** A key of its own, for an app or script whose values need not outlive it (tests). */
  static ephemeral(): Secrets {
    return new Secrets(parseSecretKeys(`ephemeral:${generateKeyText()}`, 'ephemeral key').keys, 'an ephemeral key');
  }

  /** The id of the key new values are sealed with. */
  get currentKeyId(): string {
    return this.#current.id;
  }

  /** The ids of every configured key, the current one first. */
  get keyIds(): string[] {
    return [...this.#keys.keys()];
  }

  hasKey(id: string): boolean {
    return this.#keys.has(id);
  }

  /** Seals `plaintext` under the current key, bound to `context`. */
  seal(plaintext: string, context = ''): string {
    const key = this.#current;
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key.material(), nonce, { authTagLength: TAG_BYTES });
    cipher.setAAD(additionalData(key.id, context));
    const sealed = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `${VERSION}:${key.id}:${nonce.toString('base64url')}:${sealed.toString('base64url')}`;
  }

  /** Opens a value sealed by `seal` with the same context; throws SecretsError otherwise. */
  open(stored: string, context = ''): string {
    const [, keyId = '', nonceText = '', sealedText = ''] = STORED.exec(stored) ?? [];
    if (keyId === '') throw new SecretsError('malformed', `A stored secret${about(context)} is not in the form v1:<key id>:<nonce>:<ciphertext>.`);
    const key = this.#keys.get(keyId);
    if (!key) {
      throw new SecretsError(
        'unknown-key',
        `A stored secret${about(context)} was encrypted with key "${keyId}", which is not configured (${this.origin}); add that key after the current one.`,
      );
    }
    const sealed = Buffer.from(sealedText, 'base64url');
    try {
      const decipher = createDecipheriv('aes-256-gcm', key.material(), Buffer.from(nonceText, 'base64url'), { authTagLength: TAG_BYTES });
      decipher.setAAD(additionalData(keyId, context));
      decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
      return Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretsError(
        'undecryptable',
        `A stored secret${about(context)} does not decrypt with key "${keyId}": the key is not the one it was made with, or the value was altered or moved.`,
      );
    }
  }

  /** The id of the key a stored value was sealed with (its form is checked, not its seal). */
  keyIdOf(stored: string): string {
    const keyId = STORED.exec(stored)?.[1];
    if (keyId === undefined) throw new SecretsError('malformed', 'A stored secret is not in the form v1:<key id>:<nonce>:<ciphertext>.');
    return keyId;
  }

  /** The prefix every value sealed with `keyId` starts with (for counting them in SQL). */
  static prefixOf(keyId: string): string {
    return `${VERSION}:${keyId}:`;
  }
}

function about(context: string): string {
  return context === '' ? '' : ` (${context})`;
}
