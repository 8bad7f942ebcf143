import fs from 'node:fs/promises';
import path from 'node:path';
import { generate } from 'selfsigned';
import type { Config } from './config.js';

export interface TlsMaterial {
  key: string;
  cert: string;
  /** Where the certificate came from, for the start-up log. */
  source: string;
}

/**
 * TLS_CERT/TLS_KEY when given; otherwise a self-signed localhost certificate made once and kept
 * in DATA_DIR/tls, so restarts present the same certificate and clients can pin it.
 */
export async function loadTls(config: Config): Promise<TlsMaterial> {
  if (config.tlsCert && config.tlsKey) {
    const [cert, key] = await Promise.all([readPem(config.tlsCert, 'TLS_CERT'), readPem(config.tlsKey, 'TLS_KEY')]);
    return { cert, key, source: config.tlsCert };
  }
  const dir = path.join(config.dataDir, 'tls');
  const certPath = path.join(dir, 'localhost.crt');
  const keyPath = path.join(dir, 'localhost.key');
  try {
    const [cert, key] = await Promise.all([fs.readFile(certPath, 'utf8'), fs.readFile(keyPath, 'utf8')]);
    return { cert, key, source: certPath };
  } catch {
    const made = await selfSignedLocalhost();
    await fs.mkdir(dir, { recursive: true });
    await fs.writeFile(keyPath, made.key, { mode: 0o600 });
    await fs.writeFile(certPath, made.cert);
    return { ...made, source: `${certPath} (self-signed, created now)` };
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
