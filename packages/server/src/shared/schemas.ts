import { Type, type Static, type TSchema, type TUnsafe } from 'typebox';
import { PROBLEMS, type ProblemCode } from './problems.js';

/** Shared schemas: problem details, path ids, pagination. Registered once with `$id` (see openapi.ts). */

export const FieldErrorSchema = Type.Object(
  {
    pointer: Type.String({ description: 'JSON pointer to the offending part of the request, e.g. /body/items/3/id' }),
    message: Type.String(),
  },
  { $id: 'FieldError' },
);

export const ProblemDetailsSchema = Type.Object(
  {
    type: Type.String({ description: 'A URI naming the kind of problem; stable per `code`.' }),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    // Every code of the table; each operation's error responses narrow it to what that route answers.
    code: Type.Unsafe<ProblemCode>({
      type: 'string',
      enum: Object.keys(PROBLEMS),
      description: 'Stable machine-readable error code, e.g. DEPLOYMENT_NOT_FOUND.',
    }),
    message: Type.String({ description: 'Same as `detail`.' }),
    requestId: Type.String(),
    errors: Type.Optional(Type.Array(Type.Ref('FieldError'), { description: 'One entry per invalid part of the request.' })),
    conflicts: Type.Optional(Type.Array(Type.String(), { description: 'With `MERGE_CONFLICT`: the repository paths both branches changed.' })),
    missingMembers: Type.Optional(
      Type.Array(Type.Object({ member: Type.String(), use: Type.String(), reportIds: Type.Array(Type.Integer()) }), {
        description: 'With `PROMOTION_MEMBERS_MISSING`: the members the reports use that the target model lacks, and which reports use each.',
      }),
    ),
  },
  { $id: 'ProblemDetails', description: 'RFC 9457 problem details.' },
);
export type ProblemDetails = Static<typeof ProblemDetailsSchema>;

export const ProblemRef = { content: { 'application/problem+json': { schema: Type.Ref('ProblemDetails') } } };

export const Id = Type.Integer({ minimum: 1, maximum: 2 ** 53 - 1 });
export const Timestamp = Type.String({ format: 'date-time' });
export const Email = Type.String({ format: 'email', maxLength: 320 });
const PRIMITIVE = new Set(['string', 'integer', 'number', 'boolean']);

/**
 * `schema` or null. A plain primitive becomes `type: [T, "null"]` rather than `anyOf`: the
 * response serializer picks an `anyOf` branch by running a validator per value, which cost a bulk
 * move's 100 items about 0.7 ms a response; a type list is one `typeof` test.
 */
export const Nullable = <T extends TSchema>(schema: T): TUnsafe<Static<T> | null> => {
  const { type, enum: enumerated, const: constant, anyOf, oneOf } = schema as Record<string, unknown>;
  if (typeof type === 'string' && PRIMITIVE.has(type) && enumerated === undefined && constant === undefined && anyOf === undefined && oneOf === undefined) {
    return Type.Unsafe<Static<T> | null>({ ...schema, type: [type, 'null'] });
  }
  // Null first: fields such as a workbook's dashboards are mostly null, and the serializer tries
  // branches in order.
  return Type.Unsafe<Static<T> | null>(Type.Union([Type.Null(), schema]));
};

export const DeploymentParams = Type.Object({ deploymentId: Id });
/** A workbook's path parameters, which the workbooks' and the dashboards' routes share. */
export const WorkbookParams = Type.Object({ ...DeploymentParams.properties, workbookId: Id });

export const PageInfoSchema = Type.Object(
  {
    startCursor: Nullable(Type.String()),
    endCursor: Nullable(Type.String()),
    hasNextPage: Type.Boolean(),
    hasPreviousPage: Type.Boolean(),
  },
  { $id: 'PageInfo' },
);
export type PageInfo = Static<typeof PageInfoSchema>;

/**
 * The largest page any list serves. A `first` (or deprecated `limit`) above it is refused with
 * 400 VALIDATION_FAILED on every list, never clamped: a client that asked for more must not take
 * a shorter page for the end of the list (docs/api/pagination.md).
 */
export const MAX_PAGE_SIZE = 200;

/** The largest deprecated `offset` taken (as on the reports list); past it no list has items. */
export const MAX_OFFSET = 1_000_000;

export const PageQuery = {
  first: Type.Optional(
    Type.Integer({ minimum: 1, maximum: MAX_PAGE_SIZE, default: 100, description: `Page size (default 100, at most ${MAX_PAGE_SIZE}; more is 400).` }),
  ),
  after: Type.Optional(Type.String({ maxLength: 512, description: 'Opaque cursor: `pageInfo.endCursor` of the previous page.' })),
};

/** `PageQuery` where the reference lets `first` and `after` be null too (0.3): null means left out. */
export const NullablePageQuery = {
  first: Type.Optional(
    Nullable(Type.Integer({ minimum: 1, maximum: MAX_PAGE_SIZE, description: `Page size (default 100, at most ${MAX_PAGE_SIZE}; more is 400).` })),
  ),
  after: Type.Optional(Nullable(Type.String({ maxLength: 512, description: 'Opaque cursor: `pageInfo.endCursor` of the previous page.' }))),
};

/**
 * The deprecated positional paging the reference keeps on some lists (0.3; 1.2, 1.17, 1.18),
 * spread beside `PageQuery`. `offset` skips that many items and never combines with `after`
 * (400); `limit` is the page size, with the same bound as `first`, and wins over it when both
 * are sent. Each list reads them through pagination.ts (`positionalWindow`, `offsetPaging`).
 */
export const LegacyPageQuery = {
  offset: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: MAX_OFFSET,
      deprecated: true,
      description: 'Deprecated (use `after`): skip this many items. Not combined with `after` (400).',
    }),
  ),
  limit: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: MAX_PAGE_SIZE,
      deprecated: true,
      description: `Deprecated (use \`first\`): the page size, at most ${MAX_PAGE_SIZE} (more is 400); wins over \`first\` when both are sent.`,
    }),
  ),
};

/** A cursor-paginated list of the shared schema `item`: `items` and `pageInfo`, named `<item>Page`. */
export const PageOf = (item: string) => Type.Object({ items: Type.Array(Type.Ref(item)), pageInfo: Type.Ref('PageInfo') }, { $id: `${item}Page` });

export const sharedSchemas = [FieldErrorSchema, ProblemDetailsSchema, PageInfoSchema];

/**
 * A `$ref` to a registered schema that keeps the schema's static type (a bare `Type.Ref` is
 * `unknown`), so documents get components and handlers get types.
 */
export function ref<T extends TSchema>(schema: T): TUnsafe<Static<T>> {
  const id = (schema as { $id?: unknown }).$id;
  if (typeof id !== 'string') throw new Error('ref() needs a schema with an $id');
  return Type.Unsafe<Static<T>>(Type.Ref(id));
}
