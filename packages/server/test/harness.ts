import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { buildApp, type App, type AppOptions } from '../src/app.js';
import { insertKey } from '../src/areas/api-keys/api-keys.store.js';
import { generateApiKey } from '../src/areas/api-keys/key-format.js';
import { bootstrapDefaultTenant, createTenant } from '../src/areas/tenants/tenants.service.js';
import { insertUser } from '../src/areas/users/users.store.js';
import { migrate, openStore, type Dialect, type QueryLog, type Store, type StoreOptions } from '../src/db/database.js';
import type { Access, PrincipalType, ResourceType, Role } from '../src/db/tables.js';
import type { Secrets } from '../src/secrets/index.js';
import { systemClock } from '../src/time.js';
import { createSchemaSql, sqlOn } from './pg-template.js';

/**
 * Test harness. Every storage test runs on SQLite, and on PostgreSQL when DATABASE_URL is set.
 * Each store is fresh: a temporary SQLite file, or a PostgreSQL schema of its own (cloned from a
 * migrated template, pg-template.ts), so test files run in parallel without seeing each other's rows.
 */
/** The runtime's compiled program, built by the global setup (vitest.build.ts) before any test runs. */
export const COMPILED_RUNTIME = fileURLToPath(new URL('../dist/semantic-layer/main.js', import.meta.url));

export const DIALECTS: Dialect[] = process.env.DATABASE_URL ? ['sqlite', 'postgres'] : ['sqlite'];

/**
 * The store for files whose behaviour cannot depend on it, run on SQLite only: HTTP shapes (CORS,
 * input hardening, the OpenAPI document, published problem codes, SCIM's URLs, slow clients).
 * docs/maintainers/tests.md lists them.
 */
export const STORE_INDEPENDENT: Dialect[] = ['sqlite'];

export interface TestStore extends Store {
  /** Closes the store and drops its data. */
  destroy(): Promise<void>;
  /** Options that open another connection to the same data (a second server process). */
  reopen(): Store;
  /** What `reopen` opens, for a child process to open the same data. */
  options: StoreOptions;
}

export async function createTestStore(dialect: Dialect, log?: QueryLog): Promise<TestStore> {
  if (dialect === 'sqlite') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mapi-test-'));
    const file = path.join(dir, 'test.sqlite');
    const store = openStore({ dialect: 'sqlite', file, ...(log ? { log } : {}) });
    await migrate(store);
    return {
      ...store,
      options: { dialect: 'sqlite', file },
      reopen: () => openStore({ dialect: 'sqlite', file }),
      async destroy() {
        await store.close();
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error('DATABASE_URL is not set');
  const schema = `test_${randomBytes(6).toString('hex')}`;
  await sqlOn(url, createSchemaSql(schema));
  const store = openStore({ dialect: 'postgres', url, schema, poolSize: 5, ...(log ? { log } : {}) });
  await migrate(store);
  return {
    ...store,
    options: { dialect: 'postgres', url, schema, poolSize: 5 },
    reopen: () => openStore({ dialect: 'postgres', url, schema, poolSize: 5 }),
    async destroy() {
      await store.close();
      // The jobs service's pg-boss schema sits beside the store's (jobs/pg-boss-dispatch.ts).
      await sqlOn(url, `drop schema ${schema} cascade; drop schema if exists ${schema}_jobs cascade`);
    },
  };
}

export interface Request {
  method?: InjectOptions['method'];
  url: string;
  key?: string | null;
  body?: unknown;
  headers?: Record<string, string>;
  host?: string;
}

export interface Caller {
  userId: number;
  key: string;
  email: string;
}

/** A built app on a fresh store, with the default tenant's admin and helpers to call it. */
export class TestApp {
  private constructor(
    readonly app: App,
    readonly store: TestStore,
    readonly tenantId: number,
    readonly admin: Caller,
  ) {}

  static async create(
    dialect: Dialect,
    options: {
      baseDomain?: string | null;
      rateLimitPerMinute?: number;
      corsOrigins?: string[];
      log?: QueryLog;
      logger?: AppOptions['logger'];
      tenantCacheMs?: number;
      repositoriesDir?: string;
      secrets?: Secrets;
      catalog?: AppOptions['catalog'];
      runtime?: AppOptions['runtime'];
      databaseUrl?: string;
      embedUserLimit?: number;
      outbound?: AppOptions['outbound'];
      python?: AppOptions['python'];
      now?: AppOptions['now'];
      notificationMail?: AppOptions['notificationMail'];
      reportDeliveryMaxRows?: number;
      rateLimitPerIpPerMinute?: number;
      embedExchangePerIpPerMinute?: number;
      embedTokenLifetimeMs?: number;
      embedPageDir?: string;
      sqlApi?: AppOptions['sqlApi'];
      aiProvider?: AppOptions['aiProvider'];
    } = {},
  ): Promise<TestApp> {
    const store = await createTestStore(dialect, options.log);
    const adminKey = generateApiKey();
    const boot = await bootstrapDefaultTenant(store, systemClock, 'admin@example.com', adminKey);
    const app = await buildApp({
      store,
      baseDomain: options.baseDomain ?? null,
      tenantCacheMs: options.tenantCacheMs ?? 0,
      strictProblemCodes: true,
      rateLimitPerMinute: options.rateLimitPerMinute ?? 0,
      rateLimitPerIpPerMinute: options.rateLimitPerIpPerMinute ?? 0,
      corsOrigins: options.corsOrigins ?? [],
      ...(options.logger ? { logger: options.logger } : {}),
      ...(options.repositoriesDir ? { repositoriesDir: options.repositoriesDir } : {}),
      ...(options.secrets ? { secrets: options.secrets } : {}),
      startJobs: 'on-first-job',
      ...(options.catalog ? { catalog: options.catalog } : {}),
      // Runtimes run compiled (the global setup builds dist/), not through tsx: seconds less per pod start.
      ...(options.runtime ? { runtime: { entry: COMPILED_RUNTIME, ...options.runtime } } : {}),
      ...(options.databaseUrl ? { databaseUrl: options.databaseUrl } : {}),
      ...(options.now ? { now: options.now } : {}),
      ...(options.embedExchangePerIpPerMinute !== undefined ? { embedExchangePerIpPerMinute: options.embedExchangePerIpPerMinute } : {}),
      ...(options.embedUserLimit !== undefined ? { embedUserLimit: options.embedUserLimit } : {}),
      ...(options.embedTokenLifetimeMs !== undefined ? { embedTokenLifetimeMs: options.embedTokenLifetimeMs } : {}),
      ...(options.embedPageDir !== undefined ? { embedPageDir: options.embedPageDir } : {}),
      ...(options.outbound ? { outbound: options.outbound } : {}),
      ...(options.python ? { python: options.python } : {}),
      ...(options.notificationMail ? { notificationMail: options.notificationMail } : {}),
      ...(options.reportDeliveryMaxRows !== undefined ? { reportDeliveryMaxRows: options.reportDeliveryMaxRows } : {}),
      ...(options.sqlApi ? { sqlApi: options.sqlApi } : {}),
      ...(options.aiProvider ? { aiProvider: options.aiProvider } : {}),
    });
    await app.sqlApi?.listen();
    return new TestApp(app, store, boot.tenant.id, { userId: boot.admin.id, key: adminKey, email: boot.admin.email });
  }

  async close(): Promise<void> {
    await this.app.close();
    await this.store.destroy();
  }

  /** Sends a request through the full HTTP stack (no network). `key` defaults to the admin's. */
  async request({ method = 'GET', url, key, body, headers = {}, host }: Request): Promise<LightMyRequestResponse> {
    const all: Record<string, string> = { ...headers };
    const credential = key === undefined ? this.admin.key : key;
    if (credential !== null) all.authorization ??= `Bearer ${credential}`;
    if (host) all.host = host;
    return this.app.inject({ method, url, headers: all, ...(body === undefined ? {} : { payload: body as never }) });
  }

  /** Factory: a user of `role` in this tenant (or `tenantId`) with one unscoped key. */
  async user(role: Role = 'EXPLORER', options: { tenantId?: number; email?: string } = {}): Promise<Caller> {
    const at = new Date().toISOString();
    const tenantId = options.tenantId ?? this.tenantId;
    const email = options.email ?? `${role.toLowerCase()}-${randomBytes(4).toString('hex')}@example.com`;
    const user = await insertUser(this.store.db, { tenant_id: tenantId, email, first_name: null, role, deactivated_at: null, created_at: at, updated_at: at });
    const key = await this.key(user.id, { tenantId });
    return { userId: user.id, key, email };
  }

  /** Factory: an API key for a user, optionally scoped to deployments or expiring. */
  async key(userId: number, options: { tenantId?: number; deploymentIds?: number[] | null; expiresAt?: string | null } = {}): Promise<string> {
    const key = generateApiKey();
    await insertKey(this.store.db, {
      tenantId: options.tenantId ?? this.tenantId,
      userId,
      name: 'test',
      key,
      source: 'api',
      deploymentIds: options.deploymentIds ?? null,
      expiresAt: options.expiresAt ?? null,
      createdAt: new Date().toISOString(),
    });
    return key;
  }

  /** Factory: a deployment of this tenant (or `tenantId`). */
  async deployment(name = 'analytics', options: { tenantId?: number; createdBy?: number | null } = {}): Promise<number> {
    const at = new Date().toISOString();
    const row = await this.store.db
      .insertInto('deployments')
      .values({ tenant_id: options.tenantId ?? this.tenantId, name, settings: '{}', created_by: options.createdBy ?? null, created_at: at, updated_at: at })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }

  /** Factory: a group with members. */
  async group(name: string, memberIds: number[] = [], options: { tenantId?: number } = {}): Promise<number> {
    const at = new Date().toISOString();
    const tenantId = options.tenantId ?? this.tenantId;
    const row = await this.store.db
      .insertInto('groups')
      .values({ tenant_id: tenantId, name, description: null, created_at: at, updated_at: at })
      .returning('id')
      .executeTakeFirstOrThrow();
    for (const userId of memberIds) {
      await this.store.db.insertInto('group_members').values({ tenant_id: tenantId, group_id: row.id, user_id: userId, created_at: at }).execute();
    }
    return row.id;
  }

  /** Factory: an access policy. */
  async grant(principal: { type: PrincipalType; id: number }, resource: { type: ResourceType; id: number }, access: Access): Promise<number> {
    const row = await this.store.db
      .insertInto('policies')
      .values({
        tenant_id: this.tenantId,
        principal_type: principal.type,
        principal_id: principal.id,
        resource_type: resource.type,
        resource_id: resource.id,
        access,
        created_by: this.admin.userId,
        created_at: new Date().toISOString(),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }

  /** Factory: another tenant, reachable on `domains`, with its first admin. */
  async tenant(slug: string, domains: string[] = []): Promise<{ tenantId: number; admin: Caller }> {
    const made = await createTenant(this.store, systemClock, { slug, domains, adminEmail: `admin@${slug}.example.com` });
    return { tenantId: made.tenant.id, admin: { userId: made.admin.id, key: made.key, email: made.admin.email } };
  }
}

/** Asserts the RFC 9457 shape every request-level error has, and returns the body. */
export function problem(response: LightMyRequestResponse, status: number, code?: string) {
  const body = response.json() as Record<string, unknown>;
  if (response.statusCode !== status) {
    throw new Error(`expected ${status}, got ${response.statusCode}: ${response.body}`);
  }
  if (!String(response.headers['content-type']).startsWith('application/problem+json')) {
    throw new Error(`expected application/problem+json, got ${String(response.headers['content-type'])}`);
  }
  for (const field of ['type', 'title', 'status', 'detail', 'code', 'message', 'requestId']) {
    if (!(field in body)) throw new Error(`problem details lack "${field}": ${response.body}`);
  }
  if (body.message !== body.detail) throw new Error('message must equal detail');
  if (body.status !== status) throw new Error(`body status ${String(body.status)} != ${status}`);
  if (code !== undefined && body.code !== code) throw new Error(`expected code ${code}, got ${String(body.code)}: ${response.body}`);
  return body as {
    type: string;
    title: string;
    status: number;
    detail: string;
    code: string;
    message: string;
    requestId: string;
    errors?: Array<{ pointer: string; message: string }>;
    conflicts?: string[];
  };
}
