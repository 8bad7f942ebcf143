import type { Caller } from '../../access/caller.js';
import type { Audit } from '../../audit/index.js';
import { afterId, pageRequest, toPage } from '../../shared/pagination.js';
import type { PageInfo } from '../../shared/schemas.js';
import type { AuditEventsInput, AuditEventView } from './audit-events.schemas.js';

/** Instants compare as stored text: ISO 8601 UTC with milliseconds. */
const stored = (instant: string | undefined) => (instant === undefined ? undefined : new Date(instant).toISOString());

/** Reading the tenant's audit log (extension): admins only, newest first. */
export function auditEventsService(audit: Audit) {
  return {
    async list(caller: Caller, input: AuditEventsInput): Promise<{ items: AuditEventView[]; pageInfo: PageInfo }> {
      caller.access.requireAdmin('read the audit log');
      const page = pageRequest(input);
      const rows = await audit.list(
        caller.actor.tenantId,
        {
          actorUserId: input.actorUserId,
          action: input.action,
          route: input.route,
          method: input.method,
          since: stored(input.since),
          until: stored(input.until),
        },
        afterId(page),
        page.first + 1,
      );
      const { items, pageInfo } = toPage(rows, page, (r) => [r.id]);
      return {
        items: items.map((r) => ({
          id: r.id,
          occurredAt: r.occurred_at,
          action: r.action,
          actorUserId: r.actor_user_id,
          actorEmail: r.actor_email,
          credentialKind: r.credential_kind,
          credentialId: r.credential_id,
          method: r.method,
          route: r.route,
          target: JSON.parse(r.target) as AuditEventView['target'],
          status: r.status,
          requestId: r.request_id,
          details: JSON.parse(r.details) as AuditEventView['details'],
        })),
        pageInfo,
      };
    },
  };
}
export type AuditEventsService = ReturnType<typeof auditEventsService>;
