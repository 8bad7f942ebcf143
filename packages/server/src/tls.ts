import fs from 'node:fs/promises';
import path from 'node:path';
import { createSecureContext } from 'node:tls';
import { generate } from 'selfsigned';
import type { Config } from './config.js';

export interface TlsMaterial {
  key: string;
  cert: string;
  /** Where the certificate came from, for the start-up log. */
  source: string;
  /** The self-signed certificate's file, which clients must be told to trust; null for TLS_CERT. */
  selfSigned: string | null;
}

/** Secrets the server writes are for its own user only; the directories that hold them too. */
export const SECRET_FILE_MODE = 0o600;
export const SECRET_DIR_MODE = 0o700;

/**
 * TLS_CERT/TLS_KEY when given; otherwise a self-signed localhost certificate made once and kept
 * in DATA_DIR/tls (mode 0700, the key 0600), so restarts present the same certificate and clients
 * can pin it. The pair is checked here, before anything else starts.
 */
export async function loadTls(config: Config): Promise<TlsMaterial> {
  if (config.tlsCert && config.tlsKey) {
    const [cert, key] = await Promise.all([readPem(config.tlsCert, 'TLS_CERT'), readPem(config.tlsKey, 'TLS_KEY')]);
    checkPair(cert, key, `TLS_CERT (${config.tlsCert}) and TLS_KEY (${config.tlsKey})`);
    return { cert, key, source: config.tlsCert, selfSigned: null };
  }
  const dir = path.join(config.dataDir, 'tls');
  const files = { cert: path.join(dir, 'localhost.crt'), key: path.join(dir, 'localhost.key') };
  const kept = await readPair(files);
  if (kept) {
    await restrict(dir, files.key);
    checkPair(kept.cert, kept.key, `${files.cert} and ${files.key} (delete both to have new ones made)`);
    return { ...kept, source: files.cert, selfSigned: files.cert };
  }
  // Every directory this creates (DATA_DIR too, on a first start) is the server user's alone.
  await fs.mkdir(dir, { recursive: true, mode: SECRET_DIR_MODE });
  await fs.chmod(dir, SECRET_DIR_MODE);
  // Servers starting together on a new DATA_DIR must agree on one pair, not each write half of theirs.
  return withLock(path.join(dir, '.creating'), async () => {
    const made = await readPair(files);
    if (made) return { ...made, source: files.cert, selfSigned: files.cert };
    const fresh = await selfSignedLocalhost();
    await writeAtomically(files.key, fresh.key, SECRET_FILE_MODE);
    await writeAtomically(files.cert, fresh.cert, 0o644);
    return { ...fresh, source: `${files.cert} (self-signed, created now)`, selfSigned: files.cert };
  });
}

async function readPair(files: { cert: string; key: string }): Promise<{ cert: string; key: string } | null> {
  try {
    const [cert, key] = await Promise.all([fs.readFile(files.cert, 'utf8'), fs.readFile(files.key, 'utf8')]);
    return { cert, key };
  } catch {
    return null;
  }
}

/** A reader never sees a half-written file: write beside it, then rename over. */
async function writeAtomically(file: string, content: string, mode: number): Promise<void> {
  const temporary = `${file}.${process.pid}.tmp`;
  await fs.writeFile(temporary, content, { mode });
  // The umask can only take bits away, but the mode must be exactly this whatever it is.
  await fs.chmod(temporary, mode);
  await fs.rename(temporary, file);
}

/** A key kept from an earlier version, or copied in with looser modes, is tightened on start. */
async function restrict(dir: string, keyFile: string): Promise<void> {
  for (const [file, mode] of [
    [dir, SECRET_DIR_MODE],
    [keyFile, SECRET_FILE_MODE],
  ] as const) {
    const stat = await fs.stat(file);
    if ((stat.mode & 0o777) !== mode) await fs.chmod(file, mode);
  }
}

/** A certificate and key that do not belong together would fail at listen; say which files instead. */
function checkPair(cert: string, key: string, what: string): void {
  try {
    createSecureContext({ cert, key });
  } catch (error) {
    throw new Error(`${what} are not a usable certificate and private key: ${(error as Error).message}`, { cause: error });
  }
}

/** Runs `fn` holding a lock directory (mkdir is atomic); a lock left by a crashed start expires. */
async function withLock<T>(lockDir: string, fn: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      await fs.mkdir(lockDir);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const held = await fs.stat(lockDir).catch(() => null);
      if (held && Date.now() - held.mtimeMs > 10_000) await fs.rm(lockDir, { recursive: true, force: true });
      else await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
  try {
    return await fn();
  } finally {
    await fs.rm(lockDir, { recursive: true, force: true });
  }
}

export async function selfSignedLocalhost(): Promise<{ key: string; cert: string }> {
  const notAfterDate = new Date();
  notAfterDate.setFullYear(notAfterDate.getFullYear() + 5);
  const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notAfterDate,
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 2, value: '*.localhost' },
          { type: 7, ip: '127.0.0.1' },
          { type: 7, ip: '::1' },
        ],
      },
    ],
  });
  return { key: pems.private, cert: pems.cert };
}

async function readPem(file: string, name: string): Promise<string> {
  try {
    const pem = await fs.readFile(file, 'utf8');
    if (!pem.includes('-----BEGIN')) throw new Error('not PEM');
    return pem;
  } catch (error) {
    throw new Error(`${name} (${file}) could not be read as a PEM file: ${(error as Error).message}`, { cause: error });
  }
}
