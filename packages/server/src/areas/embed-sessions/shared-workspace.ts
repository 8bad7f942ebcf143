import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type Static } from 'typebox';
import type { Caller } from '../../access/caller.js';
import type { Store } from '../../db/database.js';
import { authorizeDeployment } from '../deployments/index.js';
import type { ItemType } from '../../db/tables.js';
import { pageRequest } from '../../shared/pagination.js';
import { ApiError } from '../../shared/problems.js';
import { DeploymentParams, PageQuery } from '../../shared/schemas.js';
import { sharedWorkspaceVisibility } from '../embed-tenants/index.js';
import { listAnonymously, type WorkspaceEntry } from '../workspace/index.js';
import type { PageInfo } from '../../shared/schemas.js';
import type { EmbedPrincipal } from './embed-sessions.service.js';

const TYPES = '(FOLDER|WORKBOOK|REPORT)';

/** Reference 8.F: the query of the workspace list. */
export const SharedWorkspaceQuery = Type.Object(
  {
    ...PageQuery,
    folderId: Type.Optional(
      Type.String({ pattern: '^(root|null|[1-9][0-9]{0,15})$', description: 'The folder to list; left out, `root` or `null`: the root.' }),
    ),
    types: Type.Optional(
      Type.Array(Type.String({ pattern: `^${TYPES}(,${TYPES})*$` }), {
        maxItems: 3,
        description: 'Item types to include (`types=FOLDER&types=WORKBOOK`, or comma-separated); all by default.',
      }),
    ),
    orderByField: Type.Optional(
      Type.Enum(['updated_at', 'created_at', 'name', 'viewer_last_viewed_at'], {
        description: 'Default `name`. `viewer_last_viewed_at` orders as `updated_at`: the list is not per user, and no view history is kept for it.',
      }),
    ),
    orderByDirection: Type.Optional(Type.Enum(['ASC', 'DESC'], { description: 'Default `ASC`. Folders come first either way.' })),
    search: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 255,
        description: 'Case-insensitive substring of the name, across the whole shared workspace (`folderId` is ignored).',
      }),
    ),
  },
  { additionalProperties: false },
);
export type SharedWorkspaceInput = Static<typeof SharedWorkspaceQuery>;

export const SharedWorkspacePageSchema = Type.Object(
  { items: Type.Array(Type.Ref('WorkspaceEntry')), pageInfo: Type.Ref('PageInfo') },
  { $id: 'SharedWorkspacePage' },
);

const SORT = { name: 'name', created_at: 'createdAt', updated_at: 'updatedAt', viewer_last_viewed_at: 'updatedAt' } as const;

/** 403 unless the embed principal is a creator-mode session on this deployment (8.F, 8.G.1). */
export function requireCreatorSession(principal: EmbedPrincipal | null, deploymentId: number, what: string): EmbedPrincipal {
  if (principal === null) throw new ApiError('FORBIDDEN', `${what} takes the embed token of a creator-mode session (reference 4.15), not an API key.`);
  if (principal.claims.creator_mode !== true)
    throw new ApiError('FORBIDDEN', `${what} needs a creator-mode session: generate the session with "creatorMode": true.`);
  if (principal.claims.deployment_id !== deploymentId)
    throw new ApiError('FORBIDDEN', `This embed session is for deployment ${principal.claims.deployment_id}, not ${deploymentId}.`);
  return principal;
}

/** Reference 8.F: what is shared with the session's embed tenant and with all embed users, the same for each of the tenant's users. */
export function sharedWorkspaceService(store: Store) {
  return {
    async list(
      embed: EmbedPrincipal | null,
      caller: Caller | null,
      deploymentId: number,
      input: SharedWorkspaceInput,
    ): Promise<{ items: WorkspaceEntry[]; pageInfo: PageInfo }> {
      // An API key is told about the deployment first (404 for one it cannot see), as on every deployment route.
      if (embed === null && caller !== null) await authorizeDeployment(store.db, caller, deploymentId, 'DeploymentRead');
      const principal = requireCreatorSession(embed, deploymentId, 'The shared workspace');
      const scope = { tenantId: principal.tenantId, deploymentId };
      const visibility = await sharedWorkspaceVisibility(store.db, scope, principal.claims.embed_tenant);
      const page = pageRequest(input);
      const types = input.types
        ? ([...new Set(input.types.flatMap((t) => t.split(',')))].sort() as ItemType[])
        : (['FOLDER', 'REPORT', 'WORKBOOK'] as ItemType[]);
      return listAnonymously(store.db, store.dialect, scope, visibility, {
        folderId: input.folderId === undefined || input.folderId === 'root' || input.folderId === 'null' ? null : Number(input.folderId),
        types,
        search: input.search,
        sortBy: SORT[input.orderByField ?? 'name'],
        descending: input.orderByDirection === 'DESC',
        first: page.first,
        after: page.after,
      });
    },
  };
}
export type SharedWorkspaceService = ReturnType<typeof sharedWorkspaceService>;

/** GET /api/v1/deployments/{deploymentId}/shared-workspace (reference 8.F): a creator-mode embed token's route. */
export function sharedWorkspaceRoutes(service: SharedWorkspaceService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/api/v1/deployments/:deploymentId/shared-workspace',
      {
        config: { credential: 'embed' },
        schema: {
          operationId: 'listSharedWorkspace',
          tags: ['Embedding'],
          summary: 'The shared workspace (reference 8.F; a creator-mode embed token)',
          description:
            'One folder of what is shared with embed users, through the all-embed-users group or the session’s embed tenant (`system:tenant:{embedTenantName}`), folders first: a shared workbook or folder, everything below a shared folder, and the folders above a shared item (so it can be reached), but none of the unshared items beside them. The list is the same for every user of the embed tenant; owners are blanked (`createdBy` and `user` null) and `isFavorite` is false. ' +
            'Query, pagination and cursors as the workspace list. A folder outside the shared workspace is 404. Takes the embed token of a creator-mode session on this deployment: another session or another deployment is 403, and so is an API key (404 for a deployment it cannot see).',
          params: DeploymentParams,
          querystring: SharedWorkspaceQuery,
          response: { 200: Type.Ref('SharedWorkspacePage') },
          problems: ['FORBIDDEN', 'KEY_SCOPE_FORBIDDEN', 'DEPLOYMENT_NOT_FOUND', 'FOLDER_NOT_FOUND', 'INVALID_CURSOR'],
        },
      },
      async (request) => service.list(request.embed, request.embed === null ? request.caller : null, request.params.deploymentId, request.query),
    );
  };
}
