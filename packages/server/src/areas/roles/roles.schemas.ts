import { Type, type Static } from 'typebox';
import { DEPLOYMENT_ROLE_ACTIONS, GLOBAL_ROLE_ACTIONS, ROLE_RESOURCE_TYPES } from '../../access/custom-roles.js';
import { Id, NullablePageQuery, Nullable, PageOf } from '../../shared/schemas.js';

/** Reference 8.D.2: at most 200 policies per role. */
export const MAX_ROLE_POLICIES = 200;

const Name = Type.String({ minLength: 1, maxLength: 255, description: 'Unique in the tenant, ignoring case; not the name of a built-in role.' });
const Description = Nullable(Type.String({ maxLength: 255 }));

export const RolePolicySchema = Type.Object(
  {
    resourceType: Type.Enum([...ROLE_RESOURCE_TYPES], {
      description: '`Deployment`: actions on the deployments in `resources`. `Global`: account-wide actions, among them the license tier.',
    }),
    actions: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
      minItems: 1,
      maxItems: 64,
      description: `At least one. \`Deployment\`: ${DEPLOYMENT_ROLE_ACTIONS.join(', ')}. \`Global\`: ${GLOBAL_ROLE_ACTIONS.join(', ')}. \`All\` is full access.`,
    }),
    resources: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
      minItems: 1,
      maxItems: 1000,
      description: 'At least one. `Deployment`: deployment ids as strings (`"12"`) or `All`. Ids are checked for shape, not existence.',
    }),
  },
  { $id: 'RolePolicy', additionalProperties: false, description: 'What a role grants: `actions` on `resources` of `resourceType`.' },
);
export type RolePolicy = Static<typeof RolePolicySchema>;

const Policies = Type.Array(Type.Ref('RolePolicy'), { maxItems: MAX_ROLE_POLICIES });

export const RoleSchema = Type.Object(
  {
    id: Id,
    name: Type.String(),
    description: Type.Optional(Description),
    policies: Policies,
  },
  { $id: 'Role', description: 'A custom role: named policies, held by the users and groups it is assigned to.' },
);
export type Role = Static<typeof RoleSchema>;

export const RolePageSchema = PageOf('Role');

export const CreateRoleBody = Type.Object(
  { name: Name, description: Type.Optional(Description), policies: Type.Array(RolePolicySchema, { maxItems: MAX_ROLE_POLICIES }) },
  { additionalProperties: false },
);
export type CreateRoleInput = Static<typeof CreateRoleBody>;

/** Null clears `description` only; a null `name` or `policies` is refused by the schema. */
export const UpdateRoleBody = Type.Object(
  {
    name: Type.Optional(Name),
    description: Type.Optional(Description),
    policies: Type.Optional(
      Type.Array(RolePolicySchema, { maxItems: MAX_ROLE_POLICIES, description: 'Replaces every policy of the role; `[]` removes them all.' }),
    ),
  },
  { additionalProperties: false },
);
export type UpdateRoleInput = Static<typeof UpdateRoleBody>;

export const ListRolesQuery = Type.Object({ ...NullablePageQuery }, { additionalProperties: false });
export type ListRolesInput = Static<typeof ListRolesQuery>;

export const RoleParams = Type.Object({ roleId: Id });
export const RoleUserParams = Type.Object({ roleId: Id, userId: Id });
export const RoleGroupParams = Type.Object({ roleId: Id, groupId: Id });

/** Schemas other schemas refer to by `$id`; registered once by the app. */
export const roleSchemas = [RolePolicySchema, RoleSchema, RolePageSchema];
