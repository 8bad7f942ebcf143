import { afterAll, beforeAll } from 'vitest';
import type { Dialect } from '../src/db/database.js';
import { generateApiKey } from '../src/areas/api-keys/key-format.js';
import { exited, type ServerEnv, serverEnv } from './server-env.js';
import { startServerProcess, type HttpAnswer, type ServerProcess } from './server-process.js';

/**
 * Real server processes that a test kills (kill -9) in the middle of a job and replaces: one
 * DATA_DIR (and PostgreSQL schema) for all of them, an admin key they share, and job timings
 * short enough that the replacement notices the dead process quickly. Call inside `describe`:
 * it registers the hooks that start the first process and stop every one.
 */
export interface KilledServers {
  env(): ServerEnv;
  adminKey: string;
  /** The process started before the tests. */
  first(): ServerProcess;
  /** Kills `server` with SIGKILL, waits for it to be gone, and starts another on the same data. */
  killAndReplace(server: ServerProcess): Promise<ServerProcess>;
  /** The answer's body, or an error naming `what` when it is not a 200 or 201. */
  ok(answer: HttpAnswer, what: string): Record<string, any>;
  /** GETs `url` until `done` holds of its body (a condition, polled), or fails naming `what`. */
  until(server: ServerProcess, url: string, done: (body: Record<string, any>) => boolean, what: string, timeoutMs?: number): Promise<Record<string, any>>;
}

export function killedServers(dialect: Dialect): KilledServers {
  let env: ServerEnv | undefined;
  let servers: ServerProcess[] = [];
  const adminKey = generateApiKey();
  const vars = () => ({
    ...(env as ServerEnv).env,
    ADMIN_API_KEY: adminKey,
    RATE_LIMIT_PER_MINUTE: '0',
    JOBS_HEARTBEAT_MS: '300',
    JOBS_STALE_AFTER_MS: '1500',
  });
  const start = async () => {
    const server = await startServerProcess(vars(), (env as ServerEnv).dataDir);
    servers.push(server);
    return server;
  };

  // A server process's first start (migrations, TLS material) is slow on a loaded machine.
  beforeAll(async () => {
    env = await serverEnv(dialect);
    await start();
  }, 180_000);
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    servers = [];
    await env?.destroy();
  });

  const ok = (answer: HttpAnswer, what: string) => {
    if (answer.status !== 200 && answer.status !== 201) throw new Error(`${what}: ${answer.status} ${answer.text}`);
    return answer.body as Record<string, any>;
  };

  return {
    env: () => env as ServerEnv,
    adminKey,
    first: () => servers[0] as ServerProcess,
    async killAndReplace(server) {
      server.child.kill('SIGKILL');
      await exited(server.child);
      return start();
    },
    ok,
    async until(server, url, done, what, timeoutMs = 90_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const body = ok(await server.get(url, adminKey), what);
        if (done(body)) return body;
        if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(body)}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
  };
}
