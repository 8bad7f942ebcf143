import { parentPort, workerData } from 'node:worker_threads';
import { PGlite, type PGliteOptions } from '@electric-sql/pglite';

/**
 * A model's catalog (sql-api.catalog.ts) in a thread of its own: PGlite runs PostgreSQL in
 * WebAssembly on the thread that calls it, so a slow catalog statement holds this thread, never
 * the server's event loop, and the thread can be stopped.
 *
 * Asked `{id, payload}` (frontend messages), it runs them in a read-only transaction rolled back at
 * once and answers `{id, output}` (the backend messages), or `{id, error}`.
 */
const { ddl, pgliteWasmModule, initdbWasmModule } = workerData as { ddl: string } & Required<Pick<PGliteOptions, 'pgliteWasmModule' | 'initdbWasmModule'>>;
const port = parentPort!;

const BEGIN = query('BEGIN READ ONLY');
const ROLLBACK = query('ROLLBACK');

function query(sql: string): Uint8Array {
  const text = Buffer.from(`${sql}\0`, 'utf8');
  const message = Buffer.alloc(5 + text.length);
  message.write('Q', 0, 'latin1');
  message.writeInt32BE(4 + text.length, 1);
  text.copy(message, 5);
  return message;
}

try {
  // The WebAssembly the server compiled once: instantiated here, not compiled again.
  // The catalog holds no rows: PostgreSQL's default 128 MB of shared buffers would be memory for nothing.
  const db = await PGlite.create({ pgliteWasmModule, initdbWasmModule, postgresqlconf: ['shared_buffers = 8MB'] });
  if (ddl !== '') await db.exec(ddl);
  port.on('message', (request: { id: number; payload: Uint8Array }) => {
    void (async () => {
      try {
        await db.execProtocolRaw(BEGIN);
        try {
          const output = await db.execProtocolRaw(request.payload);
          port.postMessage({ id: request.id, output });
        } finally {
          await db.execProtocolRaw(ROLLBACK);
        }
      } catch (error) {
        port.postMessage({ id: request.id, error: error instanceof Error ? error.message : String(error) });
      }
    })();
  });
  port.postMessage({ ready: true });
} catch (error) {
  port.postMessage({ ready: false, error: error instanceof Error ? error.message : String(error) });
}
