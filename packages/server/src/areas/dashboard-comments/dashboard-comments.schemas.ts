import { Type, type Static } from 'typebox';
import { Id, Nullable, NullablePageQuery, Timestamp } from '../../shared/schemas.js';
import { PublicIdParams } from '../dashboards/index.js';

/** Reference 8.C: a comment's body is 1-10,000 characters. */
export const BODY_MAX = 10_000;
/** Reference 8.C.3: a mentionable-users search is at most 255 characters. */
export const SEARCH_MAX = 255;

const PageFields = NullablePageQuery;

export const CommentSchema = Type.Object(
  {
    id: Type.Integer(),
    dashboardId: Type.String({ description: 'The public id of the dashboard the comment is on.' }),
    body: Type.String({ description: 'Empty once the comment is removed.' }),
    createdAt: Timestamp,
    isOwn: Type.Boolean({ description: 'Whether the calling embed user wrote it.' }),
    editedAt: Type.Optional(Nullable(Timestamp)),
    removedAt: Type.Optional(Nullable(Timestamp)),
    userId: Type.Optional(Nullable(Type.Integer({ description: 'The author: an embed user id (null once the user is gone).' }))),
  },
  { $id: 'CommentDto', description: 'A comment on an embedded dashboard (reference 8.C).' },
);
export type Comment = Static<typeof CommentSchema>;

export const ThreadSchema = Type.Object(
  {
    root: Type.Ref('CommentDto'),
    replies: Type.Array(Type.Ref('CommentDto'), { description: 'Oldest first.' }),
    resolvedAt: Type.Optional(Nullable(Timestamp)),
    resolvedBy: Type.Optional(Nullable(Type.Integer({ description: 'The embed user who resolved the thread.' }))),
    lastActivityAt: Type.Optional(
      Type.String({
        format: 'date-time',
        description:
          'Extension: when the thread last changed, the newest creation or edit of its comments that are not removed (the root’s creation when all are).',
      }),
    ),
  },
  { $id: 'ThreadDto', description: 'A thread: its root comment and the replies to it (reference 8.C).' },
);
export type Thread = Static<typeof ThreadSchema> & { root: Comment; replies: Comment[] };

export const ThreadPageSchema = Type.Object({ items: Type.Array(Type.Ref('ThreadDto')), pageInfo: Type.Ref('PageInfo') }, { $id: 'ThreadDtoPage' });

export const MentionableUserSchema = Type.Object(
  {
    id: Type.Integer(),
    username: Type.String(),
    email: Nullable(Type.String({ description: 'Null when the user has no real address (provisioned without one).' })),
    firstName: Nullable(Type.String()),
  },
  { $id: 'MentionableUser' },
);
export type MentionableUser = Static<typeof MentionableUserSchema>;
export const MentionableUserPageSchema = Type.Object(
  { items: Type.Array(Type.Ref('MentionableUser')), pageInfo: Type.Ref('PageInfo') },
  { $id: 'MentionableUserPage' },
);

export const CommentParams = Type.Object({ ...PublicIdParams.properties, commentId: Id });

export const ThreadsQuery = Type.Object(
  {
    includeResolved: Type.Optional(Nullable(Type.Boolean({ description: 'Also list resolved threads.' }))),
    resolvedOnly: Type.Optional(Nullable(Type.Boolean({ description: 'List resolved threads only (wins over includeResolved).' }))),
    ...PageFields,
  },
  { additionalProperties: false },
);
export type ThreadsInput = Static<typeof ThreadsQuery>;

export const MentionableQuery = Type.Object(
  { search: Type.Optional(Nullable(Type.String({ maxLength: SEARCH_MAX, description: 'Part of the username or email, ignoring case.' }))), ...PageFields },
  { additionalProperties: false },
);
export type MentionableInput = Static<typeof MentionableQuery>;

const Body = Type.String({
  minLength: 1,
  maxLength: BODY_MAX,
  description: 'The text; `@username` (or `@{username}`) mentions an embed user of the caller’s tenant.',
});

export const CreateCommentBody = Type.Object(
  { body: Body, parentId: Type.Optional(Nullable({ ...Id, description: 'The thread root to reply to; absent or null: a new thread.' })) },
  { $id: 'CreateCommentInput', additionalProperties: false },
);
export type CreateCommentInput = Static<typeof CreateCommentBody>;

export const UpdateCommentBody = Type.Object({ body: Body }, { $id: 'UpdateCommentInput', additionalProperties: false });
export type UpdateCommentInput = Static<typeof UpdateCommentBody>;

export const ResolveThreadBody = Type.Object({ resolved: Type.Boolean() }, { $id: 'ResolveThreadInput', additionalProperties: false });
export type ResolveThreadInput = Static<typeof ResolveThreadBody>;

export const dashboardCommentSchemas = [
  CommentSchema,
  ThreadSchema,
  ThreadPageSchema,
  MentionableUserSchema,
  MentionableUserPageSchema,
  CreateCommentBody,
  UpdateCommentBody,
  ResolveThreadBody,
];
