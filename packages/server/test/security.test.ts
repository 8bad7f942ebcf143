import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPENAPI_FILE } from '../scripts/write-openapi.js';
import { DIALECTS, TestApp, problem } from './harness.js';

/**
 * The shared security suite: every operation in the OpenAPI document, whatever its area, is tried
 * without a credential, with a forged one, with another tenant's, with a deactivated user's, with
 * a key scoped elsewhere, against another tenant's ids, and by a caller without permission.
 * None of these may succeed or change anything.
 */
interface Operation {
  method: string;
  path: string;
  operationId: string;
}

const doc = JSON.parse(fs.readFileSync(OPENAPI_FILE, 'utf8')) as { paths: Record<string, Record<string, { operationId: string }>> };
const operations: Operation[] = Object.entries(doc.paths).flatMap(([path, methods]) =>
  Object.entries(methods).map(([method, op]) => ({ method: method.toUpperCase(), path, operationId: op.operationId })),
);
const guarded = operations.filter((op) => op.path !== '/healthz');

interface Ids {
  deploymentId: number;
  userId: number;
  groupId: number;
  apiKeyId: number;
  policyId: number;
}

function urlFor(op: Operation, ids: Ids): string {
  return op.path.replace(/\{(\w+)\}/g, (_m, name: string) => String(ids[name as keyof Ids]));
}

/** A body the operation would accept from someone allowed to call it. */
function bodyFor(op: Operation, ids: Ids): unknown {
  const bodies: Record<string, unknown> = {
    createApiKey: { name: 'security' },
    createUser: { email: 'security-suite@example.com' },
    bulkCreateUsers: { users: [{ email: 'security-bulk@example.com' }] },
    updateUser: { firstName: 'Renamed' },
    createGroup: { name: 'security-suite' },
    updateGroup: { name: 'renamed-by-suite' },
    addGroupMembers: { userIds: [ids.userId] },
    removeGroupMembers: { userIds: [ids.userId] },
    createDeployment: { name: 'security-suite' },
    updateDeployment: { name: 'renamed-by-suite' },
    createPolicy: { principal: { type: 'USER', id: ids.userId }, resource: { type: 'DEPLOYMENT', id: ids.deploymentId }, access: 'MANAGE' },
  };
  return bodies[op.operationId];
}

describe.each(DIALECTS)('security suite over every operation (%s)', (dialect) => {
  let t: TestApp;
  let own: Ids;
  let foreign: Ids;
  let otherTenantKey: string;
  let deactivatedKey: string;
  let viewer: { key: string; userId: number };
  let scopedKey: string;

  /** Row counts and latest timestamps of every table: equal before and after means nothing changed. */
  async function fingerprint(): Promise<string> {
    const parts: string[] = [];
    for (const table of ['tenants', 'tenant_hosts', 'users', 'groups', 'group_members', 'deployments', 'api_keys', 'policies'] as const) {
      const rows = await t.store.db.selectFrom(table).selectAll().execute();
      parts.push(`${table}:${JSON.stringify(rows.map((r) => ({ ...r, last_used_at: undefined })))}`);
    }
    return parts.join('\n');
  }

  async function seed(tenantId: number, adminId: number, label: string): Promise<Ids> {
    const deploymentId = await t.deployment(`${label}-deployment`, { tenantId });
    const member = await t.user('EXPLORER', { tenantId });
    const groupId = await t.group(`${label}-group`, [member.userId], { tenantId });
    const apiKeyRow = await t.store.db.selectFrom('api_keys').select('id').where('user_id', '=', adminId).executeTakeFirstOrThrow();
    const policy = await t.store.db
      .insertInto('policies')
      .values({ tenant_id: tenantId, principal_type: 'GROUP', principal_id: groupId, resource_type: 'DEPLOYMENT', resource_id: deploymentId, access: 'VIEW', created_by: adminId, created_at: new Date().toISOString() })
      .returning('id')
      .executeTakeFirstOrThrow();
    return { deploymentId, userId: member.userId, groupId, apiKeyId: apiKeyRow.id, policyId: policy.id };
  }

  beforeAll(async () => {
    t = await TestApp.create(dialect);
    own = await seed(t.tenantId, t.admin.userId, 'own');
    const other = await t.tenant('security-other');
    otherTenantKey = other.admin.key;
    foreign = await seed(other.tenantId, other.admin.userId, 'foreign');
    const gone = await t.user('ADMIN');
    deactivatedKey = gone.key;
    await t.store.db.updateTable('users').set({ deactivated_at: new Date().toISOString() }).where('id', '=', gone.userId).execute();
    viewer = await t.user('VIEWER');
    const elsewhere = await t.deployment('elsewhere');
    scopedKey = await t.key(t.admin.userId, { deploymentIds: [elsewhere] });
  });
  afterAll(async () => t?.close());

  const credentials: Array<[string, () => Record<string, string>]> = [
    ['no credential', () => ({})],
    ['a forged key', () => ({ authorization: `Bearer mapi_${'Z'.repeat(40)}` })],
    ["another tenant's key", () => ({ authorization: `Bearer ${otherTenantKey}` })],
    ["a deactivated user's key", () => ({ authorization: `Bearer ${deactivatedKey}` })],
  ];

  it.each(guarded.flatMap((op) => credentials.map(([name, headers]) => [`${op.method} ${op.path}`, name, op, headers] as const)))(
    '%s with %s: 401, nothing changes',
    async (_label, _name, op, headers) => {
      const before = await fingerprint();
      const body = bodyFor(op, own);
      const res = await t.request({ method: op.method as never, url: urlFor(op, own), key: null, headers: headers(), ...(body === undefined ? {} : { body }) });
      problem(res, 401, 'UNAUTHENTICATED');
      expect(await fingerprint()).toBe(before);
    },
  );

  const deploymentOps = guarded.filter((op) => op.path.includes('{deploymentId}'));
  it.each(deploymentOps.map((op) => [`${op.method} ${op.path}`, op] as const))(
    '%s with a key scoped to another deployment: 403, nothing changes (spec: Authentication 4)',
    async (_label, op) => {
      const before = await fingerprint();
      const body = bodyFor(op, own);
      const res = await t.request({ method: op.method as never, url: urlFor(op, own), key: scopedKey, ...(body === undefined ? {} : { body }) });
      problem(res, 403, 'KEY_SCOPE_FORBIDDEN');
      expect(await fingerprint()).toBe(before);
    },
  );

  const idOps = guarded.filter((op) => /\{(deploymentId|userId|groupId|apiKeyId|policyId)\}/.test(op.path));
  it.each(idOps.map((op) => [`${op.method} ${op.path}`, op] as const))(
    "%s on another tenant's ids, as this tenant's admin: 404, nothing changes",
    async (_label, op) => {
      const before = await fingerprint();
      const body = bodyFor(op, own);
      const res = await t.request({ method: op.method as never, url: urlFor(op, foreign), ...(body === undefined ? {} : { body }) });
      expect(res.statusCode, res.body).toBe(404);
      problem(res, 404);
      expect(await fingerprint()).toBe(before);
    },
  );

  // A viewer without grants may read what is theirs and manage their own keys, nothing else.
  const selfService = new Set(['getSpec', 'createApiKey', 'listApiKeys', 'getCurrentUser', 'listGroups', 'getGroup', 'listDeployments', 'listPolicies']);
  const privileged = guarded.filter((op) => !selfService.has(op.operationId));
  it.each(privileged.map((op) => [`${op.method} ${op.path}`, op] as const))(
    '%s by a VIEWER without grants: refused, nothing changes',
    async (_label, op) => {
      const before = await fingerprint();
      const body = bodyFor(op, own);
      const res = await t.request({ method: op.method as never, url: urlFor(op, own), key: viewer.key, ...(body === undefined ? {} : { body }) });
      expect([403, 404], `${res.statusCode} ${res.body}`).toContain(res.statusCode);
      problem(res, res.statusCode);
      expect(await fingerprint()).toBe(before);
    },
  );
});
