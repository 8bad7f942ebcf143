import fs from 'node:fs';
import path from 'node:path';
import { generateApiKey } from '../../server/src/areas/api-keys/key-format.js';
import type { Dialect } from '../../server/src/db/database.js';
import { startServer, type RunningServer } from '../../server/src/server.js';
import { serverEnv, type ServerEnv } from '../../server/test/server-env.js';
import { createClient, unwrap, type ItemRef, type MapiClient, type NodeClientOptions, type ReportKind } from '../src/node.js';

/** Retries that finish quickly: tests assert what was retried, never how long it took. */
export const FAST_RETRY = { retries: 3, baseDelayMs: 1, maxDelayMs: 10 } as const;

/** A real mapi server listening over HTTPS on its own store, and the admin's credentials. */
export interface TestServer {
  url: string;
  /** The server's self-signed certificate, PEM: the CA a client must trust. */
  ca: string;
  /** Its key, for a test proxy that presents the same certificate. */
  key: string;
  token: string;
  /** A client of the admin, trusting `ca`, with fast retries; `overrides` replace any option. */
  client(overrides?: Partial<NodeClientOptions>): MapiClient;
  close(): Promise<void>;
}

/** Pods that start, restart and report within a second or two (reference 1.9-1.10 tests). */
export const FAST_RUNTIME = {
  driver: 'process',
  tickMs: 200,
  leaseMs: 1_000,
  healthIntervalMs: 300,
  healthTimeoutMs: 500,
  backoffBaseMs: 200,
  logFlushMs: 20,
} as const;

export interface TestServerOptions {
  /** Runs deployments' pods (off otherwise, as in the server's tests): these timings. */
  runtime?: typeof FAST_RUNTIME;
  /** More environment variables of the server (OUTBOUND_ALLOW_PRIVATE for a provider on loopback). */
  env?: Record<string, string>;
}

export async function startTestServer(dialect: Dialect, options: TestServerOptions = {}): Promise<TestServer> {
  const env: ServerEnv = await serverEnv(dialect);
  const token = generateApiKey();
  let server: RunningServer;
  try {
    // No rate limit: the bulk tests send hundreds of set-up requests in a second.
    const config = env.config({ ADMIN_API_KEY: token, RATE_LIMIT_PER_MINUTE: '0', ...options.env });
    server = await startServer(options.runtime ? { ...config, runtime: { ...config.runtime, ...options.runtime } } : config, () => undefined);
  } catch (error) {
    await env.destroy();
    throw error;
  }
  const tls = path.join(env.dataDir, 'tls');
  const ca = fs.readFileSync(path.join(tls, 'localhost.crt'), 'utf8');
  const key = fs.readFileSync(path.join(tls, 'localhost.key'), 'utf8');
  return {
    url: server.url,
    ca,
    key,
    token,
    client: (overrides = {}) => createClient({ baseUrl: server.url, token, ca, retry: FAST_RETRY, ...overrides }),
    async close() {
      await server.close();
      await env.destroy();
    },
  };
}

let unique = 0;
/** A name no other call in this process returns, so fixtures never collide on unique names. */
export function uniqueName(prefix: string): string {
  unique += 1;
  return `${prefix}-${process.pid}-${unique}`;
}

export async function createDeployment(client: MapiClient, name = uniqueName('deployment')): Promise<number> {
  return unwrap(await client.POST('/build/api/v1/deployments/', { body: { name } })).id;
}

/** Workspace content made through the client's own typed calls, as a user's script would. */
export class Workspace {
  constructor(
    readonly client: MapiClient,
    readonly deploymentId: number,
  ) {}

  static async create(client: MapiClient): Promise<Workspace> {
    return new Workspace(client, await createDeployment(client));
  }

  private get path() {
    return { deploymentId: this.deploymentId };
  }

  async folder(name = uniqueName('folder'), parentId: number | null = null): Promise<number> {
    return unwrap(await this.client.POST('/api/v1/deployments/{deploymentId}/folders', { params: { path: this.path }, body: { name, parentId } })).id;
  }

  async workbook(folderId: number | null = null, slug = uniqueName('workbook')): Promise<number> {
    return unwrap(
      await this.client.PUT('/api/v1/deployments/{deploymentId}/workbooks/by-slug/{slug}', {
        params: { path: { ...this.path, slug } },
        body: { name: slug, folderId },
      }),
    ).id;
  }

  async report(folderId: number | null = null, publicId = uniqueName('report'), kind: ReportKind = 'table'): Promise<number> {
    const body = { name: publicId, folderId, kind };
    return unwrap(
      await this.client.PUT('/api/v1/deployments/{deploymentId}/reports/by-public-id/{publicId}', { params: { path: { ...this.path, publicId } }, body }),
    ).id;
  }

  /** `count` items made `parallel` at a time; ids in creation order. */
  async many(count: number, make: (index: number) => Promise<number>, parallel = 8): Promise<number[]> {
    const ids: number[] = [];
    for (let start = 0; start < count; start += parallel) {
      const batch = Array.from({ length: Math.min(parallel, count - start) }, (_, i) => make(start + i));
      ids.push(...(await Promise.all(batch)));
    }
    return ids;
  }

  /**
   * Where every item of the deployment is, read back from the server: `folder:3` -> its parent,
   * `workbook:7` -> its folder; null at the root. An item absent from the map does not exist.
   */
  async tree(): Promise<Map<string, number | null>> {
    const where = new Map<string, number | null>();
    const folders: number[] = [];
    for await (const folder of this.client.folders.list(this.deploymentId)) {
      where.set(`folder:${folder.id}`, folder.parentId);
      folders.push(folder.id);
    }
    for (const folderId of ['root' as const, ...folders]) {
      for await (const entry of this.client.workspace.list(this.deploymentId, { folderId, types: ['WORKBOOK', 'REPORT'] })) {
        where.set(`${entry.type.toLowerCase()}:${entry.id}`, entry.folderId);
      }
    }
    return where;
  }
}

export const folderRef = (id: number): ItemRef => ({ type: 'FOLDER', id });
export const workbookRef = (id: number): ItemRef => ({ type: 'WORKBOOK', id });
export const reportRef = (id: number): ItemRef => ({ type: 'REPORT', id });
export const key = (ref: { type: string; id: number }) => `${ref.type.toLowerCase()}:${ref.id}`;
