import { randomId } from '../../shared/random-id.js';
import type { Caller } from '../../access/caller.js';
import type { Store } from '../../db/database.js';
import type { DashboardExportRow } from '../../db/tables.js';
import { lockKey, serialized } from '../../db/transactions.js';
import type { Jobs } from '../../jobs/index.js';
import type { Viewer } from '../../render/index.js';
import { ApiError } from '../../shared/problems.js';
import { restrictDataDownload } from '../account/index.js';
import { findInDeployment } from '../dashboards/index.js';
import { effectiveAttributesOf, embedSecurityContext, embedShareOf, embedTenantGroups } from '../embed-tenants/index.js';
import { checkedAttributeList, listAttributes } from '../user-attributes/index.js';
import { findUserByEmail, findUserById } from '../users/index.js';
import { findItem } from '../workspace/index.js';
import { openWorkspace, requireItemAccess } from '../workspace/index.js';
import { EXPORT_JOB, type ExportJobPayload } from './export-job.js';
import type { DashboardExportStatus, ExportSubjectInput, StartDashboardExportInput } from './exports.schemas.js';
import { deleteExpired, findExport, insertExport, markFailed, runningCount, setJob } from './exports.store.js';

/** Reference 8.A: the job and its file are dropped 5 minutes after submission. */
export const EXPORT_TTL_MS = 5 * 60_000;

export interface DashboardExportsOptions {
  jobs: Jobs;
  /** Exports rendering at once per identity rendered as (DASHBOARD_EXPORTS_PER_IDENTITY; reference 8.A's 429). */
  concurrentPerIdentity: number;
  now: () => Date;
}

const notFound = (jobId: string) =>
  new ApiError('DASHBOARD_EXPORT_NOT_FOUND', `No export of yours has job id ${jobId} in this deployment; exports expire 5 minutes after they are submitted.`);

/** Whom the render is as: the row-level context its queries run with, and the identity the limit counts. */
interface Subject {
  viewer: Viewer;
  identity: string;
}

/**
 * Dashboard exports (reference 8.A): a render of a published dashboard to PNG or PDF, as a job of
 * the jobs service, its file kept for 5 minutes and visible to its submitter only.
 */
export function dashboardExportsService(store: Store, options: DashboardExportsOptions) {
  const { db } = store;
  const iso = (ms = 0) => new Date(options.now().getTime() + ms).toISOString();

  async function subjectOf(caller: Caller, deploymentId: number, workbookId: number, renderAs: ExportSubjectInput | null | undefined): Promise<Subject> {
    const tenantId = caller.actor.tenantId;
    if (!renderAs) return { viewer: { userId: caller.actor.userId }, identity: `user:${caller.actor.userId}` };
    caller.access.requireAdmin('render an export as someone else (renderAs)');
    if (renderAs.type === 'USER') {
      if ((renderAs.userId ?? null) === null && (renderAs.email ?? null) === null)
        throw invalid('renderAs of type USER needs a userId or an email.', '/body/renderAs');
      const user =
        renderAs.userId !== null && renderAs.userId !== undefined
          ? await findUserById(db, tenantId, renderAs.userId)
          : await findUserByEmail(db, tenantId, renderAs.email!);
      if (!user || user.deactivated_at !== null)
        throw new ApiError('USER_NOT_FOUND', `The user to render as (${renderAs.userId ?? renderAs.email}) does not exist or is deactivated.`);
      return { viewer: { userId: user.id }, identity: `user:${user.id}` };
    }
    const name = renderAs.embedTenantName?.toLowerCase() ?? null;
    const externalId = renderAs.externalId ?? null;
    if (name === null || externalId === null) throw invalid('renderAs of type EMBED_USER needs an embedTenantName and an externalId.', '/body/renderAs');
    // The same rules as every other write of attribute values: each name once, an attribute of the
    // tenant, a value of its type; names are then spelled as their attribute is.
    const attributes = checkedAttributeList(await listAttributes(db, tenantId), renderAs.userAttributes ?? [], '/body/renderAs/userAttributes').map(
      ({ definition, value }) => ({ name: definition.name, value }),
    );
    if ((await embedShareOf(db, { tenantId, deploymentId }, workbookId, name)) === null) {
      throw new ApiError('FORBIDDEN', `Workbook ${workbookId} is not shared with embed tenant ${name} (or with all embed users).`);
    }
    // The subject's groups, attributes and security context hold for this render only.
    const identity = {
      groups: renderAs.groups ?? [],
      tenantGroups: embedTenantGroups(name, []),
      userAttributes: await effectiveAttributesOf(db, tenantId, attributes),
    };
    return { viewer: { context: embedSecurityContext(identity, renderAs.securityContext ?? {}) }, identity: `embed:${name}:${externalId}` };
  }

  /** The caller's own export in this deployment, unexpired; 404 otherwise (another user's included). */
  async function ownExport(caller: Caller, deploymentId: number, jobId: string): Promise<DashboardExportRow> {
    const row = await findExport(db, caller.actor.tenantId, jobId);
    if (!row || row.deployment_id !== deploymentId || row.submitted_by !== caller.actor.userId) throw notFound(jobId);
    if (row.expires_at <= iso()) {
      await deleteExpired(db, caller.actor.tenantId, iso());
      throw notFound(jobId);
    }
    return row;
  }

  /** The row's status, with a job that ended without writing it (its process died) counted as failed. */
  async function statusOf(row: DashboardExportRow): Promise<{ status: DashboardExportRow['status']; error: string | null }> {
    if ((row.status === 'pending' || row.status === 'processing') && row.job_id !== null) {
      const job = await options.jobs.get(row.tenant_id, row.job_id);
      if (job && (job.state === 'failed' || job.state === 'cancelled')) return { status: 'failed', error: job.error ?? 'The render stopped.' };
    }
    return { status: row.status, error: row.error };
  }

  return {
    /** Reference 8.A.1. */
    async start(caller: Caller, deploymentId: number, input: StartDashboardExportInput): Promise<{ jobId: string; expiresAt: string }> {
      const tenantId = caller.actor.tenantId;
      const byId = input.dashboardId ?? null;
      const byPublicId = input.dashboardPublicId ?? null;
      if ((byId === null) === (byPublicId === null))
        throw invalid('Give exactly one of dashboardId and dashboardPublicId.', byId === null ? '/body/dashboardId' : '/body/dashboardPublicId');
      if (input.layout === 'print' && input.format !== 'pdf') throw invalid('The print layout makes A4 pages: it needs `format: pdf`.', '/body/layout');
      const context = await openWorkspace(db, caller, deploymentId);
      const dashboard = await findInDeployment(db, tenantId, deploymentId, byId !== null ? { dashboardId: byId } : { publicId: byPublicId! });
      if (!dashboard) throw new ApiError('DASHBOARD_NOT_FOUND', `Dashboard ${byId ?? byPublicId} does not exist in deployment ${deploymentId}.`);
      const workbook = await findItem(db, context.scope, 'WORKBOOK', dashboard.workbookId);
      if (!workbook) throw new ApiError('DASHBOARD_NOT_FOUND', `Dashboard ${byId ?? byPublicId} does not exist in deployment ${deploymentId}.`);
      // Rendering a whole dashboard is exporting its data in bulk: full access to the workbook.
      await requireItemAccess(db, context, workbook, 'MANAGE', 'export the dashboard of');
      if (await restrictDataDownload(db, tenantId, caller.snapshot)) {
        throw new ApiError(
          'DATA_DOWNLOAD_RESTRICTED',
          'Data downloads are restricted for this account (app-config restrictDataDownload), so dashboards cannot be exported.',
        );
      }
      const subject = await subjectOf(caller, deploymentId, dashboard.workbookId, input.renderAs);
      const publicId = randomId(16);
      const expiresAt = iso(EXPORT_TTL_MS);
      // Counting and inserting under the tenant's lock: two submissions cannot both take the last place.
      const row = await serialized(store, lockKey.dashboardExports(tenantId), async (trx) => {
        await deleteExpired(trx, tenantId, iso());
        const running = await runningCount(trx, tenantId, subject.identity, iso());
        if (running >= options.concurrentPerIdentity) {
          throw new ApiError(
            'DASHBOARD_EXPORT_LIMIT',
            `${running} exports are already rendering for this identity (at most ${options.concurrentPerIdentity} at once); retry when one has finished.`,
            { headers: { 'retry-after': '5' } },
          );
        }
        const at = iso();
        return insertExport(trx, {
          public_id: publicId,
          tenant_id: tenantId,
          deployment_id: deploymentId,
          dashboard_id: dashboard.id,
          submitted_by: caller.actor.userId,
          identity: subject.identity,
          job_id: null,
          format: input.format,
          status: 'pending',
          error: null,
          content_type: null,
          content: null,
          created_at: at,
          expires_at: expiresAt,
          updated_at: at,
        });
      });
      const payload: ExportJobPayload = {
        exportId: row.id,
        tenant: caller.tenant,
        deploymentId,
        dashboardId: dashboard.id,
        format: input.format,
        layout: input.layout ?? 'screenshot',
        viewer: subject.viewer,
        filters: input.filters ?? null,
        timeGrains: input.timeGrains ?? null,
        memberSwitchers: input.memberSwitchers ?? null,
      };
      try {
        const job = await options.jobs.enqueue(tenantId, EXPORT_JOB, payload);
        await setJob(db, row.id, job.id);
      } catch (error) {
        await markFailed(db, row.id, 'The render could not be queued.', iso());
        throw error;
      }
      return { jobId: publicId, expiresAt };
    },

    /** Reference 8.A.2. */
    async status(caller: Caller, deploymentId: number, jobId: string): Promise<DashboardExportStatus> {
      const row = await ownExport(caller, deploymentId, jobId);
      const { status, error } = await statusOf(row);
      if (status === 'completed') return { status, progress: 100, contentType: row.content_type };
      if (status === 'failed') return { status, progress: null, error };
      return { status, progress: status === 'pending' ? 0 : 50 };
    },

    /** Reference 8.A.3: the file, once rendered. */
    async download(caller: Caller, deploymentId: number, jobId: string): Promise<{ content: Buffer; contentType: string; extension: string }> {
      const row = await ownExport(caller, deploymentId, jobId);
      const { status, error } = await statusOf(row);
      if (status === 'failed')
        throw new ApiError('DASHBOARD_EXPORT_FAILED', `The export failed: ${(error ?? 'unknown error').replace(/\.+$/, '')}. Submit a new export.`);
      if (status !== 'completed' || row.content === null)
        throw new ApiError('DASHBOARD_EXPORT_RENDERING', `The export is still ${status}; poll GET …/dashboard-exports/${jobId} until it is completed.`, {
          headers: { 'retry-after': '1' },
        });
      return {
        content: Buffer.from(row.content),
        contentType: row.content_type ?? (row.format === 'pdf' ? 'application/pdf' : 'image/png'),
        extension: row.format,
      };
    },
  };
}
export type DashboardExportsService = ReturnType<typeof dashboardExportsService>;

function invalid(detail: string, pointer: string): ApiError {
  return new ApiError('VALIDATION_FAILED', detail, { errors: [{ pointer, message: detail }] });
}
