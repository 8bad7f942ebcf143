import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { LightMyRequestResponse } from 'fastify';
import { buildApp, type App } from '../../src/app.js';
import { generateApiKey } from '../../src/areas/api-keys/key-format.js';
import { bootstrapDefaultTenant, createTenant } from '../../src/areas/tenants/tenants.service.js';
import type { Dialect } from '../../src/db/database.js';
import type { Role } from '../../src/db/tables.js';
import { systemClock } from '../../src/time.js';
import { startModelProvider, type ModelProvider } from '../../test/fixtures/model-provider.js';
import { createTestStore, type TestStore } from '../../test/harness.js';
import { Masked } from '../../src/mail/index.js';
import { ATTRIBUTE_NAMES } from './scim.js';
import type { PoolName, PoolRef } from './values.js';

/**
 * The world the fuzzer talks to: an app built in-process on a fresh store (rate limiting off), a
 * tenant seeded through the API with users of every role, keys (unscoped and scoped to one
 * deployment), deployments with folder trees, workbooks, reports, groups, policies and user
 * attributes, and a second tenant on a host of its own whose ids are sent to the first.
 */

export type CredentialName =
  'admin' | 'developer' | 'explorer' | 'viewer' | 'scopedDeveloper' | 'scopedAdmin' | 'none' | 'badKey' | 'otherTenantKey' | 'otherTenantHost' | 'creatorEmbed';
export const OTHER_HOST = 'other.example.com';

interface Row {
  id: number;
  deploymentId?: number;
  name?: string;
}
type Table =
  | 'deployments'
  | 'folders'
  | 'workbooks'
  | 'reports'
  | 'users'
  | 'groups'
  | 'policies'
  | 'api_keys'
  | 'user_attributes'
  | 'scim_users'
  | 'scim_groups'
  | 'agents';
const TABLES: Table[] = [
  'deployments',
  'folders',
  'workbooks',
  'reports',
  'users',
  'groups',
  'policies',
  'api_keys',
  'user_attributes',
  'scim_users',
  'scim_groups',
  'agents',
];
/** SCIM tables are keyed by the user's or group's id. */
const ID_COLUMN: Partial<Record<Table, 'user_id' | 'group_id'>> = { scim_users: 'user_id', scim_groups: 'group_id' };
const POOL_TABLES: Record<PoolName, Table[]> = {
  deployment: ['deployments'],
  folder: ['folders'],
  workbook: ['workbooks'],
  report: ['reports'],
  item: ['folders', 'workbooks', 'reports'],
  user: ['users'],
  scimUser: ['scim_users'],
  group: ['groups'],
  scimGroup: ['scim_groups'],
  principal: ['users', 'groups'],
  resource: ['deployments', 'folders', 'workbooks', 'reports'],
  policy: ['policies'],
  apiKey: ['api_keys'],
  attribute: ['user_attributes'],
  agent: ['agents'],
  any: TABLES.filter((t) => !ID_COLUMN[t]),
};
const POOL_CAP = 3000;

interface Credential {
  key: string | null;
  host?: string;
  scheme?: string;
  userId?: number;
  keyId?: number;
  role?: Role;
}

export class World {
  readonly credentials = new Map<CredentialName, Credential>();
  private own = new Map<Table, Row[]>();
  private other = new Map<Table, Row[]>();
  /** The deployment the scoped keys are limited to. */
  scopedDeployment = 0;
  otherTenantId = 0;
  /** The last error the app logged (5xx causes), cleared before each request. */
  lastLoggedError: string | undefined;

  private constructor(
    readonly app: App,
    readonly store: TestStore,
    readonly tenantId: number,
    readonly dialect: Dialect,
    private readonly dataSources: string,
    private readonly provider: ModelProvider,
  ) {}

  static async create(dialect: Dialect, log: (line: string) => void): Promise<World> {
    const store = await createTestStore(dialect);
    const adminKey = generateApiKey();
    const boot = await bootstrapDefaultTenant(store, systemClock, 'admin@example.com', adminKey);
    const holder: { world?: World } = {};
    const stream = {
      write(line: string) {
        const world = holder.world;
        if (!world) return;
        try {
          const entry = JSON.parse(line) as { msg?: string; err?: { message?: string; stack?: string } };
          const frame = entry.err?.stack
            ?.split('\n')
            .find((l) => l.includes('/src/'))
            ?.trim();
          world.lastLoggedError = `${entry.err?.message ?? entry.msg ?? ''}${frame ? ` (${frame})` : ''}`.slice(0, 300);
        } catch {
          world.lastLoggedError = line.slice(0, 300);
        }
      },
    };
    // A data-sources directory, as a server configured for usage analytics has (DATASOURCES_DIR);
    // no runtimes: deployments made by the traffic run none.
    const dataSources = fs.mkdtempSync(path.join(os.tmpdir(), 'mapi-fuzz-world-'));
    // A model provider (the tests' stand-in, which answers every request with a fixed text), so
    // the agents' answering routes run to a stored answer instead of stopping at "no provider".
    const provider = await startModelProvider();
    const app = await buildApp({
      store,
      baseDomain: null,
      tenantCacheMs: 0,
      rateLimitPerMinute: 0,
      corsOrigins: [],
      logger: { level: 'error', stream },
      runtime: { driver: 'none', dataSourcesDir: dataSources },
      aiProvider: { baseUrl: provider.baseUrl, model: 'fuzz-model', apiKey: new Masked('sk-fuzz') },
    });
    const world = new World(app, store, boot.tenant.id, dialect, dataSources, provider);
    holder.world = world;
    world.credentials.set('admin', { key: adminKey, userId: boot.admin.id, role: 'ADMIN' });
    await world.seed(log);
    return world;
  }

  async close(): Promise<void> {
    await this.app.close();
    await this.provider.close();
    await this.store.destroy();
    fs.rmSync(this.dataSources, { recursive: true, force: true });
  }

  /** A request as the seeding admin (or `as`), failing loudly: the seed must hold. */
  private async call(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, body?: unknown, as: CredentialName = 'admin'): Promise<any> {
    const c = this.credentials.get(as)!;
    const response: LightMyRequestResponse = await this.app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${c.key}`, ...(c.host ? { host: c.host } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
    if (response.statusCode >= 300) throw new Error(`seed: ${method} ${url} answered ${response.statusCode}: ${response.body.slice(0, 300)}`);
    return response.body ? response.json() : undefined;
  }

  /** Like call, but a failure is only reported: the fuzzer should still run when one seed step is broken. */
  private async tryCall(log: (line: string) => void, ...args: Parameters<World['call']>): Promise<any> {
    try {
      return await this.call(...args);
    } catch (error) {
      log(`warning: ${(error as Error).message}`);
      return undefined;
    }
  }

  private async userWithKey(role: Role, name: string): Promise<Credential> {
    const user = await this.call('POST', '/api/v1/users', { email: `${name}@example.com`, firstName: name, role });
    const made = await this.call('POST', '/api/v1/api-keys', { name: `fuzz ${name}`, userId: user.id });
    return { key: made.key, userId: user.id, keyId: made.id, role };
  }

  private async seed(log: (line: string) => void): Promise<void> {
    const admin = this.credentials.get('admin')!;
    for (const role of ['DEVELOPER', 'EXPLORER', 'VIEWER'] as const)
      this.credentials.set(role.toLowerCase() as CredentialName, await this.userWithKey(role, role.toLowerCase()));
    const second = await this.userWithKey('ADMIN', 'second-admin');
    for (let i = 0; i < 6; i++)
      await this.call('POST', '/api/v1/users', { email: `extra${i}@example.com`, role: (['ADMIN', 'DEVELOPER', 'EXPLORER', 'VIEWER'] as const)[i % 4] });

    const developer = this.credentials.get('developer')!;
    const explorer = this.credentials.get('explorer')!;
    const viewer = this.credentials.get('viewer')!;
    await this.call('PUT', '/api/v1/ai/settings', { enabled: true });
    const group = await this.call('POST', '/api/v1/groups', { name: 'analysts', description: 'seeded' });
    await this.call('POST', `/api/v1/groups/${group.id}/members`, { userIds: [explorer.userId, viewer.userId] });
    await this.call('POST', '/api/v1/groups', { name: 'empty group' });

    this.scopedDeployment = await this.seedDeployment('main', log);
    await this.seedDeployment('second', log);
    const third = await this.seedDeployment('third', log);
    await this.call('POST', '/api/v1/policies', {
      principal: { type: 'USER', id: developer.userId },
      resource: { type: 'DEPLOYMENT', id: third },
      access: 'MANAGE',
    });
    const scoped = await this.call('POST', '/api/v1/api-keys', { name: 'scoped', userId: developer.userId, deploymentIds: [this.scopedDeployment] });
    this.credentials.set('scopedDeveloper', { key: scoped.key, keyId: scoped.id, userId: developer.userId, role: 'DEVELOPER' });
    const scopedAdmin = await this.call('POST', '/api/v1/api-keys', { name: 'scoped admin', userId: second.userId, deploymentIds: [this.scopedDeployment] });
    this.credentials.set('scopedAdmin', { key: scopedAdmin.key, keyId: scopedAdmin.id, userId: second.userId, role: 'ADMIN' });
    this.credentials.set('none', { key: null });
    this.credentials.set('badKey', { key: `mapi_${'0'.repeat(40)}` });
    await this.seedCreatorSession(log);
    await this.call('POST', '/api/v1/policies', {
      principal: { type: 'GROUP', id: group.id },
      resource: { type: 'DEPLOYMENT', id: this.scopedDeployment },
      access: 'VIEW',
    });
    await this.call('POST', '/api/v1/policies', {
      principal: { type: 'USER', id: explorer.userId },
      resource: { type: 'DEPLOYMENT', id: this.scopedDeployment },
      access: 'EDIT',
    });

    for (const name of ATTRIBUTE_NAMES) {
      await this.tryCall(log, 'POST', '/api/v1/user-attributes', {
        name,
        type: name === 'level' ? 'number' : name === 'regions' ? 'string-list' : name === 'isManager' ? 'boolean' : 'string',
      });
    }
    await this.tryCall(log, 'POST', `/api/v1/user-attribute-values/${explorer.userId}`, {
      userAttributes: [
        { name: 'department', value: 'finance' },
        { name: 'level', value: 3 },
        { name: 'toString', value: 'x' },
      ],
    });
    const scimUsers: string[] = [];
    for (let i = 0; i < 3; i++) {
      const made = await this.tryCall(log, 'POST', '/api/scim/v2/Users', {
        schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
        userName: `scim${i}@example.com`,
        name: { givenName: 'Scim', familyName: `User ${i}` },
        emails: [{ value: `scim${i}@example.com`, primary: true, type: 'work' }],
        active: true,
      });
      if (made?.id) scimUsers.push(String(made.id));
    }
    await this.tryCall(log, 'POST', '/api/scim/v2/Groups', {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'],
      displayName: 'scim group',
      members: scimUsers.map((value) => ({ value })),
    });

    const other = await createTenant(this.store, systemClock, { slug: 'other', domains: [OTHER_HOST], adminEmail: 'admin@other.example.com' });
    this.otherTenantId = other.tenant.id;
    this.credentials.set('otherTenantKey', { key: other.key, userId: other.admin.id });
    this.credentials.set('otherTenantHost', { key: other.key, host: OTHER_HOST, userId: other.admin.id, role: 'ADMIN' });
    const od = await this.call('POST', '/build/api/v1/deployments/', { name: 'foreign' }, 'otherTenantHost');
    const of = await this.call('POST', `/api/v1/deployments/${od.id}/folders`, { name: 'foreign folder' }, 'otherTenantHost');
    await this.call('PUT', `/api/v1/deployments/${od.id}/workbooks/by-slug/foreign`, { name: 'foreign workbook', folderId: of.id }, 'otherTenantHost');
    await this.call('PUT', `/api/v1/deployments/${od.id}/reports/by-public-id/foreign`, { name: 'foreign report', folderId: of.id }, 'otherTenantHost');
    const ou = await this.call('POST', '/api/v1/users', { email: 'someone@other.example.com', role: 'EXPLORER' }, 'otherTenantHost');
    const og = await this.call('POST', '/api/v1/groups', { name: 'foreign group' }, 'otherTenantHost');
    await this.call(
      'POST',
      '/api/v1/policies',
      { principal: { type: 'USER', id: ou.id }, resource: { type: 'DEPLOYMENT', id: od.id }, access: 'VIEW' },
      'otherTenantHost',
    );
    await this.call('POST', '/api/v1/user-attributes', { name: 'foreignAttribute', type: 'string' }, 'otherTenantHost');
    await this.call('POST', '/api/v1/api-keys', { name: 'foreign' }, 'otherTenantHost');
    void og;
    void admin;
    await this.refresh();
  }

  /** A deployment with a folder tree five deep, siblings, workbooks and reports in and out of folders. */
  /**
   * The embed token of a creator-mode session on the main deployment (reference 4.15), whose
   * embed tenant is shared a folder there: the routes embed tokens open are fuzzed with it.
   */
  private async seedCreatorSession(log: (line: string) => void): Promise<void> {
    await this.tryCall(log, 'PUT', '/api/v1/tenant/embed-settings', { useCreatorMode: true });
    const session = await this.tryCall(log, 'POST', '/api/v1/embed/generate-session', {
      deploymentId: this.scopedDeployment,
      externalId: 'fuzz-creator',
      embedTenantName: 'fuzz-tenant',
      creatorMode: true,
      tenantGroupDefinitions: [{ name: 'fuzzers' }],
      tenantGroups: ['fuzzers'],
      userAttributeDefinitions: [{ name: 'tier', type: 'string' }],
      userAttributes: [{ name: 'tier', value: 'gold' }],
    });
    // Without a session the credential is a malformed bearer value, which every route refuses.
    this.credentials.set('creatorEmbed', { key: 'not-an-embed-token' });
    if (!session) return;
    const folder = await this.store.db.selectFrom('folders').select('id').where('deployment_id', '=', this.scopedDeployment).orderBy('id').executeTakeFirst();
    if (folder)
      await this.tryCall(log, 'PUT', `/api/v1/deployments/${this.scopedDeployment}/folders/${folder.id}/embed-access`, {
        embedTenantName: 'fuzz-tenant',
        action: 'read',
      });
    const exchanged = await this.app.inject({
      method: 'POST',
      url: '/api/v1/embed/session/token',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify(session),
    });
    if (exchanged.statusCode === 200) this.credentials.set('creatorEmbed', { key: (exchanged.json() as { token: string }).token });
    else log(`warning: the embed session exchange answered ${exchanged.statusCode}: ${exchanged.body.slice(0, 300)}`);
  }

  private async seedDeployment(name: string, log: (line: string) => void, as: CredentialName = 'admin'): Promise<number> {
    const d = await this.call('POST', '/build/api/v1/deployments/', { name: `${name} ${Date.now()}` }, as);
    const base = `/api/v1/deployments/${d.id}`;
    let parent: number | null = null;
    const folders: number[] = [];
    for (let level = 0; level < 5; level++) {
      const f: { id: number } = await this.call('POST', `${base}/folders`, { name: `level ${level}`, parentId: parent }, as);
      await this.call('POST', `${base}/folders`, { name: `sibling ${level}`, parentId: parent }, as);
      folders.push(f.id);
      parent = f.id;
    }
    for (let i = 0; i < 4; i++) {
      await this.tryCall(
        log,
        'PUT',
        `${base}/workbooks/by-slug/wb-${i}`,
        { name: `Workbook ${i}`, folderId: i === 0 ? null : folders[i % folders.length], meta: { i }, calculatedFields: {} },
        as,
      );
      await this.tryCall(
        log,
        'PUT',
        `${base}/reports/by-public-id/rep-${i}`,
        { name: `Report ${i}`, folderId: i === 0 ? null : folders[(i + 1) % folders.length], kind: 'table', spec: { mark: 'bar' } },
        as,
      );
    }
    const viewer = this.credentials.get('viewer');
    if (viewer?.userId)
      await this.tryCall(log, 'POST', '/api/v1/policies', {
        principal: { type: 'USER', id: viewer.userId },
        resource: { type: 'FOLDER', id: folders[1] },
        access: 'MANAGE',
      });
    // Agents, so the agent routes' ids name real ones (and their threads get answers).
    for (let i = 0; i < 2; i++)
      await this.tryCall(log, 'POST', `/api/v1/deployments/${d.id}/agents`, { name: `Agent ${i}`, starterPrompts: ['What sold best?'] }, as);
    return d.id;
  }

  /** Re-reads the id pools (the fuzz traffic creates and deletes rows all the time). */
  async refresh(): Promise<void> {
    for (const table of TABLES) {
      const idColumn = ID_COLUMN[table];
      if (idColumn) {
        const rows = (await this.store.db
          .selectFrom(table as 'scim_users')
          .select([idColumn as 'user_id', 'tenant_id'])
          .orderBy(idColumn as 'user_id', 'desc')
          .limit(POOL_CAP)
          .execute()) as Array<Record<string, number>>;
        const ids = (keep: (r: Record<string, number>) => boolean) => rows.filter(keep).map((r) => ({ id: Number(r[idColumn]) }));
        this.own.set(
          table,
          ids((r) => r.tenant_id === this.tenantId),
        );
        this.other.set(
          table,
          ids((r) => r.tenant_id !== this.tenantId),
        );
        continue;
      }
      let query = this.store.db.selectFrom(table as 'folders').select(['id', 'tenant_id']);
      if (table === 'folders' || table === 'workbooks' || table === 'reports' || table === 'agents') query = query.select('deployment_id') as typeof query;
      if (table === 'user_attributes') query = query.select('name') as typeof query;
      const rows = (await query
        .orderBy('id', 'desc')
        .limit(POOL_CAP * 2)
        .execute()) as Array<{ id: number; tenant_id: number; deployment_id?: number; name?: string }>;
      const mine = (r: { tenant_id: number }) => r.tenant_id === this.tenantId;
      const map = (r: (typeof rows)[number]): Row => ({
        id: Number(r.id),
        ...(r.deployment_id ? { deploymentId: Number(r.deployment_id) } : {}),
        ...(r.name ? { name: r.name } : {}),
      });
      this.own.set(table, rows.filter(mine).slice(0, POOL_CAP).map(map));
      this.other.set(
        table,
        rows
          .filter((r) => !mine(r))
          .slice(0, POOL_CAP)
          .map(map),
      );
    }
  }

  /** Names of this tenant's user attributes now (renames happen). */
  attributeNames(): string[] {
    return (this.own.get('user_attributes') ?? []).map((r) => r.name ?? '').filter(Boolean);
  }

  /** A real id for a pool reference; `deploymentId` narrows workspace rows to the request's deployment. */
  resolve(ref: PoolRef, deploymentId: number | undefined): number {
    const tables = POOL_TABLES[ref.pool];
    const gather = (source: Map<Table, Row[]>, keep: (r: Row) => boolean) => tables.flatMap((t) => (source.get(t) ?? []).filter(keep));
    let rows: Row[] = [];
    if (ref.reach === 'same') {
      rows = gather(this.own, (r) => r.deploymentId === undefined || deploymentId === undefined || r.deploymentId === deploymentId);
      if (rows.length === 0) rows = gather(this.own, () => true);
    } else if (ref.reach === 'otherDeployment') {
      rows = gather(this.own, (r) => r.deploymentId !== undefined && r.deploymentId !== deploymentId);
    } else if (ref.reach === 'otherTenant') {
      rows = gather(this.other, () => true);
    }
    if (rows.length === 0) return 9_000_000 + (ref.pick % 1000);
    return rows[ref.pick % rows.length]!.id;
  }

  /** Which deployment a workspace row of this tenant lives in (for judging cross-deployment answers). */
  deploymentOf(table: Table, id: number): number | undefined {
    return this.own.get(table)?.find((r) => r.id === id)?.deploymentId;
  }

  isOwn(table: Table, id: number): boolean {
    return (this.own.get(table) ?? []).some((r) => r.id === id);
  }

  /**
   * Puts the fuzzer's own credentials back: its users active with their roles, its keys unrevoked,
   * the scoped keys' deployment present. The traffic deactivates, demotes and revokes at random.
   */
  async heal(log: (line: string) => void): Promise<void> {
    for (const c of this.credentials.values()) {
      if (c.userId === undefined || c.role === undefined) continue;
      await this.store.db.updateTable('users').set({ deactivated_at: null, role: c.role }).where('id', '=', c.userId).execute();
    }
    const keyIds = [...this.credentials.values()].map((c) => c.keyId).filter((id): id is number => id !== undefined);
    if (keyIds.length) await this.store.db.updateTable('api_keys').set({ revoked_at: null, expires_at: null }).where('id', 'in', keyIds).execute();
    await this.store.db
      .updateTable('api_keys')
      .set({ revoked_at: null, expires_at: null })
      .where('tenant_id', '=', this.tenantId)
      .where('source', '!=', 'api')
      .execute();
    const present = await this.store.db.selectFrom('deployments').select('id').where('id', '=', this.scopedDeployment).executeTakeFirst();
    if (!present) {
      this.scopedDeployment = await this.seedDeployment('main again', log);
      const scopedIds = ['scopedDeveloper', 'scopedAdmin']
        .map((n) => this.credentials.get(n as CredentialName)?.keyId)
        .filter((id): id is number => id !== undefined);
      await this.store.db
        .updateTable('api_keys')
        .set({ deployment_ids: JSON.stringify([this.scopedDeployment]) })
        .where('id', 'in', scopedIds)
        .execute();
    }
    const deployments = await this.store.db.selectFrom('deployments').select('id').where('tenant_id', '=', this.tenantId).execute();
    if (deployments.length < 3) await this.seedDeployment('replenished', log);
  }
}

export function tableOfPool(pool: PoolName): Table | undefined {
  const tables = POOL_TABLES[pool];
  return tables.length === 1 ? tables[0] : undefined;
}
