import { Type, type Static } from 'typebox';
import { Id, Nullable, PageOf, PageQuery, Timestamp } from '../../shared/schemas.js';
import { AccessLevel } from '../deployments/index.js';

const PrincipalType = Type.Enum(['USER', 'GROUP']);
const ResourceType = Type.Enum(['DEPLOYMENT', 'FOLDER', 'WORKBOOK', 'REPORT']);

const PrincipalRef = Type.Object({ type: PrincipalType, id: Id }, { additionalProperties: false, description: 'Who is granted access: a user or a group.' });
const ResourceRef = Type.Object({ type: ResourceType, id: Id }, { additionalProperties: false, description: 'What access is granted on.' });

export const PolicySchema = Type.Object(
  {
    id: Id,
    principal: PrincipalRef,
    resource: ResourceRef,
    access: AccessLevel,
    createdBy: Nullable(Id),
    createdAt: Timestamp,
  },
  { $id: 'Policy', description: 'An access grant: `principal` holds `access` on `resource`, and on what lies inside it.' },
);
export type Policy = Static<typeof PolicySchema>;

export const PolicyPageSchema = PageOf('Policy');

export const CreatePolicyBody = Type.Object({ principal: PrincipalRef, resource: ResourceRef, access: AccessLevel }, { additionalProperties: false });
export type CreatePolicyInput = Static<typeof CreatePolicyBody>;

export const ListPoliciesQuery = Type.Object(
  {
    ...PageQuery,
    principalType: Type.Optional(PrincipalType),
    principalId: Type.Optional(Id),
    resourceType: Type.Optional(ResourceType),
    resourceId: Type.Optional(Id),
  },
  { additionalProperties: false },
);
export type ListPoliciesInput = Static<typeof ListPoliciesQuery>;

export const PolicyParams = Type.Object({ policyId: Id });

/** Schemas other schemas refer to by `$id`; registered once by the app. */
export const policySchemas = [PolicySchema, PolicyPageSchema];
