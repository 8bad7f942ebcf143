import { Type, type Static } from 'typebox';
import { Id, Nullable, Timestamp } from '../../shared/schemas.js';

const TYPES = ['string', 'number', 'boolean', 'string-list'] as const;

/** A value of any attribute type; the attribute's `type` says which one is allowed. */
export const AttributeValue = Type.Union(
  [Type.String({ maxLength: 1000 }), Type.Number(), Type.Boolean(), Type.Array(Type.String({ maxLength: 1000 }), { maxItems: 100 })],
  {
    description: 'A string, number, boolean or list of strings, matching the attribute type.',
  },
);

const Name = Type.String({
  pattern: '^[A-Za-z][A-Za-z0-9_]{0,63}$',
  description:
    'Letters, digits and underscores, starting with a letter, at most 64; unique in the tenant ignoring case. It is also the attribute name in SCIM.',
});

export const UserAttributeSchema = Type.Object(
  {
    id: Id,
    name: Type.String(),
    type: Type.Enum(TYPES),
    defaultValue: Nullable(AttributeValue),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'UserAttribute' },
);
export type UserAttribute = Static<typeof UserAttributeSchema>;

export const UserAttributeListSchema = Type.Object({ items: Type.Array(Type.Ref('UserAttribute')) }, { $id: 'UserAttributeList' });

export const CreateUserAttributeBody = Type.Object(
  {
    name: Name,
    type: Type.Enum(TYPES, { description: 'Cannot change later, so stored values always match it.' }),
    defaultValue: Type.Optional(Nullable(AttributeValue)),
  },
  { additionalProperties: false },
);
export type CreateUserAttributeInput = Static<typeof CreateUserAttributeBody>;

export const UpdateUserAttributeBody = Type.Object(
  { name: Type.Optional(Name), defaultValue: Type.Optional(Nullable(AttributeValue)) },
  { additionalProperties: false },
);
export type UpdateUserAttributeInput = Static<typeof UpdateUserAttributeBody>;

export const UserAttributeParams = Type.Object({ attributeId: Id });
export const UserValuesParams = Type.Object({ userId: Id });

const UserAttributeValueSchema = Type.Object({
  name: Type.String(),
  value: Nullable(AttributeValue),
  isDefault: Type.Boolean({ description: 'True when the user has no value of their own and the default applies.' }),
  attributeId: Id,
  type: Type.Enum(TYPES),
});

export const UserAttributeValuesSchema = Type.Object(
  {
    userId: Id,
    userAttributes: Type.Array(UserAttributeValueSchema, {
      description:
        'Every attribute of the tenant, in definition order: `{name, value}` as a write takes them, with `isDefault`, the attribute id and its type.',
    }),
    values: Type.Array(UserAttributeValueSchema, { deprecated: true, description: 'Deprecated: the same array as `userAttributes`.' }),
  },
  { $id: 'UserAttributeValues' },
);
export type UserAttributeValues = Static<typeof UserAttributeValuesSchema>;

/** One entry of `userAttributes`, the shape sessions, embed users and renders take (reference 4.15). */
const UserAttributeInput = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 255, description: 'An attribute of the tenant, in any case.' }),
    value: Nullable(AttributeValue),
  },
  { additionalProperties: false },
);

export const SetUserAttributeValuesBody = Type.Object(
  {
    userAttributes: Type.Optional(
      Type.Array(UserAttributeInput, {
        maxItems: 1000,
        description:
          "The values to set, each attribute once (a repeated name is 400); null removes the user's own value so the default applies. Attributes not named keep their values. Unknown names are 400 USER_ATTRIBUTES_NOT_FOUND.",
      }),
    ),
    values: Type.Optional(
      Type.Record(Type.String(), Nullable(AttributeValue), {
        deprecated: true,
        description: 'Deprecated: attribute name → value, the same write as `userAttributes`. Send one of the two, not both (400).',
      }),
    ),
  },
  { additionalProperties: false },
);
export type SetUserAttributeValuesInput = Static<typeof SetUserAttributeValuesBody>;

export const userAttributeSchemas = [UserAttributeSchema, UserAttributeListSchema, UserAttributeValuesSchema];
