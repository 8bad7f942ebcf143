import type { Caller } from '../access/caller.js';
import type { TenantSnapshot } from '../cache/tenant-cache.js';
import type { Executor } from '../db/tables.js';
import { timestamp, type Clock } from '../time.js';
import { insertAuditEvent, listAuditEvents, type AuditFilter, type AuditRow } from './audit.store.js';

export type { AuditFilter } from './audit.store.js';

/** A fact worth keeping about an event: ids, names, counts, kinds. Never a body, a value or a secret. */
export type AuditFact = string | number | boolean | null;

/** An event an area records explicitly: reading secrets, issuing a token, signing in. */
export interface AuditEvent {
  /** Dotted name, area first: `env-vars.read`, `token.issued`, `sign-in`. */
  action: string;
  /** The ids of what the event is about (`{deploymentId: 3}`). */
  target?: Record<string, AuditFact>;
  details?: Record<string, AuditFact>;
}

/** Who, when there is no caller yet (a sign-in): the user if known, and how they came in. */
export interface AuditActor {
  userId: number | null;
  email: string | null;
  credentialKind: string | null;
  credentialId: string | null;
}

/** A mutating request as the hook saw it. */
export interface AuditedRequest {
  method: string;
  route: string;
  params: Record<string, unknown>;
  status: number;
  requestId: string;
}

/** Whether the tenant's audit log is on (its `auditLogEnabled`), cheap per request given the snapshot. */
export type AuditEnabled = (db: Executor, tenantId: number, snapshot?: TenantSnapshot) => Promise<boolean>;

/** Names of parameters and facts that may carry a secret: their values are never stored. */
const SECRET_NAME = /token|secret|password|passwd|credential|session|private|apikey|api_key|authorization|cookie/i;
const FACT_MAX = 200;

function redacted(facts: Record<string, unknown> | undefined): string {
  const out: Record<string, AuditFact> = {};
  for (const [name, value] of Object.entries(facts ?? {})) {
    if (SECRET_NAME.test(name)) out[name] = '[REDACTED]';
    else if (value === null || typeof value === 'number' || typeof value === 'boolean') out[name] = value;
    else out[name] = String(value).slice(0, FACT_MAX);
  }
  return JSON.stringify(out);
}

function actorOf(caller: Caller): AuditActor {
  return {
    userId: caller.actor.userId,
    email: caller.actor.email,
    credentialKind: caller.actor.credentialKind ?? 'api-key',
    credentialId: String(caller.actor.keyId),
  };
}

/**
 * The tenant's audit log (DESIGN.md, `audit/`): while the tenant's `auditLogEnabled` is on, every
 * mutating request (hook.ts) and the events areas record explicitly, in the tenant's store.
 * Append-only: this service has no update or delete, and the store refuses updates.
 */
export class Audit {
  constructor(
    private readonly db: Executor,
    private readonly enabled: AuditEnabled,
    /** The app's clock: events are stamped with it. */
    private readonly now: Clock,
  ) {}

  /**
   * Records `event` for the caller if the tenant's audit log is on. `db`: the area's transaction,
   * so the event commits (or not) with what it records; the app's store otherwise.
   */
  async record(caller: Caller, event: AuditEvent, db: Executor = this.db): Promise<void> {
    if (!(await this.enabled(this.db, caller.actor.tenantId, caller.snapshot))) return;
    await this.#insert(db, caller.actor.tenantId, actorOf(caller), event, caller.requestId ?? null);
  }

  /** The same for an event without a caller (a sign-in before any credential exists). */
  async recordFor(tenantId: number, actor: AuditActor, event: AuditEvent, options: { requestId?: string; db?: Executor } = {}): Promise<void> {
    if (!(await this.enabled(this.db, tenantId))) return;
    await this.#insert(options.db ?? this.db, tenantId, actor, event, options.requestId ?? null);
  }

  /** Whatever the setting: for switching the log itself on or off, which is always kept. */
  async recordAlways(caller: Caller, event: AuditEvent, db: Executor = this.db): Promise<void> {
    await this.#insert(db, caller.actor.tenantId, actorOf(caller), event, caller.requestId ?? null);
  }

  /** One mutating request, from the hook. */
  async recordRequest(caller: Caller, request: AuditedRequest): Promise<void> {
    if (!(await this.enabled(this.db, caller.actor.tenantId, caller.snapshot))) return;
    const actor = actorOf(caller);
    await insertAuditEvent(this.db, {
      tenant_id: caller.actor.tenantId,
      occurred_at: timestamp(this.now),
      action: 'request',
      actor_user_id: actor.userId,
      actor_email: actor.email,
      credential_kind: actor.credentialKind,
      credential_id: actor.credentialId,
      method: request.method,
      route: request.route,
      target: redacted(request.params),
      status: request.status,
      request_id: request.requestId,
      details: '{}',
    });
  }

  /** A page of the tenant's events, newest first. */
  list(tenantId: number, filter: AuditFilter, beforeId: number | undefined, limit: number): Promise<AuditRow[]> {
    return listAuditEvents(this.db, tenantId, filter, beforeId, limit);
  }

  async #insert(db: Executor, tenantId: number, actor: AuditActor, event: AuditEvent, requestId: string | null): Promise<void> {
    await insertAuditEvent(db, {
      tenant_id: tenantId,
      occurred_at: timestamp(this.now),
      action: event.action,
      actor_user_id: actor.userId,
      actor_email: actor.email,
      credential_kind: actor.credentialKind,
      credential_id: actor.credentialId,
      method: null,
      route: null,
      target: redacted(event.target),
      status: null,
      request_id: requestId,
      details: redacted(event.details),
    });
  }
}
