import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { AccessContext } from '../../access/access.js';
import type { Caller } from '../../access/caller.js';
import { TenantSnapshot } from '../../cache/tenant-cache.js';
import type { FolderTrees } from '../workspace/index.js';
import type { Db } from '../../db/tables.js';
import { ApiError } from '../../shared/problems.js';
import { findPublishedByPublicId } from '../dashboards/index.js';
import { embedShareOf } from '../embed-tenants/index.js';
import { PublicIdParams } from '../dashboards/index.js';
import type { Dashboard } from '../workspace/index.js';
import { findItem } from '../workspace/index.js';
import { openWorkspace, requireItemAccess } from '../workspace/index.js';
import { findUserById } from '../users/index.js';
import type { EmbedPrincipal } from './embed-sessions.service.js';

/**
 * Who else may see a dashboard of an embed tenant: the sharing of workbooks and folders with embed
 * tenants and with all embed users (reference 3.4-3.6, 4.14). Answers how the principal reaches
 * the workbook, or null when it does not.
 */
export type EmbedSharing = (principal: EmbedPrincipal, dashboard: Dashboard) => Promise<'tenant' | 'allEmbedUsers' | null>;

/** Sharing as the embed-tenants area keeps it (embed access, 3.4-3.5): the workbook or a folder above it shared with the session's embed tenant or with all embed users. */
export function embedSharing(db: Db): EmbedSharing {
  return (principal, dashboard) =>
    embedShareOf(db, { tenantId: principal.tenantId, deploymentId: dashboard.deploymentId }, dashboard.workbookId, principal.claims.embed_tenant);
}

function notVisible(publicId: string): ApiError {
  return new ApiError('DASHBOARD_NOT_FOUND', `No dashboard with public id "${publicId}" is visible to this embed session.`);
}

/**
 * Reference 4.18: the published dashboard with this public id, for an embed token. Visible when
 * the session's user may read its workbook (a session for an account user, `internalId`: that
 * user's own access, as owner or by grant, directly or through a folder), or when the workbook is
 * shared with the session's embed tenant or with all embed users; 404 otherwise, and for another
 * deployment's dashboard than the session's. With `allowEmbed` off it is 403, except for
 * dashboards shared with all embed users (3.6).
 */
export function embedDashboards(db: Db, folderTrees: FolderTrees, sharing: EmbedSharing) {
  async function userReads(principal: EmbedPrincipal, dashboard: Dashboard): Promise<boolean> {
    const userId = principal.claims.embed_user.user_id;
    if (userId === null) return false;
    const user = await findUserById(db, principal.tenantId, userId);
    if (!user || user.deactivated_at !== null) return false;
    const snapshot = TenantSnapshot.uncached(principal.tenantId);
    const actor = { tenantId: principal.tenantId, userId, email: user.email, role: user.role, keyId: 0, scope: null };
    const caller: Caller = {
      actor,
      tenant: { id: principal.tenantId, slug: '' },
      access: new AccessContext(db, principal.tenantId, { userId, role: user.role }, null, snapshot),
      log: { error: () => undefined },
      snapshot,
      folderTrees,
    };
    try {
      const context = await openWorkspace(db, caller, dashboard.deploymentId);
      const item = await findItem(db, context.scope, 'WORKBOOK', dashboard.workbookId);
      if (!item) return false;
      await requireItemAccess(db, context, item, 'VIEW', 'read');
      return true;
    } catch (error) {
      if (error instanceof ApiError && error.status < 500) return false;
      throw error;
    }
  }

  return {
    async get(principal: EmbedPrincipal, publicId: string): Promise<Dashboard> {
      const dashboard = await findPublishedByPublicId(db, principal.tenantId, publicId);
      if (!dashboard || dashboard.deploymentId !== principal.claims.deployment_id) throw notVisible(publicId);
      const shared = await sharing(principal, dashboard);
      if (shared === null && !(await userReads(principal, dashboard))) throw notVisible(publicId);
      if (!dashboard.allowEmbed && shared !== 'allEmbedUsers') {
        throw new ApiError(
          'FORBIDDEN',
          `Signed embedding is off for dashboard "${publicId}"; an admin turns it on with PATCH /api/v1/embed/dashboard/${publicId} {"allowEmbed": true}.`,
        );
      }
      return dashboard;
    },
  };
}
export type EmbedDashboards = ReturnType<typeof embedDashboards>;

/** GET /api/v1/embed/dashboard/{publicId} (reference 4.18): an embed token's route. */
export function embedDashboardRoutes(dashboards: EmbedDashboards): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/api/v1/embed/dashboard/:publicId',
      {
        config: { credential: 'embed' },
        schema: {
          operationId: 'getEmbedDashboard',
          tags: ['Embedding'],
          summary: 'The embeddable dashboard (reference 4.18; an embed token)',
          description:
            'The current published version, with its widgets and report snapshots, for the embed token of a session on its deployment. 404 when it does not exist or the session cannot see it; 403 when signed embedding is off for it (`allowEmbed`), unless it is shared with all embed users. An API key gets 403: this route takes an embed token.',
          params: PublicIdParams,
          response: { 200: Type.Ref('Dashboard') },
          problems: ['DASHBOARD_NOT_FOUND', 'FORBIDDEN'],
        },
      },
      async (request) => {
        if (request.embed === null) throw new ApiError('FORBIDDEN', 'This route takes an embed token (POST /api/v1/embed/session/token), not an API key.');
        return dashboards.get(request.embed, request.params.publicId);
      },
    );
  };
}
