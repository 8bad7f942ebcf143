import type { Executor } from '../db/tables.js';

export interface AuditRow {
  id: number;
  occurred_at: string;
  action: string;
  actor_user_id: number | null;
  actor_email: string | null;
  credential_kind: string | null;
  credential_id: string | null;
  method: string | null;
  route: string | null;
  target: string;
  status: number | null;
  request_id: string | null;
  details: string;
}

export type NewAuditRow = Omit<AuditRow, 'id'> & { tenant_id: number };

/** The only write there is: audit events are inserted, never updated or deleted (migration 0019). */
export async function insertAuditEvent(db: Executor, row: NewAuditRow): Promise<void> {
  await db.insertInto('audit_events').values(row).execute();
}

export interface AuditFilter {
  actorUserId?: number | undefined;
  action?: string | undefined;
  route?: string | undefined;
  method?: string | undefined;
  /** Inclusive bounds on `occurred_at` (ISO 8601 UTC, as stored). */
  since?: string | undefined;
  until?: string | undefined;
}

/** Newest first, keyset on the id: `beforeId` is the last id of the previous page. */
export async function listAuditEvents(db: Executor, tenantId: number, filter: AuditFilter, beforeId: number | undefined, limit: number): Promise<AuditRow[]> {
  let query = db
    .selectFrom('audit_events')
    .select([
      'id',
      'occurred_at',
      'action',
      'actor_user_id',
      'actor_email',
      'credential_kind',
      'credential_id',
      'method',
      'route',
      'target',
      'status',
      'request_id',
      'details',
    ])
    .where('tenant_id', '=', tenantId);
  if (beforeId !== undefined) query = query.where('id', '<', beforeId);
  if (filter.actorUserId !== undefined) query = query.where('actor_user_id', '=', filter.actorUserId);
  if (filter.action !== undefined) query = query.where('action', '=', filter.action);
  if (filter.route !== undefined) query = query.where('route', '=', filter.route);
  if (filter.method !== undefined) query = query.where('method', '=', filter.method);
  if (filter.since !== undefined) query = query.where('occurred_at', '>=', filter.since);
  if (filter.until !== undefined) query = query.where('occurred_at', '<=', filter.until);
  return query.orderBy('id', 'desc').limit(limit).execute();
}
