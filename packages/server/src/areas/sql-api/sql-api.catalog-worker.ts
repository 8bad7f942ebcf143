import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';

/**
 * A model's catalog (sql-api.catalog.ts) in a thread of its own: PGlite runs PostgreSQL in
 * WebAssembly on the thread that calls it, so a slow catalog statement holds this thread, never
 * the server's event loop, and the thread can be stopped.
 *
 * Asked `{id, payload}` (frontend messages), it runs them in a read-only transaction rolled back at
 * once and answers `{id, output}` (the backend messages), or `{id, error}`.
 */
const { ddl } = workerData as { ddl: string };
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
  const db = await PGlite.create();
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
