import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { ApiError } from '../../shared/problems.js';
import { ref } from '../../shared/schemas.js';
import { PublicIdParams } from '../dashboards/index.js';
import type { EmbedPrincipal } from '../embed-sessions/index.js';
import { CommentParams, CreateCommentBody, MentionableQuery, ResolveThreadBody, ThreadsQuery, UpdateCommentBody } from './dashboard-comments.schemas.js';
import type { DashboardCommentsService } from './dashboard-comments.service.js';

const BASE = '/api/v1/embed/dashboard/:publicId/comments';

const WHO =
  'An embed token of an external user (a session generated with `externalId`, which always names an embed tenant); an API key, an OAuth access token or the token of an `internalId` session gets 403: conversations live inside one embed tenant. ' +
  'The dashboard is authorized as GET /api/v1/embed/dashboard/{publicId} (404 when the session cannot see it, 403 when signed embedding is off for it). ' +
  '403 DASHBOARD_COMMENTS_DISABLED unless the account’s embed settings have `enableDashboardComments` true (checked before the dashboard).';

/** Every operation's refusals before its own. */
const COMMON = ['FORBIDDEN', 'DASHBOARD_COMMENTS_DISABLED', 'DASHBOARD_NOT_FOUND'] as const;

/** The request's embed session; anything else names no embed tenant (reference 8.C: 403). */
function embedOf(request: FastifyRequest): EmbedPrincipal {
  if (request.embed === null)
    throw new ApiError(
      'FORBIDDEN',
      'Comments live inside one embed tenant: this route takes an embed token (POST /api/v1/embed/session/token), not an API key.',
    );
  return request.embed;
}

/** Reference 8.C: comments on embedded dashboards, six operations, each an embed token's. */
export function dashboardCommentsRoutes(comments: DashboardCommentsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    const tags = ['Embedding'];
    const config = { credential: 'embed' as const };

    app.get(
      BASE,
      {
        config,
        schema: {
          operationId: 'listDashboardComments',
          tags,
          summary: 'List a dashboard’s comment threads (reference 8.C.1; an embed token)',
          description: `Threads of the caller’s embed tenant, newest opened first (a reply does not move a thread); open ones only unless \`includeResolved\` (add resolved ones) or \`resolvedOnly\` (only those). Removed comments are listed with \`body\` empty and \`removedAt\` set. ${WHO}`,
          params: PublicIdParams,
          querystring: ThreadsQuery,
          response: { 200: Type.Ref('ThreadDtoPage') },
          problems: [...COMMON, 'INVALID_CURSOR'],
        },
      },
      async (request) => comments.list(embedOf(request), request.params.publicId, request.query),
    );

    app.post(
      BASE,
      {
        config,
        schema: {
          operationId: 'createDashboardComment',
          tags,
          summary: 'Comment on a dashboard, or reply to a thread (reference 8.C.2; an embed token)',
          description: `The author is the session’s embed user. \`parentId\`: the root of the thread to reply to; replies go one level deep, so a reply’s id is 400 INVALID_OPERATION, and an id on another dashboard, another embed tenant’s, removed or missing is 404 COMMENT_NOT_FOUND. \`@username\` (or \`@{username}\`) mentions a user of the caller’s embed tenant, who is mailed (never the author). ${WHO}`,
          params: PublicIdParams,
          body: ref(CreateCommentBody),
          response: { 200: Type.Ref('CommentDto') },
          problems: [...COMMON, 'COMMENT_NOT_FOUND', 'INVALID_OPERATION'],
        },
      },
      async (request) => comments.create(embedOf(request), request.params.publicId, request.body),
    );

    app.get(
      `${BASE}/mentionable-users`,
      {
        config,
        schema: {
          operationId: 'listMentionableUsers',
          tags,
          summary: 'Users the caller may mention (reference 8.C.3; an embed token)',
          description: `The embed users of the caller’s own embed tenant, never account users nor another embed tenant’s, by username; \`search\` matches part of the username or email, ignoring case. \`email\` is null for a user provisioned without one. ${WHO}`,
          params: PublicIdParams,
          querystring: MentionableQuery,
          response: { 200: Type.Ref('MentionableUserPage') },
          problems: [...COMMON, 'INVALID_CURSOR'],
        },
      },
      async (request) => comments.mentionable(embedOf(request), request.params.publicId, request.query),
    );

    app.patch(
      `${BASE}/:commentId`,
      {
        config,
        schema: {
          operationId: 'updateDashboardComment',
          tags,
          summary: 'Edit a comment (reference 8.C.4; an embed token)',
          description: `Its author only (another user’s is 403); sets \`editedAt\`. A comment not on this dashboard, another embed tenant’s or removed is 404 COMMENT_NOT_FOUND. Users the new body mentions for the first time are mailed. ${WHO}`,
          params: CommentParams,
          body: ref(UpdateCommentBody),
          response: { 200: Type.Ref('CommentDto') },
          problems: [...COMMON, 'COMMENT_NOT_FOUND'],
        },
      },
      async (request) => comments.update(embedOf(request), request.params.publicId, request.params.commentId, request.body),
    );

    app.delete(
      `${BASE}/:commentId`,
      {
        config,
        schema: {
          operationId: 'deleteDashboardComment',
          tags,
          summary: 'Remove a comment (reference 8.C.5; an embed token)',
          description: `A soft removal by its author (another user’s is 403): it stays listed with its body emptied. Removing a thread’s root removes its replies too; removing a reply recomputes the thread’s last activity. A comment not on this dashboard, another embed tenant’s or already removed is 404 COMMENT_NOT_FOUND. ${WHO}`,
          params: CommentParams,
          response: { 200: Type.Object({}, { additionalProperties: false }) },
          problems: [...COMMON, 'COMMENT_NOT_FOUND'],
        },
      },
      async (request) => comments.remove(embedOf(request), request.params.publicId, request.params.commentId),
    );

    app.post(
      `${BASE}/:commentId/resolve`,
      {
        config,
        schema: {
          operationId: 'resolveDashboardThread',
          tags,
          summary: 'Resolve or reopen a thread (reference 8.C.6; an embed token)',
          description: `The user who started the thread only (403 otherwise). Threads only: a reply’s id is 400 INVALID_OPERATION. A thread whose root was removed can still be resolved while replies hang from it. Resolving a resolved thread keeps its first \`resolvedAt\`. ${WHO}`,
          params: CommentParams,
          body: ref(ResolveThreadBody),
          response: { 200: Type.Ref('ThreadDto') },
          problems: [...COMMON, 'COMMENT_NOT_FOUND', 'INVALID_OPERATION'],
        },
      },
      async (request) => comments.resolve(embedOf(request), request.params.publicId, request.params.commentId, request.body),
    );
  };
}
