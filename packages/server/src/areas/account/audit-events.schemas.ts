import { Type, type Static } from 'typebox';
import { PageQuery } from '../../shared/schemas.js';

const Facts = Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]));

export const AuditEventSchema = Type.Object(
  {
    id: Type.Integer(),
    occurredAt: Type.String({ format: 'date-time' }),
    action: Type.String({
      description:
        '`request` for a mutating request; otherwise the event: `env-vars.read`, `token.issued`, `sign-in`, `audit-log.enabled`, `audit-log.disabled`.',
    }),
    actorUserId: Type.Union([Type.Integer(), Type.Null()]),
    actorEmail: Type.Union([Type.String(), Type.Null()]),
    credentialKind: Type.Union([Type.String(), Type.Null()], { description: 'How the actor authenticated: `api-key`, …' }),
    credentialId: Type.Union([Type.String(), Type.Null()], { description: 'The id of the credential (an API key’s id), never the credential.' }),
    method: Type.Union([Type.String(), Type.Null()]),
    route: Type.Union([Type.String(), Type.Null()], { description: 'The route pattern, such as `/api/v1/deployments/:deploymentId/env-vars`.' }),
    target: Facts,
    status: Type.Union([Type.Integer(), Type.Null()], { description: 'The HTTP status the request was answered with.' }),
    requestId: Type.Union([Type.String(), Type.Null()]),
    details: Facts,
  },
  { $id: 'AuditEvent' },
);
export type AuditEventView = Static<typeof AuditEventSchema>;

export const AuditEventPageSchema = Type.Object({ items: Type.Array(Type.Ref('AuditEvent')), pageInfo: Type.Ref('PageInfo') }, { $id: 'AuditEventPage' });

export const AuditEventsQuery = Type.Object(
  {
    ...PageQuery,
    actorUserId: Type.Optional(Type.Integer({ minimum: 1, description: 'Only events of this user.' })),
    action: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Only events of this action (`request`, `env-vars.read`, …).' })),
    route: Type.Optional(Type.String({ minLength: 1, maxLength: 500, description: 'Only requests to this route pattern.' })),
    method: Type.Optional(Type.Enum(['POST', 'PUT', 'PATCH', 'DELETE'], { description: 'Only requests of this method.' })),
    since: Type.Optional(Type.String({ format: 'date-time', description: 'Only events at or after this time.' })),
    until: Type.Optional(Type.String({ format: 'date-time', description: 'Only events at or before this time.' })),
  },
  { additionalProperties: false },
);
export type AuditEventsInput = Static<typeof AuditEventsQuery>;

export const auditEventSchemas = [AuditEventSchema, AuditEventPageSchema];
