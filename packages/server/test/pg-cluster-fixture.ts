import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

const BIN = '/usr/lib/postgresql/15/bin';

/** The local PostgreSQL the tests use; the server's own cluster in these tests, whichever store it runs on. */
export const LOCAL_PG = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * A throwaway PostgreSQL cluster of its own (initdb, trust auth, user postgres) on a free loopback
 * port: a data source that is not the server's cluster, on the same host. PostgreSQL refuses to
 * run as root, so as root it runs as the postgres user. `settings` are passed as `-c name=value`
 * (the fuzzer's `log_statement=all`); `log` is the file the server logs to.
 */
export async function startSecondCluster(settings: Record<string, string> = {}): Promise<{ url: string; port: number; log: string; stop(): void }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mapi-pg-'));
  const data = path.join(dir, 'data');
  const asPostgres = (command: string, args: string[]) => {
    const [file, argv] = process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
    execFileSync(file, argv, { stdio: 'pipe' });
  };
  if (process.getuid?.() === 0) execFileSync('chown', ['postgres', dir]);
  asPostgres(`${BIN}/initdb`, ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  const port = await freePort();
  const extra = Object.entries(settings)
    .map(([name, value]) => ` -c ${name}=${value}`)
    .join('');
  asPostgres(`${BIN}/pg_ctl`, [
    '-D',
    data,
    '-l',
    path.join(dir, 'log'),
    '-w',
    '-o',
    `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off${extra}`,
    'start',
  ]);
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    log: path.join(dir, 'log'),
    stop() {
      try {
        asPostgres(`${BIN}/pg_ctl`, ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/** Whether this host has the PostgreSQL 15 binaries startSecondCluster runs. */
export const canStartSecondCluster = (): boolean => fs.existsSync(`${BIN}/initdb`) && fs.existsSync(`${BIN}/pg_ctl`);
