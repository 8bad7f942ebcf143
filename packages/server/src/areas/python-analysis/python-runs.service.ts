import { timestamp, type Clock } from '../../time.js';
import type { Db } from '../../db/tables.js';
import { SandboxBusyError, SandboxClosedError, type PythonSandbox } from '../../python/sandbox.js';
import { ApiError } from '../../shared/problems.js';
import { embedSettings } from '../account/index.js';
import type { DataApiService } from '../data-api/index.js';
import type { EmbedDashboards } from '../embed-sessions/index.js';
import type { EmbedPrincipal } from '../embed-sessions/index.js';
import { PythonRunCache } from './run-cache.js';
import type { EmbedPythonFilteredRunInput, PythonAnalysisFilteredRun } from './python-runs.schemas.js';

/** What a refused burst is told to wait: a run takes milliseconds to seconds. */
const BUSY_RETRY_AFTER_S = 5;

/**
 * A report's Python analysis over an embedded dashboard's filtered SQL (reference 3.7): the code
 * comes from the dashboard's published report snapshot, the rows from the data API as the
 * calling embed user (their row-level rules apply), and the result goes back to the caller only.
 */
export function pythonRunsService(db: Db, dashboards: EmbedDashboards, dataApi: DataApiService, sandbox: PythonSandbox, cache: PythonRunCache, now: Clock) {
  return {
    async run(
      tenant: { id: number; slug: string },
      principal: EmbedPrincipal,
      publicId: string,
      input: EmbedPythonFilteredRunInput,
    ): Promise<PythonAnalysisFilteredRun> {
      // Account-wide, and says nothing about which dashboards exist.
      if (!(await embedSettings(db, principal.tenantId)).pythonAnalysisEnabled) {
        throw new ApiError(
          'PYTHON_ANALYSIS_DISABLED',
          'Python analysis is turned off for this account; an admin turns it on with PUT /api/v1/tenant/embed-settings {"pythonAnalysisEnabled": true}.',
        );
      }
      const dashboard = await dashboards.get(principal, publicId);
      const snapshot = dashboard.reportSnapshots.find((s) => s.id === input.reportVersionId);
      if (snapshot === undefined || snapshot.reportId !== input.reportId) {
        throw new ApiError(
          'FORBIDDEN',
          `Report version ${input.reportVersionId} of report ${input.reportId} is not one of the report snapshots published with dashboard "${publicId}".`,
        );
      }
      const code = snapshot.pythonCode ?? '';
      if (code.trim() === '')
        throw new ApiError(
          'INVALID_OPERATION',
          `Report ${input.reportId} was published with dashboard "${publicId}" without Python code; there is nothing to run.`,
        );

      const { claims } = principal;
      // Everything the rows depend on: the same SQL for another context is another entry.
      const viewer = [
        claims.deployment_id,
        claims.branch,
        claims.embed_tenant,
        claims.embed_user,
        claims.groups,
        claims.tenant_groups,
        claims.user_attributes,
        claims.security_context,
      ];
      const key = PythonRunCache.key({ tenantId: principal.tenantId, reportId: input.reportId, code, sql: input.sqlQuery, viewer });
      const cached = cache.get(key);
      if (cached !== undefined) return cached;

      const { data } = await dataApi.runForEmbed(tenant, principal, { sql: input.sqlQuery });
      const at = timestamp(now);
      const result = await sandbox.run(code, data).catch((error: unknown) => {
        if (error instanceof SandboxBusyError) {
          throw new ApiError('PYTHON_BUSY', `${error.queued} Python runs are waiting already; nothing was run. Try again in a few seconds.`, {
            headers: { 'retry-after': String(BUSY_RETRY_AFTER_S) },
          });
        }
        if (error instanceof SandboxClosedError) {
          throw new ApiError('UNAVAILABLE', 'The server is stopping, and the analysis was stopped with it; nothing was kept. Try again in a few seconds.', {
            headers: { 'retry-after': String(BUSY_RETRY_AFTER_S) },
          });
        }
        throw error;
      });
      const run: PythonAnalysisFilteredRun = {
        at,
        stdout: result.stdout,
        stderr: result.stderr,
        inputRowCount: data.length,
        executionError: result.executionError,
        outputData: result.outputData ?? null,
      };
      if (run.executionError === null) cache.set(key, run);
      return run;
    },
  };
}
export type PythonRunsService = ReturnType<typeof pythonRunsService>;
