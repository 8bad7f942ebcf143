import type { Caller } from '../../access/caller.js';
import type { Store } from '../../db/database.js';
import { QUERY_TIMEOUT_TYPE } from '../../semantic-layer/protocol.js';
import { ApiError } from '../../shared/problems.js';
import type { DataApiEnvironment, DataApiGrant, DataApiService } from '../data-api/index.js';
import { DEFAULT_TENANT_SLUG } from '../tenants/index.js';
import { catalogColumns, pgType, type MetaCube } from './sql-api.catalog.js';
import type { Field } from './sql-api.protocol.js';
import { normalize } from './sql-api.sql.js';
import { branchName, tenantBySlug } from './sql-api.store.js';
import { parseEnvironmentId } from '../../runtime/environments.js';

/** Who a connection is: the environment its database names and what its password grants there. */
export interface SqlSession {
  tenant: { id: number; slug: string };
  env: DataApiEnvironment;
  grant: DataApiGrant;
}

/** A refusal as PostgreSQL sends it: SQLSTATE and message. */
export class SqlError extends Error {
  constructor(
    readonly sqlState: string,
    message: string,
  ) {
    super(message);
    this.name = 'SqlError';
  }
}

export interface SqlResult {
  fields: Field[];
  rows: Array<Array<string | null>>;
  tag: string;
}

/** Checks a REST credential (an API key) for a deployment, as the HTTP routes do; the app supplies it. */
export type KeyAuthenticator = (tenant: { id: number; slug: string }, key: string, deploymentId: number) => Promise<Caller>;

const API_KEY = /^mapi_[A-Za-z0-9]{40}$/;

/** `<deploymentId>` or `<deploymentId>/<environment id>` (production, staging-<branch id>, development-<branch id>). */
export function parseDatabase(database: string): { deploymentId: number; environmentId: string; branchId: number | null } | null {
  const match = /^([1-9][0-9]{0,15})(?:\/([a-z0-9-]+))?$/.exec(database.trim());
  const environmentId = match?.[2] ?? 'production';
  const named = match ? parseEnvironmentId(environmentId) : undefined;
  if (!match || named === undefined) return null;
  return { deploymentId: Number(match[1]), environmentId, branchId: named.kind === 'production' ? null : named.branchId };
}

/** A value of the runtime's JSON rows in PostgreSQL's text format. */
export function textValue(value: unknown, oid: number): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'boolean') return value ? 't' : 'f';
  if (oid === 1114 && typeof value === 'string') return value.replace('T', ' ').replace(/Z$/, '');
  if (oid === 16 && typeof value === 'string') return /^(t|true|1)$/i.test(value) ? 't' : 'f';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value as string | number);
}

/**
 * The SQL API's work: who a connection is (its user, database and password), the model it may see,
 * and its queries over cubes and views, run by the environment's runtime through the data API
 * (the runtime translates the SQL, applies the caller's access policies and limits).
 */
export function sqlApiService(store: Store, dataApi: DataApiService, options: { baseDomain: string | null; authenticateKey: KeyAuthenticator }) {
  const { db } = store;

  async function tenantOf(user: string): Promise<{ id: number; slug: string } | null> {
    const at = user.lastIndexOf('@');
    // `name@tenant-slug` names the tenant; without BASE_DOMAIN the default tenant answers any user.
    if (at !== -1 && options.baseDomain !== null) return tenantBySlug(db, user.slice(at + 1).toLowerCase());
    if (options.baseDomain !== null) return null;
    return tenantBySlug(db, DEFAULT_TENANT_SLUG);
  }

  async function ask(
    session: SqlSession,
    request: { method: string; path: string; body: unknown },
  ): Promise<{ status: number; body: Record<string, unknown> }> {
    let status: number;
    let body: Record<string, unknown>;
    // A query still running answers Cube's "Continue wait"; asked again, the request joins the same run.
    do {
      let answer;
      try {
        answer = await dataApi.forward(session.env, session.grant, { ...request, query: '', requestId: `sql-${session.env.row.id}-${Date.now()}` });
      } catch (error) {
        if (error instanceof ApiError)
          throw new SqlError(error.code === 'FORBIDDEN' ? '42501' : error.code === 'RUNTIME_UNAVAILABLE' ? '57P03' : '58000', error.detail);
        throw error;
      }
      status = answer.status;
      try {
        body = JSON.parse(answer.body.toString('utf8')) as Record<string, unknown>;
      } catch {
        throw new SqlError('58000', 'The runtime answered something other than JSON.');
      }
    } while (status === 200 && body.error === 'Continue wait');
    return { status, body };
  }

  return {
    /** The session a start-up's user, database and password open; null when they do not (the client gets 28P01). */
    async login(user: string, database: string, password: string): Promise<SqlSession | null> {
      // The database names the deployment; a client that names none there may name it as the user (`12`, `12/staging-3@acme`).
      const target = parseDatabase(database) ?? parseDatabase(user.includes('@') && options.baseDomain !== null ? user.slice(0, user.lastIndexOf('@')) : user);
      if (target === null || password === '') return null;
      const tenant = await tenantOf(user);
      if (tenant === null) return null;
      let branch: string | null = null;
      if (target.branchId !== null) {
        branch = await branchName(db, target.deploymentId, target.branchId);
        if (branch === null) return null;
      }
      try {
        if (API_KEY.test(password)) {
          const caller = await options.authenticateKey(tenant, password, target.deploymentId);
          const { env, grant } = await dataApi.authorizeCaller(caller, target.deploymentId, branch);
          if (env.environmentId !== target.environmentId) return null;
          return { tenant, env, grant };
        }
        const env = await dataApi.environment(tenant, target.deploymentId, branch);
        if (env.environmentId !== target.environmentId) return null;
        return { tenant, env, grant: await dataApi.authorizeToken(tenant, env, password) };
      } catch (error) {
        if (error instanceof ApiError) return null;
        throw error;
      }
    },

    /** The cubes and views the caller may see (`/v1/meta`); null when its token may not read the model. */
    async meta(session: SqlSession): Promise<MetaCube[] | null> {
      try {
        const { status, body } = await ask(session, { method: 'GET', path: 'meta', body: undefined });
        return status === 200 && Array.isArray(body.cubes) ? (body.cubes as MetaCube[]) : null;
      } catch (error) {
        if (error instanceof SqlError && error.sqlState === '42501') return null;
        throw error;
      }
    },

    /** A SELECT over cubes and views, run by the runtime: columns typed from its annotation, values as text. */
    async query(session: SqlSession, sql: string, meta: MetaCube[] | null): Promise<SqlResult> {
      // `SELECT *` lists the dimensions: a row per distinct combination, no measure to group.
      const tableColumns = new Map((meta ?? []).map((cube) => [cube.name.toLowerCase(), catalogColumns({ ...cube, measures: [] }).map(([name]) => name)]));
      const { status, body } = await ask(session, { method: 'POST', path: 'sql', body: { query: normalize(sql, tableColumns) } });
      if (status === 403) throw new SqlError('42501', String(body.error ?? 'The query uses members your access policies exclude.'));
      // A statement stopped at QUERY_TIMEOUT_MS is PostgreSQL's query_canceled, as its own statement_timeout is.
      if (status === 400 && body.type === QUERY_TIMEOUT_TYPE) throw new SqlError('57014', String(body.error));
      if (status !== 200) throw new SqlError(status === 400 ? '42000' : '58000', String(body.error ?? `The runtime answered ${status}.`));
      const data = (body.data as Array<Record<string, unknown>> | undefined) ?? [];
      const columns = ((body.annotation as { columns?: Record<string, { member?: string; kind?: string; type?: string }> } | undefined)?.columns ??
        {}) as Record<string, { member?: string; kind?: string; type?: string }>;
      const names = Object.keys(columns).length > 0 ? Object.keys(columns) : Object.keys(data[0] ?? {});
      const aggTypes = new Map<string, string | undefined>();
      for (const cube of meta ?? []) for (const m of cube.measures ?? []) aggTypes.set(m.name, m.aggType);
      const fields = names.map((name) => {
        const c = columns[name] ?? {};
        return {
          name,
          oid: pgType({ type: c.type ?? 'string', aggType: c.member === undefined ? undefined : aggTypes.get(c.member) }, c.kind === 'measure').oid,
        };
      });
      const rows = data.map((row) => fields.map((f) => textValue(row[f.name], f.oid)));
      return { fields, rows, tag: `SELECT ${rows.length}` };
    },
  };
}
export type SqlApiService = ReturnType<typeof sqlApiService>;
